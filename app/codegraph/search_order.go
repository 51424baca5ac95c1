package codegraph

import (
	"cmp"
	"slices"
	"strings"
)

// searchHit is a fuzzy match being ranked: the node's position in its
// source, its score (matchScore) and the length of its qualified name.
type searchHit struct {
	pos   int
	score float64
	qlen  int
}

// compareHits orders hits best first: higher score, then shorter
// qualified name, then source order, so every order of equal matches is
// the same on every run and on the graph and its persisted form.
func compareHits(a, b searchHit) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	if c := cmp.Compare(a.qlen, b.qlen); c != 0 {
		return c
	}
	return cmp.Compare(a.pos, b.pos)
}

// bestHits returns the limit best hits (all when limit <= 0), best first.
// With a limit it keeps a sorted window of that many while scanning, so a
// short query matching much of a large project (the search box's "get"
// on a million nodes) costs a pass, not a sort of every match.
func bestHits(hits []searchHit, limit int) []searchHit {
	if limit <= 0 || len(hits) <= limit {
		slices.SortFunc(hits, compareHits)
		return hits
	}
	top := make([]searchHit, 0, limit+1)
	for _, h := range hits {
		if len(top) == limit && compareHits(h, top[limit-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, h, compareHits)
		top = slices.Insert(top, i, h)
		if len(top) > limit {
			top = top[:limit]
		}
	}
	return top
}

// matchScore is a fuzzy match's score for the matched text with bonuses for
// an exact match, a last-component match and a prefix match (lq is the
// lower-cased query); packages come after what they hold on a tie.
func matchScore(fuzzyScore int, text, lq string, isPackage bool) float64 {
	s := float64(fuzzyScore) + matchBonus(text, lq)
	if isPackage {
		s--
	}
	return s
}

// matchBonus is matchScore's bonus: 1000 when text lower-cased is lq, 500
// when it ends in "."+lq or "/"+lq, 100 when it starts with lq. An ASCII
// text is compared in place (no lower-cased copy); it lower-cases to
// ASCII, which a non-ASCII lq never equals.
func matchBonus(text, lq string) float64 {
	if !isASCII(text) {
		return loweredBonus(text, lq)
	}
	n, k := len(text), len(lq)
	switch {
	case n == k && lowerEquals(text, lq):
		return 1000
	case n > k && (text[n-k-1] == '.' || text[n-k-1] == '/') && lowerEquals(text[n-k:], lq):
		return 500
	case n >= k && lowerEquals(text[:k], lq):
		return 100
	}
	return 0
}

// loweredBonus is matchBonus computed on a lower-cased copy of text.
func loweredBonus(text, lq string) float64 {
	f := strings.ToLower(text)
	switch {
	case f == lq:
		return 1000
	case strings.HasSuffix(f, "."+lq) || strings.HasSuffix(f, "/"+lq):
		return 500
	case strings.HasPrefix(f, lq):
		return 100
	}
	return 0
}

// lowerEquals reports whether the ASCII text a, lower-cased, is lq.
func lowerEquals(a, lq string) bool {
	if len(a) != len(lq) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lq[i] {
			return false
		}
	}
	return true
}
