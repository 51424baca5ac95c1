package codegraph

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/sahilm/fuzzy"
)

// The queries a Reader answers, each equal to the Graph method of the same
// name on the graph the file holds (tests compare them).

// Resolve is codegraph.Resolve on the persisted graph. A "path:line" name
// is ErrNeedsGraph (it needs the per-file lists, which only a full load has).
func (r *Reader) Resolve(arg string) (n *Node, err error) {
	defer r.recoverBad(&err, debug.SetPanicOnFault(true))
	if err := r.loadIndex(); err != nil {
		return nil, err
	}
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return nil, fmt.Errorf("empty node name")
	}
	if i, ok := r.pos(arg); ok {
		return r.node(i), nil
	}
	rel := filepath.ToSlash(arg)
	if filepath.IsAbs(arg) {
		if x, err := filepath.Rel(r.root, arg); err == nil {
			rel = filepath.ToSlash(x)
		}
	}
	if i, ok := r.fileNode(rel); ok {
		return r.node(i), nil
	}
	if i := strings.LastIndex(rel, ":"); i > 0 {
		if _, err := strconv.Atoi(rel[i+1:]); err == nil {
			return nil, ErrNeedsGraph
		}
	}
	var byQual, byName []*Node
	for i := 0; i < r.n; i++ {
		if r.field(i, nfQual) == arg {
			byQual = append(byQual, r.node(i))
		} else if r.field(i, nfName) == arg && r.field(i, nfKind) != string(KindFile) {
			byName = append(byName, r.node(i))
		}
	}
	if len(byQual) > 0 {
		return pickNamed(arg, byQual)
	}
	if len(byName) > 0 {
		return pickNamed(arg, byName)
	}
	var bySuffix []*Node
	for i := 0; i < r.n; i++ {
		if q := r.field(i, nfQual); strings.HasSuffix(q, "."+arg) || strings.HasSuffix(q, ":"+arg) {
			bySuffix = append(bySuffix, r.node(i))
		}
	}
	if len(bySuffix) > 0 {
		return pickNamed(arg, bySuffix)
	}
	ms, err := r.Search(arg, 3)
	if err != nil {
		return nil, err
	}
	return nil, noNodeNamed(arg, ms)
}

// readerNames adapts the node records to the fuzzy matcher (names, or
// qualified names and file paths), without copying a string.
type readerNames struct {
	r    *Reader
	qual bool
}

func (s readerNames) String(i int) string {
	if s.qual {
		if s.r.field(i, nfKind) == string(KindFile) {
			return s.r.field(i, nfPath)
		}
		return s.r.field(i, nfQual)
	}
	return s.r.field(i, nfName)
}
func (s readerNames) Len() int { return s.r.n }

// Search is Graph.Search on the persisted graph: the matcher reads names in
// place and only the nodes returned are copied out.
func (r *Reader) Search(query string, limit int) (out []Match, err error) {
	defer r.recoverBad(&err, debug.SetPanicOnFault(true))
	if err := r.loadNodes(); err != nil {
		return nil, err
	}
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, nil
	}
	src := readerNames{r: r, qual: strings.ContainsAny(query, "./")}
	cand := fuzzyCandidates(query, src, nil)
	ms := fuzzy.FindFromNoSort(query, cand)
	lq := strings.ToLower(query)
	hits := make([]searchHit, len(ms))
	for k, m := range ms {
		i := cand.idx[m.Index]
		hits[k] = searchHit{i, matchScore(m.Score, cand.names[m.Index], lq, r.field(i, nfKind) == string(KindPackage)), len(r.field(i, nfQual))}
	}
	hits = bestHits(hits, limit)
	out = make([]Match, len(hits))
	for k, h := range hits {
		out[k] = Match{Node: r.node(h.pos), Score: h.score}
	}
	return out, nil
}

// isDepKind reports whether an edge kind is one of depKinds.
func isDepKind(k string) bool {
	for _, d := range depKinds {
		if string(d) == k {
			return true
		}
	}
	return false
}

// descendants returns node i and every node it contains, transitively (by
// ID position, as Graph.descendants).
func (r *Reader) descendants(i int) []int {
	out := []int{i}
	seen := map[int]bool{i: true} // a damaged file's child lists may loop
	for k := 0; k < len(out); k++ {
		for _, c := range r.row(secChildOff, secChildList, out[k]) {
			if !seen[int(c)] {
				seen[int(c)] = true
				out = append(out, int(c))
			}
		}
	}
	return out
}

// closure is Graph.closure by position.
func (r *Reader) closure(id string, step func(cur int, reach func(int) bool)) ([]*Node, error) {
	if err := r.loadEdges(); err != nil {
		return nil, err
	}
	start, ok := r.pos(id)
	if !ok {
		return nil, nil
	}
	seen := make([]bool, r.n)
	reached := reachFrom(r.descendants(start), func(n int) bool {
		if seen[n] {
			return false
		}
		seen[n] = true
		return true
	}, step)
	out := make([]*Node, 0, len(reached))
	for _, q := range reached {
		out = append(out, r.node(q))
	}
	sortNodes(out)
	return out, nil
}

// reachAll hands node i and everything it contains to reach.
func (r *Reader) reachAll(i int, reach func(int) bool) {
	if !reach(i) {
		return
	}
	for _, d := range r.descendants(i)[1:] {
		reach(d)
	}
}

// RDeps is Graph.RDeps on the persisted graph: it reads the entering-edge
// rows of the nodes it reaches and copies out only the nodes it returns.
func (r *Reader) RDeps(id string) (out []*Node, err error) {
	defer r.recoverBad(&err, debug.SetPanicOnFault(true))
	return r.closure(id, func(cur int, reach func(int) bool) {
		for _, ei := range r.row(secInOff, secInEdges, cur) {
			w := r.ew[int(ei)*edgeWords:]
			if !isDepKind(r.str(w[2])) {
				continue
			}
			if from, _ := r.edgeEnd(w[0]); from >= 0 {
				reach(from)
			}
		}
	})
}

// Deps is Graph.Deps on the persisted graph.
func (r *Reader) Deps(id string) (out []*Node, err error) {
	defer r.recoverBad(&err, debug.SetPanicOnFault(true))
	return r.closure(id, func(cur int, reach func(int) bool) {
		for _, ei := range r.row(secOutOff, secOutEdges, cur) {
			w := r.ew[int(ei)*edgeWords:]
			if !isDepKind(r.str(w[2])) {
				continue
			}
			to, _ := r.edgeEnd(w[1])
			if to < 0 {
				continue
			}
			r.reachAll(to, reach)
			if r.field(to, nfKind) == string(KindMethod) {
				if parent := r.field(to, nfParent); parent != "" {
					if p, ok := r.pos(parent); ok && r.field(p, nfKind) == string(KindClass) {
						r.reachAll(p, reach)
					}
				}
			}
		}
	})
}

// Out is Graph.Out(id) (all kinds) on the persisted graph.
func (r *Reader) Out(id string) ([]Edge, error) { return r.edgesOf(id, secOutOff, secOutEdges) }

// In is Graph.In(id) (all kinds) on the persisted graph.
func (r *Reader) In(id string) ([]Edge, error) { return r.edgesOf(id, secInOff, secInEdges) }

func (r *Reader) edgesOf(id string, offID, listID int) (out []Edge, err error) {
	defer r.recoverBad(&err, debug.SetPanicOnFault(true))
	if err := r.loadEdges(); err != nil {
		return nil, err
	}
	i, ok := r.pos(id)
	if !ok {
		return nil, ErrNeedsGraph // an ID that is not a node: only the full index lists its edges
	}
	for _, ei := range r.row(offID, listID, i) {
		out = append(out, r.edge(ei))
	}
	return out, nil
}

// GlobalRank returns the limit (all when limit <= 0) best nodes by global
// PageRank, as Project.GlobalRank, from the persisted ranks and their
// persisted order: nothing is computed or sorted. ErrNeedsGraph when the
// file holds no ranks.
func (r *Reader) GlobalRank(limit int) (out []Ranked, err error) {
	defer r.recoverBad(&err, debug.SetPanicOnFault(true))
	if err := r.loadNodes(); err != nil {
		return nil, err
	}
	rb, err := r.secs.section(secRanks)
	if err != nil {
		return nil, err
	}
	order, err := r.secs.words(secRankOrder)
	if err != nil {
		return nil, err
	}
	if len(rb) == 0 || len(rb) != r.n*8 || len(order) != r.n {
		return nil, ErrNeedsGraph
	}
	ranks := f64View(rb)
	if limit > 0 && len(order) > limit {
		order = order[:limit]
	}
	out = make([]Ranked, len(order))
	for k, i := range order {
		out[k] = Ranked{Node: r.node(int(i)), Score: ranks[i]}
	}
	return out, nil
}
