package ui

import (
	"strings"
	"unicode"
	"unicode/utf8"
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

// maySpell reports whether lq (a lower-cased query) can be spelt from name
// at all: a word-start match uses the query's letters in order, so they must
// appear in order in the lower-cased name. It allocates nothing, so the
// search box calls it before splitting a name into words (on a 315,000-node
// project nearly every name fails here). Non-ASCII text is left to
// wordStartMatch.
func maySpell(lq, name string) bool {
	j := 0
	for i := 0; i < len(name) && j < len(lq); i++ {
		c := name[i]
		if c >= utf8.RuneSelf || lq[j] >= utf8.RuneSelf {
			return true
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c == lq[j] {
			j++
		}
	}
	return j == len(lq)
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
