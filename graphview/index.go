package graphview

import (
	"iter"
	"sort"

	"codeloom/app/codegraph"
)

// Index is a code graph snapshot indexed for building views. Build one per
// graph snapshot and reuse it for every view of that snapshot; it is read
// only once built, so views may be built from it on several goroutines.
//
// It copies nothing of the graph: nodes and edges stay the source's slices,
// and everything derived is int32 positions into them. Adjacency and
// containment are compressed sparse rows (the entries of node i are
// list[off[i]:off[i+1]]). On pyenv's 3.5 M-line tree the maps of copied
// edges and strings this replaced cost ~0.35 GB.
type Index struct {
	all   []*codegraph.Node // the source's nodes, in its order (nil entries skipped everywhere)
	edges []codegraph.Edge  // the source's edges
	pos   map[string]int32  // node ID → position in all
	order []*codegraph.Node // stable order: by path, line, id

	outOff, outList []int32 // edges leaving node i: indexes into edges, in edge order
	inOff, inList   []int32 // edges entering node i
	kidOff, kidList []int32 // nodes directly inside node i: positions in all
	fileOf          []int32 // the file node containing node i (itself for a file), -1 for none
}

// NewIndex indexes src.
func NewIndex(src Source) *Index {
	nodes := src.Nodes()
	ix := &Index{
		all:   nodes,
		edges: src.Edges(),
		pos:   make(map[string]int32, len(nodes)),
		order: make([]*codegraph.Node, 0, len(nodes)),
	}
	for i, n := range nodes {
		if n == nil {
			continue
		}
		ix.pos[n.ID] = int32(i) // a repeated ID: the last one wins
		ix.order = append(ix.order, n)
	}
	sort.Slice(ix.order, func(i, j int) bool {
		a, b := ix.order[i], ix.order[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.StartLine != b.StartLine {
			return a.StartLine < b.StartLine
		}
		return a.ID < b.ID
	})
	ix.buildAdjacency()
	ix.buildChildren()
	ix.fileOf = make([]int32, len(nodes))
	for i := range ix.fileOf {
		ix.fileOf[i] = -1
	}
	for i, n := range nodes {
		if n != nil {
			ix.fileOf[i] = ix.findFilePos(int32(i))
		}
	}
	return ix
}

// endpoints returns the positions of e's ends; ok is false when either is
// not a node of the graph (such edges are left out of every view).
func (ix *Index) endpoints(e *codegraph.Edge) (from, to int32, ok bool) {
	from, okf := ix.pos[e.From]
	to, okt := ix.pos[e.To]
	return from, to, okf && okt
}

// buildAdjacency fills the out- and in-edge rows, counting first so each
// list is allocated once at its final size.
func (ix *Index) buildAdjacency() {
	n := len(ix.all)
	ix.outOff = make([]int32, n+1)
	ix.inOff = make([]int32, n+1)
	kept := 0
	for i := range ix.edges {
		from, to, ok := ix.endpoints(&ix.edges[i])
		if !ok {
			continue
		}
		ix.outOff[from+1]++
		ix.inOff[to+1]++
		kept++
	}
	for i := 0; i < n; i++ {
		ix.outOff[i+1] += ix.outOff[i]
		ix.inOff[i+1] += ix.inOff[i]
	}
	ix.outList = make([]int32, kept)
	ix.inList = make([]int32, kept)
	outAt := make([]int32, n)
	inAt := make([]int32, n)
	copy(outAt, ix.outOff[:n])
	copy(inAt, ix.inOff[:n])
	for i := range ix.edges {
		from, to, ok := ix.endpoints(&ix.edges[i])
		if !ok {
			continue
		}
		ix.outList[outAt[from]] = int32(i)
		outAt[from]++
		ix.inList[inAt[to]] = int32(i)
		inAt[to]++
	}
}

// buildChildren fills the containment rows: first the nodes naming the node
// as Parent (in view order), then the targets of its contains edges that name
// no Parent (in edge order, each once).
func (ix *Index) buildChildren() {
	n := len(ix.all)
	ix.kidOff = make([]int32, n+1)
	containsChild := func(e *codegraph.Edge) (from, to int32, ok bool) {
		if e.Kind != codegraph.EdgeContains {
			return 0, 0, false
		}
		from, to, ok = ix.endpoints(e)
		return from, to, ok && ix.all[to].Parent == ""
	}
	for _, c := range ix.order {
		if p, ok := ix.pos[c.Parent]; ok && c.Parent != "" {
			ix.kidOff[p+1]++
		}
	}
	for i := range ix.edges {
		if from, _, ok := containsChild(&ix.edges[i]); ok {
			ix.kidOff[from+1]++ // an upper bound: repeated edges are dropped below
		}
	}
	for i := 0; i < n; i++ {
		ix.kidOff[i+1] += ix.kidOff[i]
	}
	list := make([]int32, ix.kidOff[n])
	at := make([]int32, n)
	copy(at, ix.kidOff[:n])
	for _, c := range ix.order {
		if p, ok := ix.pos[c.Parent]; ok && c.Parent != "" {
			list[at[p]] = ix.pos[c.ID]
			at[p]++
		}
	}
	for i := range ix.edges {
		from, to, ok := containsChild(&ix.edges[i])
		if !ok {
			continue
		}
		dup := false
		for _, k := range list[ix.kidOff[from]:at[from]] {
			if k == to {
				dup = true
				break
			}
		}
		if !dup {
			list[at[from]] = to
			at[from]++
		}
	}
	// Close the gaps the dropped repeats left, so the rows are contiguous.
	w := int32(0)
	for i := 0; i < n; i++ {
		start, end := ix.kidOff[i], at[i]
		ix.kidOff[i] = w
		w += int32(copy(list[w:], list[start:end]))
	}
	ix.kidOff[n] = w
	ix.kidList = list[:w:w]
	if int(w) < cap(list)/2 {
		ix.kidList = append([]int32(nil), list[:w]...)
	}
}

// Len is the number of nodes in the indexed graph.
func (ix *Index) Len() int { return len(ix.order) }

// Node returns the code graph node with this ID.
func (ix *Index) Node(id string) (*codegraph.Node, bool) {
	n := ix.node(id)
	return n, n != nil
}

// node returns the node with this ID, nil when there is none.
func (ix *Index) node(id string) *codegraph.Node {
	if p, ok := ix.pos[id]; ok {
		return ix.all[p]
	}
	return nil
}

// rows yields the edges listed in list[off[p]:off[p+1]] for id's position p.
func (ix *Index) rows(id string, off, list []int32) iter.Seq[*codegraph.Edge] {
	return func(yield func(*codegraph.Edge) bool) {
		p, ok := ix.pos[id]
		if !ok {
			return
		}
		for _, ei := range list[off[p]:off[p+1]] {
			if !yield(&ix.edges[ei]) {
				return
			}
		}
	}
}

// outEdges yields the edges leaving id, in the graph's edge order. The
// edges are the graph's own: read only.
func (ix *Index) outEdges(id string) iter.Seq[*codegraph.Edge] {
	return ix.rows(id, ix.outOff, ix.outList)
}

// inEdges yields the edges entering id, in the graph's edge order.
func (ix *Index) inEdges(id string) iter.Seq[*codegraph.Edge] {
	return ix.rows(id, ix.inOff, ix.inList)
}

// children yields the nodes directly inside id.
func (ix *Index) children(id string) iter.Seq[*codegraph.Node] {
	return func(yield func(*codegraph.Node) bool) {
		p, ok := ix.pos[id]
		if !ok {
			return
		}
		for _, k := range ix.kidList[ix.kidOff[p]:ix.kidOff[p+1]] {
			if !yield(ix.all[k]) {
				return
			}
		}
	}
}

// parentOf returns the containing node's ID: the Parent field, else the
// source of a contains edge.
func (ix *Index) parentOf(id string) string {
	n := ix.node(id)
	if n == nil {
		return ""
	}
	if n.Parent != "" {
		return n.Parent
	}
	for e := range ix.inEdges(id) {
		if e.Kind == codegraph.EdgeContains {
			return e.From
		}
	}
	return ""
}

// FileOf returns the ID of the file node that contains id (id itself for a
// file), or "" when there is none.
func (ix *Index) FileOf(id string) string {
	if p, ok := ix.pos[id]; ok {
		if f := ix.fileOf[p]; f >= 0 {
			return ix.all[f].ID
		}
		return ""
	}
	return ""
}

// findFilePos walks up from node p to its file node's position (-1 for none).
func (ix *Index) findFilePos(p int32) int32 {
	for cur, i := ix.all[p].ID, 0; cur != "" && i < 64; cur, i = ix.parentOf(cur), i+1 {
		if q, ok := ix.pos[cur]; ok && ix.all[q].Kind == codegraph.KindFile {
			return q
		}
	}
	return -1
}
