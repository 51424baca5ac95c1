package codegraph

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"sort"
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

// candidateNames is the part of a fuzzy.Source that can match a query:
// names[k] is the name of source entry idx[k], read once.
type candidateNames struct {
	names []string
	idx   []int
}

func (c candidateNames) String(i int) string { return c.names[i] }
func (c candidateNames) Len() int            { return len(c.names) }

// fuzzyCandidates keeps the entries of src that fuzzy.FindFrom could
// match: its matches are the query's runes found in order in the name
// (each compared case-folded), so a name that does not hold the query's
// bytes in order, ASCII letters compared case-insensitively, cannot match.
// A name with a non-ASCII byte (a rune that may fold to an ASCII letter,
// such as the Kelvin sign) and every name of a non-ASCII query are kept.
// The matcher scores each name on its own and keeps the source's order, so
// its answer on the candidates is its answer on src (positions mapped
// through idx).
func fuzzyCandidates(query string, src fuzzy.Source) candidateNames {
	n := src.Len()
	var c candidateNames
	ascii := true
	for k := 0; k < len(query); k++ {
		if query[k] >= utf8RuneSelf {
			ascii = false
			break
		}
	}
	for i := 0; i < n; i++ {
		s := src.String(i)
		if ascii && !HoldsInOrder(s, query) {
			continue
		}
		c.names = append(c.names, s)
		c.idx = append(c.idx, i)
	}
	return c
}

// utf8RuneSelf is utf8.RuneSelf: bytes below it are one-byte runes.
const utf8RuneSelf = 0x80

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// HoldsInOrder reports whether name holds the bytes of query in order,
// ASCII letters compared case-insensitively: a test that every match of a
// matcher spelling the query's letters in order (fuzzy search, word-start
// search) passes, made without allocating, so searches over every node run
// it before the matcher. True as soon as either holds a non-ASCII byte (a
// rune that may fold to an ASCII letter, such as the Kelvin sign).
func HoldsInOrder(name, query string) bool {
	k := 0
	for j := 0; j < len(name) && k < len(query); j++ {
		b, q := name[j], query[k]
		if b >= utf8RuneSelf || q >= utf8RuneSelf {
			return true
		}
		if lowerASCII(b) == lowerASCII(q) {
			k++
		}
	}
	return k == len(query)
}

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
	cand := fuzzyCandidates(query, src)
	ms := fuzzy.FindFrom(query, cand)
	lq := strings.ToLower(query)
	type hit struct {
		i     int
		score float64
		qlen  int
	}
	hits := make([]hit, 0, len(ms))
	for _, m := range ms {
		i := cand.idx[m.Index]
		s := matchScore(m.Score, cand.names[m.Index], lq, r.field(i, nfKind) == string(KindPackage))
		hits = append(hits, hit{i, s, len(r.field(i, nfQual))})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].qlen < hits[j].qlen
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	out = make([]Match, len(hits))
	for k, h := range hits {
		out[k] = Match{Node: r.node(h.i), Score: h.score}
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
	for k := 0; k < len(out); k++ {
		for _, c := range r.row(secChildOff, secChildList, out[k]) {
			out = append(out, int(c))
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
