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
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return nameWordsRunes(s)
		}
	}
	var words []string
	start := 0
	flush := func(end int) {
		if end > start {
			words = append(words, strings.ToLower(s[start:end]))
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '_' || c == '.' || c == '-' || c == '/' || c == ' ' || c == '(' || c == ')':
			flush(i)
			start = i + 1
		case isUpperASCII(c) && i > 0 && (isLowerASCII(s[i-1]) || (i+1 < len(s) && isLowerASCII(s[i+1]) && isUpperASCII(s[i-1]))):
			flush(i)
			start = i
		}
	}
	flush(len(s))
	return words
}

func isUpperASCII(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLowerASCII(c byte) bool { return 'a' <= c && c <= 'z' }

// nameWordsRunes is nameWords for a name with a non-ASCII rune, splitting
// at Unicode case changes; an ASCII name gives the same words from both
// (nameWords slices the name instead of copying runes).
func nameWordsRunes(s string) []string {
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
