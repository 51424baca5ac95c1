package codegraph

import (
	"math"
	"sort"
	"strings"

	"github.com/sahilm/fuzzy"
)

// rankWeights are the edge weights of the importance ranking: references
// carry importance to what they reference; a member passes some of its
// importance to its container (so a class whose methods are used ranks).
var rankWeights = map[EdgeKind]float64{
	EdgeCalls: 1, EdgeUses: 1, EdgeInherits: 1, EdgeImports: 0.5, EdgeRequires: 0.5,
	EdgeDispatches: 0.5, EdgeImplements: 0.5,
}

// Rank returns every node ordered by PageRank over reference edges (damping
// 0.85). With focus node IDs, the random jump lands only on the focus nodes
// (personalised PageRank), ranking what matters around them.
func (g *Graph) Rank(focus []string) []Ranked {
	if len(g.nodes) == 0 {
		return nil
	}
	pr := g.rankScores(focus)
	out := make([]Ranked, len(g.nodes))
	for i, nd := range g.nodes {
		out[i] = Ranked{Node: nd, Score: pr[i]}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// rankScores is Rank's PageRank score of every node, by node index (the
// graph has at least one node).
func (g *Graph) rankScores(focus []string) []float64 {
	n := len(g.nodes)
	idx := g.byID // node ID → position
	type arc struct {
		to int
		w  float64
	}
	outs := make([][]arc, n)
	outW := make([]float64, n)
	add := func(from, to int, w float64) {
		outs[from] = append(outs[from], arc{to, w})
		outW[from] += w
	}
	for _, e := range g.Edges() {
		f, ok1 := idx[e.From]
		t, ok2 := idx[e.To]
		if !ok1 || !ok2 {
			continue
		}
		if e.Kind == EdgeContains {
			add(int(t), int(f), 0.3) // member → container
			continue
		}
		if w := rankWeights[e.Kind]; w > 0 {
			add(int(f), int(t), w)
		}
	}
	tele := make([]float64, n)
	var focusN int
	for _, id := range focus {
		if i, ok := idx[id]; ok {
			tele[i] = 1
			focusN++
		}
	}
	if focusN == 0 {
		for i := range tele {
			tele[i] = 1 / float64(n)
		}
	} else {
		for i := range tele {
			tele[i] /= float64(focusN)
		}
	}
	const d = 0.85
	pr := append([]float64(nil), tele...)
	next := make([]float64, n)
	for iter := 0; iter < 100; iter++ {
		dangling := 0.0
		for i := range next {
			next[i] = 0
		}
		for i, as := range outs {
			if outW[i] == 0 {
				dangling += pr[i]
				continue
			}
			share := pr[i] / outW[i]
			for _, a := range as {
				next[a.to] += d * share * a.w
			}
		}
		diff := 0.0
		for i := range next {
			next[i] += (1-d)*tele[i] + d*dangling*tele[i]
			diff += math.Abs(next[i] - pr[i])
		}
		pr, next = next, pr
		if diff < 1e-9 {
			break
		}
	}
	return pr
}

// searchSource adapts nodes to the fuzzy matcher.
type searchSource []*Node

func (s searchSource) String(i int) string { return s[i].Name }
func (s searchSource) Len() int            { return len(s) }

// Search finds nodes whose name fuzzily matches query (case-insensitive
// subsequence, scored by sahilm/fuzzy with bonuses for exact and prefix
// matches); a query containing "." or "/" is matched against qualified
// names or paths. At most limit results (all when limit <= 0), best first.
func (g *Graph) Search(query string, limit int) []Match {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil
	}
	var src fuzzy.Source = searchSource(g.nodes)
	if strings.ContainsAny(query, "./") {
		src = qualSource(g.nodes)
	}
	cand := fuzzyCandidates(query, src)
	ms := fuzzy.FindFrom(query, cand)
	lq := strings.ToLower(query)
	out := make([]Match, 0, len(ms))
	for _, m := range ms {
		nd := g.nodes[cand.idx[m.Index]]
		out = append(out, Match{Node: nd, Score: matchScore(m.Score, cand.names[m.Index], lq, nd.Kind == KindPackage)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return len(out[i].Node.QualName) < len(out[j].Node.QualName)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// matchScore is a fuzzy match's score for the matched text with bonuses for
// an exact match, a last-component match and a prefix match (lq is the
// lower-cased query); packages come after what they hold on a tie.
func matchScore(fuzzyScore int, text, lq string, isPackage bool) float64 {
	s := float64(fuzzyScore)
	f := strings.ToLower(text)
	switch {
	case f == lq:
		s += 1000
	case strings.HasSuffix(f, "."+lq) || strings.HasSuffix(f, "/"+lq):
		s += 500
	case strings.HasPrefix(f, lq):
		s += 100
	}
	if isPackage {
		s--
	}
	return s
}

// qualSource adapts nodes to the fuzzy matcher by qualified name (path for
// files).
type qualSource []*Node

func (s qualSource) String(i int) string {
	if s[i].Kind == KindFile {
		return s[i].Path
	}
	return s[i].QualName
}
func (s qualSource) Len() int { return len(s) }
