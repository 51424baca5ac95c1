package codegraph

import (
	"math"
	"slices"
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
	return g.rankArcs().scores(g.byID, focus)
}

// rankArcs are a graph's ranking arcs in compressed rows: the arcs leaving
// node i are to[off[i]:off[i+1]] with weights ws[wk[...]], in edge order
// (the order in which the iteration adds them up, so the scores do not
// depend on how the rows were made). Two graphs with equal arcs and node
// counts have bit-identical global ranks, which lets the snapshot writer
// reuse the last ranks after an edit that changed no reference
// (sameArcs).
type rankArcs struct {
	n    int
	off  []int32
	to   []int32
	wk   []uint8   // index into ws
	ws   []float64 // the distinct weights
	outW []float64 // sum of the weights of node i's arcs, added in row order
}

// rankWeight returns the ranking weight of an edge kind (rankWeights), or
// 0 when it carries none.
func rankWeight(k EdgeKind) float64 { return rankWeights[k] }

// containsWeight is the weight of the arc from a member to its container.
const containsWeight = 0.3

// edgeEnds returns the positions (Graph.byID's, -1 when not a node) of
// both ends of every edge of the flat graph g, read off its rows instead
// of looking each ID up.
func edgeEnds(g *Graph) (from, to []int32) {
	g.index()
	a := g.adj
	from = make([]int32, len(g.edges))
	to = make([]int32, len(g.edges))
	for i := range from {
		from[i], to[i] = -1, -1
	}
	for v := 0; v+1 < len(a.outOff); v++ {
		for _, e := range a.outEdges[a.outOff[v]:a.outOff[v+1]] {
			from[e] = int32(v)
		}
		for _, e := range a.inEdges[a.inOff[v]:a.inOff[v+1]] {
			to[e] = int32(v)
		}
	}
	return from, to
}

// rankArcs makes the ranking arcs of g: references carry importance to
// what they reference (rankWeights), a member to its container
// (containsWeight); edges with an end that is not a node carry none.
func (g *Graph) rankArcs() *rankArcs {
	g = g.flatGraph()
	n := len(g.nodes)
	from, to := edgeEnds(g)
	ra := &rankArcs{n: n, off: make([]int32, n+2), outW: make([]float64, n)}
	// Per edge: its source and weight index (-1: no arc); kinds are few,
	// so the last kind's weight is kept.
	src := from // reused in place: from[i] becomes edge i's arc source
	wk := make([]uint8, len(g.edges))
	var lastKind EdgeKind
	lastW, haveLast := -1, false
	widx := func(w float64) int {
		for i, x := range ra.ws {
			if x == w {
				return i
			}
		}
		ra.ws = append(ra.ws, w)
		return len(ra.ws) - 1
	}
	for i, e := range g.edges {
		f, t := from[i], to[i]
		if f < 0 || t < 0 {
			src[i] = -1
			continue
		}
		if e.Kind == EdgeContains {
			src[i], to[i] = t, f
			wk[i] = uint8(widx(containsWeight))
			ra.off[t+2]++
			continue
		}
		if !haveLast || e.Kind != lastKind {
			lastKind, haveLast, lastW = e.Kind, true, -1
			if w := rankWeight(e.Kind); w > 0 {
				lastW = widx(w)
			}
		}
		if lastW < 0 {
			src[i] = -1
			continue
		}
		wk[i] = uint8(lastW)
		ra.off[f+2]++
	}
	for i := 2; i < n+2; i++ {
		ra.off[i] += ra.off[i-1]
	}
	m := ra.off[n+1]
	ra.to = make([]int32, m)
	ra.wk = make([]uint8, m)
	for i := range g.edges {
		s := src[i]
		if s < 0 {
			continue
		}
		j := ra.off[s+1]
		ra.to[j], ra.wk[j] = to[i], wk[i]
		ra.off[s+1]++
		ra.outW[s] += ra.ws[wk[i]]
	}
	ra.off = ra.off[:n+1]
	return ra
}

// sameArcs reports whether a and b are the same arcs over the same number
// of nodes (then their global ranks are bit-identical).
func sameArcs(a, b *rankArcs) bool {
	if a == nil || b == nil || a.n != b.n || len(a.to) != len(b.to) || len(a.ws) != len(b.ws) {
		return false
	}
	for i := range a.ws {
		if math.Float64bits(a.ws[i]) != math.Float64bits(b.ws[i]) {
			return false
		}
	}
	return slices.Equal(a.off, b.off) && slices.Equal(a.to, b.to) && slices.Equal(a.wk, b.wk)
}

// scores runs PageRank (damping 0.85) over the arcs; with focus node IDs
// (looked up in idx), the random jump lands only on them.
func (ra *rankArcs) scores(idx map[string]int32, focus []string) []float64 {
	n := ra.n
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
	off, to, wk, ws, outW := ra.off, ra.to, ra.wk, ra.ws, ra.outW
	for iter := 0; iter < 100; iter++ {
		dangling := 0.0
		for i := range next {
			next[i] = 0
		}
		for i := 0; i < n; i++ {
			if outW[i] == 0 {
				dangling += pr[i]
				continue
			}
			share := pr[i] / outW[i]
			for j := off[i]; j < off[i+1]; j++ {
				next[to[j]] += d * share * ws[wk[j]]
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
	var src fuzzy.Source = qualSource(g.nodes)
	var masks []uint32 // byte classes of names only
	if !strings.ContainsAny(query, "./") {
		src, masks = searchSource(g.nodes), g.nameClasses()
	}
	cand := fuzzyCandidates(query, src, masks)
	ms := fuzzy.FindFromNoSort(query, cand)
	lq := strings.ToLower(query)
	hits := make([]searchHit, len(ms))
	for k, m := range ms {
		i := cand.idx[m.Index]
		nd := g.nodes[i]
		hits[k] = searchHit{i, matchScore(m.Score, cand.names[m.Index], lq, nd.Kind == KindPackage), len(nd.QualName)}
	}
	hits = bestHits(hits, limit)
	out := make([]Match, len(hits))
	for k, h := range hits {
		out[k] = Match{Node: g.nodes[h.pos], Score: h.score}
	}
	return out
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
