package codegraph

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// bestHits with a limit is the first limit hits of the full sort, on hits
// with many ties in score and qualified-name length (so the source-order
// tie-break decides), for every limit from 1 past the number of hits.
func TestBestHitsIsPrefixOfFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		n := r.IntN(60)
		hits := make([]searchHit, n)
		for i := range hits {
			hits[i] = searchHit{pos: i, score: float64(r.IntN(4) * 100), qlen: r.IntN(3)}
		}
		r.Shuffle(n, func(i, j int) { hits[i], hits[j] = hits[j], hits[i] })
		full := slices.Clone(hits)
		slices.SortStableFunc(full, compareHits)
		for i := 1; i < len(full); i++ {
			if compareHits(full[i-1], full[i]) >= 0 {
				t.Fatalf("compareHits is not a strict order: %+v then %+v", full[i-1], full[i])
			}
		}
		for limit := 0; limit <= n+1; limit++ {
			want := full
			if limit > 0 && limit < n {
				want = full[:limit]
			}
			if got := bestHits(slices.Clone(hits), limit); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("round %d, limit %d: got %+v, want %+v", round, limit, got, want)
			}
		}
	}
}

// matchBonus compares ASCII names in place; it gives what comparing a
// lower-cased copy gives (loweredBonus), for ASCII and non-ASCII names and
// queries.
func TestMatchBonusAgreesWithLowerCasing(t *testing.T) {
	names := []string{"get", "GET", "Get", "getattr", "dict.get", "a/get", "a/b.Get", "xget", "x.get.y", ".get", "/get", "ge",
		"", "naïve.get", "Kelvin\u212a", "\u212aey.get", "ſet", "set", "日本.get", "a.GET_x"}
	queries := []string{"get", "Get", "ge", "g", "set", "naïve", "\u212a", "k", "key", "日本", "", "a.get", "get_x"}
	for _, text := range names {
		for _, q := range queries {
			lq := strings.ToLower(q)
			if got, want := matchBonus(text, lq), loweredBonus(text, lq); got != want {
				t.Errorf("matchBonus(%q, %q) = %v, lower-casing gives %v", text, lq, got, want)
			}
		}
	}
}
