package ui

import (
	"strings"
	"unicode"
)

// nameWords splits an identifier into lower-case words at underscores,
// dots, dashes, slashes and camelCase humps: "store_json" → [store json],
// "StoreJSON" → [store json].
func nameWords(s string) []string {
	var words []string
	var cur []rune
	rs := []rune(s)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case r == '_' || r == '.' || r == '-' || r == '/' || r == ' ' || r == '(' || r == ')':
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

// wordStartMatch reports whether query can be spelt by prefixes of the
// name's words, in order, skipping words ("storjson" matches store_json,
// "ltot" matches line_total), and scores the match: higher when fewer words
// are skipped and more of each word is used. 0 means no match.
func wordStartMatch(query, name string) int {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		return 0
	}
	words := nameWords(name)
	best := 0
	var try func(q string, wi, score int)
	try = func(q string, wi, score int) {
		if q == "" {
			// Fewer unused words is better.
			s := score*4 - (len(words) - wi)
			if s > best {
				best = s
			}
			return
		}
		for j := wi; j < len(words); j++ {
			w := words[j]
			for k := min(len(q), len(w)); k >= 1; k-- {
				if q[:k] == w[:k] {
					try(q[k:], j+1, score+k-(j-wi))
				}
			}
		}
	}
	try(q, 0, 1)
	if best <= 0 {
		return 0
	}
	return best
}
