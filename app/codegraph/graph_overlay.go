package codegraph

// This file holds the edge storage that lets a one-file update share the
// unchanged edges with the previous snapshot instead of copying them.
//
// A graph's edges are laid out in segments, in the order assemble lists
// them: one segment per file (sorted by path: its contains edges, base
// class edges and references), then the requires edges, then the Go
// implements and dispatches edges. A flat graph (what assemble and the
// persisted form make) holds them in one slice, Graph.edges, with its
// compressed rows (adjacency). An update that keeps every node where it was
// (assemblePatch) makes an overlay graph instead: the flat base graph's
// edges with some segments replaced. The base's slice and rows are shared,
// never written; the overlay holds only the replaced segments and rows over
// their edges. Reading an edge by its index, or a node's edges in order,
// maps base positions to this graph's order (a binary search over the
// segment table), so every read gives what the flat graph of the same
// edges gives. The overlay is compacted into a flat graph when it has
// grown (assemblePatch, overlayMax) and whenever the whole edge list is
// asked for (Edges, the snapshot writer, Rank); the next update then
// starts from that flat graph, and the compacted overlay reads from it and
// lets its base go. The lookup maps (byFile, children, ...) of an overlay
// graph are layers over the base's in the same way (mapLayer).

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// edgeOverlay is a graph's edge list as a flat base graph's with some
// segments replaced (see the file comment).
type edgeOverlay struct {
	// The base graph and the map layers; cleared once the overlay is
	// compacted (flat is set first), so that the base can go: reads then
	// go to flat (view).
	src       atomic.Pointer[overlaySrc]
	baseStart []int32          // segment s of the base is base.edges[baseStart[s]:baseStart[s+1]]
	start     []int32          // segment s of this graph is at [start[s], start[s+1]) in its edge order
	repl      map[int32][]Edge // replaced segments, by segment number
	replSegs  []int32          // keys of repl, ascending
	replEdges int              // edges in repl
	// Rows over the replaced segments' edges: by node position, the
	// edges' indexes in this graph's order, ascending; by ID for endpoints
	// that are not nodes.
	out, in           map[int32][]int32
	extraOut, extraIn map[string][]int32

	flatOnce sync.Once
	flat     atomic.Pointer[Graph] // the compacted graph, once made
}

// overlaySrc is what an overlay reads besides its own segments.
type overlaySrc struct {
	base *Graph     // flat (ov == nil); its edges and rows are shared
	lay  *mapLayers // the lookup maps (Graph's map fields are nil)
}

// view returns the overlay's base and layers, or, once it is compacted,
// the flat graph.
func (ov *edgeOverlay) view() (*overlaySrc, *Graph) {
	if s := ov.src.Load(); s != nil {
		return s, nil
	}
	return nil, ov.flat.Load()
}

// overlayMax is how many replaced edges an overlay may hold before an
// update compacts it: a sixteenth of the base, at least 64k, so that
// compaction (a copy of every edge) is rare against the edits it follows.
func overlayMax(baseEdges int) int { return max(baseEdges/16, 1<<16) }

// numEdges returns the number of edges of g.
func (g *Graph) numEdges() int {
	if ov := g.ov; ov != nil {
		return int(ov.start[len(ov.start)-1])
	}
	return len(g.edges)
}

// segOf returns the segment holding position i of a segment table.
func segOf(start []int32, i int32) int32 {
	return int32(sort.Search(len(start)-1, func(s int) bool { return start[s+1] > i }))
}

// edgeAt returns the edge at index i of g's edge order.
func (g *Graph) edgeAt(i int32) Edge {
	ov := g.ov
	if ov == nil {
		return g.edges[i]
	}
	src, f := ov.view()
	if f != nil {
		return f.edges[i]
	}
	s := segOf(ov.start, i)
	if seg, ok := ov.repl[s]; ok {
		return seg[i-ov.start[s]]
	}
	return src.base.edges[ov.baseStart[s]+i-ov.start[s]]
}

// rows returns the edges of one node (base row and overlay row) as indexes
// in g's edge order, ascending: the base row's edges outside replaced
// segments, moved to their place, merged with the overlay's.
func (ov *edgeOverlay) rows(baseRow, own []int32) []int32 {
	r := make([]int32, 0, len(baseRow)+len(own))
	k := 0
	for _, bi := range baseRow {
		s := segOf(ov.baseStart, bi)
		if _, gone := ov.repl[s]; gone {
			continue
		}
		i := ov.start[s] + bi - ov.baseStart[s]
		for k < len(own) && own[k] < i {
			r = append(r, own[k])
			k++
		}
		r = append(r, i)
	}
	return append(r, own[k:]...)
}

// overlayIdx returns the indexes of the edges leaving (out) or entering id
// in an overlay graph.
func (g *Graph) overlayIdx(id string, out bool) []int32 {
	ov := g.ov
	src, f := ov.view()
	if f != nil {
		if out {
			return f.outIdx(id)
		}
		return f.inIdx(id)
	}
	var baseRow []int32
	if out {
		baseRow = src.base.outIdx(id)
	} else {
		baseRow = src.base.inIdx(id)
	}
	var own []int32
	if i, ok := g.byID[id]; ok {
		if out {
			own = ov.out[i]
		} else {
			own = ov.in[i]
		}
	} else if out {
		own = ov.extraOut[id]
	} else {
		own = ov.extraIn[id]
	}
	if len(own) == 0 && len(baseRow) == 0 {
		return nil
	}
	return ov.rows(baseRow, own)
}

// newOverlay makes the edge storage of a graph whose nodes are base's (at
// the same positions, byID) and whose segments are base's with repl in
// place of some. baseStart is base's segment table.
func newOverlay(base *Graph, lay *mapLayers, byID map[string]int32, baseStart []int32, repl map[int32][]Edge) *edgeOverlay {
	ov := &edgeOverlay{baseStart: baseStart, repl: repl,
		start: make([]int32, len(baseStart)),
		out:   map[int32][]int32{}, in: map[int32][]int32{}}
	ov.src.Store(&overlaySrc{base: base, lay: lay})
	for s := range repl {
		ov.replSegs = append(ov.replSegs, s)
	}
	slices.Sort(ov.replSegs)
	for s := 0; s+1 < len(baseStart); s++ {
		n := baseStart[s+1] - baseStart[s]
		if seg, ok := repl[int32(s)]; ok {
			n = int32(len(seg))
		}
		ov.start[s+1] = ov.start[s] + n
	}
	for _, s := range ov.replSegs {
		for j, e := range repl[s] {
			i := ov.start[s] + int32(j)
			ov.replEdges++
			if f, ok := byID[e.From]; ok {
				ov.out[f] = append(ov.out[f], i)
			} else {
				if ov.extraOut == nil {
					ov.extraOut = map[string][]int32{}
				}
				ov.extraOut[e.From] = append(ov.extraOut[e.From], i)
			}
			if t, ok := byID[e.To]; ok {
				ov.in[t] = append(ov.in[t], i)
			} else {
				if ov.extraIn == nil {
					ov.extraIn = map[string][]int32{}
				}
				ov.extraIn[e.To] = append(ov.extraIn[e.To], i)
			}
		}
	}
	return ov
}

// flatGraph returns g itself when it is flat, else the flat graph with the
// same content (made once, then kept): every edge copied in order and the
// rows made from the base's rows without looking up IDs again.
func (g *Graph) flatGraph() *Graph {
	ov := g.ov
	if ov == nil {
		return g
	}
	ov.flatOnce.Do(func() {
		ov.flat.Store(g.compact())
		ov.src.Store(nil) // reads go to the flat graph; the base can go
	})
	return ov.flat.Load()
}

// compact makes the flat graph of an overlay graph.
func (g *Graph) compact() *Graph {
	ov := g.ov
	src, f := ov.view()
	if f != nil {
		return f
	}
	base := src.base
	n := g.numEdges()
	bFrom, bTo := edgeEnds(base) // endpoint positions of the base's edges, from its rows
	edges := make([]Edge, 0, n)
	from := make([]int32, 0, n)
	to := make([]int32, 0, n)
	pos := func(id string) int32 {
		if i, ok := g.byID[id]; ok {
			return i
		}
		return -1
	}
	for s := 0; s+1 < len(ov.baseStart); s++ {
		if seg, ok := ov.repl[int32(s)]; ok {
			edges = append(edges, seg...)
			for _, e := range seg {
				from = append(from, pos(e.From))
				to = append(to, pos(e.To))
			}
			continue
		}
		lo, hi := ov.baseStart[s], ov.baseStart[s+1]
		edges = append(edges, base.edges[lo:hi]...)
		from = append(from, bFrom[lo:hi]...)
		to = append(to, bTo[lo:hi]...)
	}
	flat := &Graph{root: g.root, nodes: g.nodes, byID: g.byID, edges: edges,
		byFile: g.byFile, fileNode: g.fileNode, children: g.children,
		envNames: g.envNames, envVals: g.envVals, imports: g.imports, globals: g.globals, stats: g.stats}
	if l := src.lay; l != nil {
		flat.byFile, flat.fileNode, flat.children = l.byFile.flat(), l.fileNode.flat(), l.children.flat()
		flat.envNames, flat.imports, flat.globals = l.envNames.flat(), l.imports.flat(), l.globals.flat()
	}
	flat.idxOnce.Do(func() { flat.adj = adjacencyFromEnds(len(g.nodes), edges, from, to) })
	return flat
}

// mapLayer is a lookup map of an update's graph: its base graph's map with
// some keys set or removed (the changed files' entries), so that an update
// does not copy the map.
type mapLayer[V any] struct {
	base map[string]V // shared, never written
	set  map[string]V
	gone map[string]bool
}

// newLayer starts a layer over base, or continues the layer prev (its
// changes copied: they are few).
func newLayer[V any](base map[string]V, prev *mapLayer[V]) *mapLayer[V] {
	if prev != nil {
		return &mapLayer[V]{base: prev.base, set: maps.Clone(prev.set), gone: maps.Clone(prev.gone)}
	}
	return &mapLayer[V]{base: base, set: map[string]V{}, gone: map[string]bool{}}
}

func (m *mapLayer[V]) get(k string) (V, bool) {
	if v, ok := m.set[k]; ok {
		return v, true
	}
	if m.gone[k] {
		var z V
		return z, false
	}
	v, ok := m.base[k]
	return v, ok
}

func (m *mapLayer[V]) put(k string, v V) {
	m.set[k] = v
	delete(m.gone, k)
}

func (m *mapLayer[V]) del(k string) {
	delete(m.set, k)
	if _, ok := m.base[k]; ok {
		m.gone[k] = true
	}
}

// flat returns the map the layer stands for (a new map).
func (m *mapLayer[V]) flat() map[string]V {
	out := maps.Clone(m.base)
	if out == nil {
		out = map[string]V{}
	}
	for k := range m.gone {
		delete(out, k)
	}
	maps.Copy(out, m.set)
	return out
}

// mapLayers are the lookup maps of an update's graph (Graph's fields of
// the same names are nil then).
type mapLayers struct {
	byFile   *mapLayer[[]*Node]
	fileNode *mapLayer[*Node]
	children *mapLayer[[]*Node]
	envNames *mapLayer[[]string]
	imports  *mapLayer[[]importSpan]
	globals  *mapLayer[[]globalRec]
}

// layersOver starts the layers of the graph after prev, whose layers are
// prevLay (nil: prev is flat).
func layersOver(prev *Graph, prevLay *mapLayers) *mapLayers {
	var p mapLayers
	if prevLay != nil {
		p = *prevLay
	}
	return &mapLayers{
		byFile:   newLayer(prev.byFile, p.byFile),
		fileNode: newLayer(prev.fileNode, p.fileNode),
		children: newLayer(prev.children, p.children),
		envNames: newLayer(prev.envNames, p.envNames),
		imports:  newLayer(prev.imports, p.imports),
		globals:  newLayer(prev.globals, p.globals),
	}
}

// size is the number of changed entries the layers hold.
func (l *mapLayers) size() int {
	return len(l.byFile.set) + len(l.fileNode.set) + len(l.children.set) + len(l.envNames.set) +
		len(l.imports.set) + len(l.globals.set) + len(l.envNames.gone) + len(l.byFile.gone) + len(l.globals.gone)
}

// layers returns g's map layers, or the flat graph whose maps to read.
func (g *Graph) layers() (*mapLayers, *Graph) {
	if g.ov == nil {
		return nil, g
	}
	src, f := g.ov.view()
	if f != nil {
		return nil, f
	}
	return src.lay, nil
}

// The graph's lookups, through the layers when it has them.

func (g *Graph) defsOf(path string) []*Node {
	l, f := g.layers()
	if l == nil {
		return f.byFile[path]
	}
	v, _ := l.byFile.get(path)
	return v
}

func (g *Graph) fileNodeOf(path string) (*Node, bool) {
	l, f := g.layers()
	if l == nil {
		n, ok := f.fileNode[path]
		return n, ok
	}
	return l.fileNode.get(path)
}

func (g *Graph) kidsOf(id string) []*Node {
	l, f := g.layers()
	if l == nil {
		return f.children[id]
	}
	v, _ := l.children.get(id)
	return v
}

func (g *Graph) envOf(id string) []string {
	l, f := g.layers()
	if l == nil {
		return f.envNames[id]
	}
	v, _ := l.envNames.get(id)
	return v
}

func (g *Graph) importsOf(path string) []importSpan {
	l, f := g.layers()
	if l == nil {
		return f.imports[path]
	}
	v, _ := l.imports.get(path)
	return v
}

func (g *Graph) globalsOf(path string) []globalRec {
	l, f := g.layers()
	if l == nil {
		return f.globals[path]
	}
	v, _ := l.globals.get(path)
	return v
}
