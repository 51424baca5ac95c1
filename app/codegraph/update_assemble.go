package codegraph

import (
	"maps"
	"slices"
	"sort"
)

// assemblePatch builds the next snapshot from the previous one when only
// the contents of some files changed and none of what other files see: the
// same files, and in each changed file the same node IDs with the same
// parents and kinds (any language; a Go method may belong to a type of
// another file). Node positions are unchanged, so the previous node list
// is copied with the changed files' nodes put in place and its ID index is
// shared; the lookup maps are layers over the previous ones holding only
// the changed entries (mapLayer); the edges are the
// previous graph's base list, shared, with the changed files' segments
// (and the Go edges, when they changed) replaced (graph_overlay.go), so no
// unchanged edge is copied; statistics are updated by the difference. It
// returns nil when the change does not qualify (the caller assembles from
// scratch). The result is the graph assemble would build (tests compare
// them field by field, edges by index and every node's rows).
func (b *builder) assemblePatch(prev *Graph, ordered, changed []*fileBuild, old map[string]*fileBuild, prevGo []Edge, env map[string]string) *Graph {
	var src *overlaySrc // prev's base and layers when prev is an overlay
	if prev != nil && prev.ov != nil {
		s, f := prev.ov.view()
		src = s
		if f != nil {
			// Compacted meanwhile (Edges, the snapshot writer): start from
			// it, the files' results pointing into its list, so that the
			// old lists can go.
			files := make([]*fileBuild, len(ordered))
			for i, fb := range ordered {
				files[i] = fb
				if o := old[fb.fd.Path]; o != nil {
					files[i] = o
				}
			}
			if !pointResults(files, f.edges) {
				return nil
			}
			prev = f
			src = nil
		}
	}
	pkgs := b.packageNodes()
	if prev == nil || len(pkgs) != len(b.lastPkgs) {
		return nil
	}
	for i, n := range pkgs {
		if b.lastPkgs[i] != n {
			return nil
		}
	}
	olds := make([]*fileBuild, len(changed))
	isChanged := make(map[*fileBuild]bool, len(changed))
	for i, fb := range changed {
		o := old[fb.fd.Path]
		if o == nil || fb.lang == nil || len(o.nodes) != len(fb.nodes) {
			return nil
		}
		for j, n := range fb.nodes {
			on := o.nodes[j]
			if on.ID != n.ID || on.Parent != n.Parent || on.Kind != n.Kind {
				return nil
			}
		}
		if at, ok := prev.byID[fb.fileID]; !ok || prev.nodes[at] != o.nodes[0] {
			return nil // the previous graph is not the one the old file was assembled into
		}
		olds[i] = o
		isChanged[fb] = true
	}

	// The lookup maps are layers over the previous graph's (changed
	// entries only, graph_overlay.go).
	var prevLay *mapLayers
	if src != nil {
		prevLay = src.lay
	}
	lay := layersOver(prev, prevLay)
	g := &Graph{
		root:    b.root,
		nodes:   append(make([]*Node, 0, len(prev.nodes)), prev.nodes...),
		byID:    prev.byID, // the same nodes at the same positions: shared, never written
		envVals: env,
	}
	for i, fb := range changed {
		o := olds[i]
		p := fb.fd.Path
		copy(g.nodes[prev.byID[fb.fileID]:], fb.nodes)
		lay.fileNode.put(p, fb.nodes[0])
		if len(fb.nodes) > 1 {
			lay.byFile.put(p, fb.nodes[1:])
		} else {
			lay.byFile.del(p)
		}
		lay.imports.put(p, fb.spans)
		if len(fb.fd.Globals) > 0 {
			lay.globals.put(p, fb.fd.Globals)
		} else {
			lay.globals.del(p)
		}
		for id := range o.envNames {
			lay.envNames.del(id)
		}
		for id, names := range fb.envNames {
			lay.envNames.put(id, names)
		}
		// Children: the same members under the same parents; each parent's
		// list gets the new node objects in place (order is by source
		// position, which the same IDs in the same order keep). The list
		// is read from the layer: another changed file may have put its
		// members (Go methods of one type in two files).
		byIDNew := make(map[string]*Node, len(fb.nodes))
		for _, n := range fb.nodes {
			byIDNew[n.ID] = n
		}
		done := map[string]bool{}
		for _, n := range fb.nodes {
			if n.Parent == "" || done[n.Parent] {
				continue
			}
			done[n.Parent] = true
			cur, _ := lay.children.get(n.Parent)
			kids := append([]*Node(nil), cur...)
			for k, c := range kids {
				if nn := byIDNew[c.ID]; nn != nil {
					kids[k] = nn
				}
			}
			lay.children.put(n.Parent, kids)
		}
	}

	// Edges: the changed files' segments (and the Go edges, when they
	// changed) replace the previous ones over the same flat base, whose
	// edges are shared, not copied (graph_overlay.go).
	base, cur, repl := prev, []int32(nil), map[int32][]Edge{}
	var baseStart []int32
	if ov := prev.ov; ov != nil {
		base, baseStart, cur = src.base, ov.baseStart, ov.start
		repl = maps.Clone(ov.repl)
	} else {
		// Segment table of a flat graph as assemble laid it out: per file
		// its edge count (the old version's for the changed files), then
		// the requires and the Go edges.
		k := len(ordered)
		baseStart = make([]int32, k+3)
		for i, fb := range ordered {
			n := fileEdgeCount(fb)
			if isChanged[fb] {
				n = fileEdgeCount(old[fb.fd.Path])
			}
			baseStart[i+1] = baseStart[i] + int32(n)
		}
		baseStart[k+1] = baseStart[k] + int32(len(b.requires))
		baseStart[k+2] = baseStart[k+1] + int32(len(prevGo))
		if int(baseStart[k+2]) != len(prev.edges) {
			return nil // the previous list is not laid out as assemble lays it out
		}
		cur = baseStart
	}
	if len(cur) != len(ordered)+3 {
		return nil
	}
	for i, fb := range changed {
		p := fb.fd.Path
		s := sort.Search(len(ordered), func(i int) bool { return ordered[i].fd.Path >= p })
		if s == len(ordered) || ordered[s] != fb || int(cur[s+1]-cur[s]) != fileEdgeCount(olds[i]) {
			return nil
		}
		seg := make([]Edge, 0, fileEdgeCount(fb))
		for _, n := range fb.nodes {
			if n.Parent != "" {
				seg = append(seg, Edge{From: n.Parent, To: n.ID, Kind: EdgeContains, Line: n.StartLine})
			}
		}
		var shared []sharedEdges
		for _, r := range []*fileResult{fb.inh, fb.res} {
			if r != nil {
				shared = append(shared, sharedEdges{r, len(seg)})
				seg = append(seg, r.edges...)
			}
		}
		shareEdges(seg, shared)
		repl[int32(s)] = seg
	}
	goSeg := int32(len(ordered) + 1)
	if int(cur[goSeg+1]-cur[goSeg]) != len(prevGo) {
		return nil
	}
	goSame := sameEdges(prevGo, b.goEdges)
	if !goSame {
		repl[goSeg] = b.goEdges
	}
	g.ov = newOverlay(base, lay, g.byID, baseStart, repl)

	// Statistics: the previous figures minus the old versions of the changed
	// files plus the new ones, and the Go edges' difference.
	ps := prev.stats
	st := Stats{Files: ps.Files, FilesByLanguage: maps.Clone(ps.FilesByLanguage), Lines: ps.Lines, Bytes: ps.Bytes,
		NodesByKind: maps.Clone(ps.NodesByKind), EdgesByKind: maps.Clone(ps.EdgesByKind),
		Resolved: ps.Resolved, External: ps.External, Unresolved: ps.Unresolved,
		UnresolvedByKind: maps.Clone(ps.UnresolvedByKind)}
	for i, fb := range changed {
		st.addFile(olds[i], -1)
		st.addFile(fb, 1)
	}
	if !goSame {
		kinds := map[EdgeKind]int{}
		for _, e := range prevGo {
			kinds[e.Kind]--
		}
		for _, e := range b.goEdges {
			kinds[e.Kind]++
		}
		for k, d := range kinds {
			addCount(st.EdgesByKind, k, d)
		}
	}
	for _, fb := range ordered {
		if len(st.UnresolvedSample) >= maxUnresolvedSample {
			break
		}
		for _, r := range []*fileResult{fb.inh, fb.res} {
			if r == nil {
				continue
			}
			if room := maxUnresolvedSample - len(st.UnresolvedSample); room > 0 {
				st.UnresolvedSample = appendSample(st.UnresolvedSample, r.sample[:min(room, len(r.sample))])
			}
		}
	}
	st.Nodes = len(g.nodes)
	st.Edges = g.numEdges()
	g.stats = st
	limit := b.overlayMax
	if limit == 0 {
		limit = overlayMax(len(base.edges))
	}
	if g.ov.replEdges > limit || lay.size() > limit {
		// Compacted: the next updates start from one list again.
		f := g.flatGraph()
		pointResults(ordered, f.edges)
		return f
	}
	return g
}

// fileEdgeCount is the number of edges a file puts in the graph's list in
// assemble: a contains edge per definition, its base-class and reference
// edges.
func fileEdgeCount(fb *fileBuild) int {
	n := len(fb.nodes) - 1
	for _, r := range []*fileResult{fb.inh, fb.res} {
		if r != nil {
			n += len(r.edges)
		}
	}
	return n
}

// pointResults points each file's resolved edges at their copy in a flat
// edge list laid out as assemble lays it out (files in order), so that the
// builder and the graph hold one copy; false when the list is too short.
func pointResults(files []*fileBuild, edges []Edge) bool {
	at := 0
	for _, fb := range files {
		at += len(fb.nodes) - 1
		for _, r := range []*fileResult{fb.inh, fb.res} {
			if r == nil {
				continue
			}
			end := at + len(r.edges)
			if end > len(edges) {
				return false
			}
			r.edges = edges[at:end:end]
			at = end
		}
	}
	return true
}

// adoptCompacted points the files' results into g's compacted edge list
// when g is the last graph built and has been compacted since (by the
// snapshot writer or Edges). Until the next update they pointed into the
// lists g was made over, which kept a second copy of every edge alive
// between a rewrite and the next edit (pyenv: 1.27 M edges, 68 MB). The
// project's lock is held, so no update runs meanwhile.
func (b *builder) adoptCompacted(g *Graph) {
	if b.last != g || g.ov == nil {
		return
	}
	_, f := g.ov.view()
	if f == nil {
		return
	}
	n := 0
	for _, fb := range b.ordered {
		n += len(fb.nodes) - 1
		for _, r := range []*fileResult{fb.inh, fb.res} {
			if r != nil {
				n += len(r.edges)
			}
		}
	}
	if n > len(f.edges) {
		return // not laid out as the files are (pointResults would stop half way)
	}
	pointResults(b.ordered, f.edges)
}

// sameEdges reports whether two edge lists are equal, at once when they
// are the same list.
func sameEdges(a, b []Edge) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true
	}
	return slices.Equal(a, b)
}
