package codegraph

import (
	"maps"
	"sort"
)

// packageNodes returns the package nodes in the order graphs list them.
func (b *builder) packageNodes() []*Node {
	var pkgs []*Node
	for _, m := range b.packages {
		for _, id := range m {
			pkgs = append(pkgs, b.pkgs[id])
		}
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].QualName < pkgs[j].QualName })
	return pkgs
}

// assembleFast builds the next snapshot from the previous one when only the
// contents of some files changed and none of what other files see: the same
// files, and in each changed file the same node IDs with the same parents.
// The lookup maps of the previous graph are cloned (a copy of its hash
// table, no re-hashing) and only the changed files' entries are replaced;
// statistics are updated by the difference. It returns nil when the change
// does not qualify, and the caller assembles the graph from scratch. The
// result is the same graph assemble would build (tests compare them).
func (b *builder) assembleFast(prev *Graph, ordered, changed []*fileBuild, old map[string]*fileBuild, env map[string]string) *Graph {
	pkgs := b.packageNodes()
	if prev == nil || len(pkgs) != len(b.lastPkgs) || len(b.goEdges) > 0 {
		return nil
	}
	for i, n := range pkgs {
		if b.lastPkgs[i] != n {
			return nil
		}
	}
	olds := make([]*fileBuild, len(changed))
	for i, fb := range changed {
		o := old[fb.fd.Path]
		// Go types gather children from several files (sorted across files):
		// leave those to the full assembly.
		if o == nil || fb.lang == nil || fb.lang.family == "go" || len(o.nodes) != len(fb.nodes) {
			return nil
		}
		ids := make(map[string]bool, len(fb.nodes))
		for j, n := range fb.nodes {
			on := o.nodes[j]
			if on.ID != n.ID || on.Parent != n.Parent || on.Kind != n.Kind {
				return nil
			}
			ids[n.ID] = true
		}
		for _, n := range fb.nodes {
			if n.Parent != "" && !ids[n.Parent] {
				return nil
			}
		}
		olds[i] = o
	}

	nNodes, nEdges := len(prev.nodes), len(prev.edges)
	g := &Graph{
		root:     b.root,
		nodes:    make([]*Node, 0, nNodes),
		byID:     prev.byID, // the same nodes at the same positions: shared, never written
		byFile:   maps.Clone(prev.byFile),
		fileNode: maps.Clone(prev.fileNode),
		children: maps.Clone(prev.children),
		envNames: map[string][]string{},
		envVals:  env,
		imports:  maps.Clone(prev.imports),
		globals:  maps.Clone(prev.globals),
	}
	for _, fb := range ordered {
		g.nodes = append(g.nodes, fb.nodes...)
		for id, names := range fb.envNames {
			g.envNames[id] = names
		}
	}
	g.nodes = append(g.nodes, pkgs...)
	for _, fb := range changed {
		p := fb.fd.Path
		g.fileNode[p] = fb.nodes[0]
		if len(fb.nodes) > 1 {
			g.byFile[p] = fb.nodes[1:]
		} else {
			delete(g.byFile, p)
		}
		g.imports[p] = fb.spans
		if len(fb.fd.Globals) > 0 {
			g.globals[p] = fb.fd.Globals
		} else {
			delete(g.globals, p)
		}
		kids := map[string][]*Node{}
		for _, n := range fb.nodes {
			if n.Parent != "" {
				kids[n.Parent] = append(kids[n.Parent], n)
			}
		}
		for id, ks := range kids {
			g.children[id] = ks
		}
	}

	// Edges, in the order assemble lists them.
	for _, fb := range changed {
		for _, r := range []*fileResult{fb.inh, fb.res} {
			if r != nil {
				nEdges += len(r.edges)
			}
		}
	}
	g.edges = make([]Edge, 0, nEdges)
	var shared []sharedEdges
	for _, fb := range ordered {
		for _, n := range fb.nodes {
			if n.Parent != "" {
				g.edges = append(g.edges, Edge{From: n.Parent, To: n.ID, Kind: EdgeContains, Line: n.StartLine})
			}
		}
		for _, r := range []*fileResult{fb.inh, fb.res} {
			if r != nil {
				shared = append(shared, sharedEdges{r, len(g.edges)})
				g.edges = append(g.edges, r.edges...)
			}
		}
	}
	g.edges = append(g.edges, b.requires...)
	shareEdges(g.edges, shared)

	// Statistics: the previous figures minus the old versions of the changed
	// files plus the new ones.
	ps := prev.stats
	st := Stats{Files: ps.Files, FilesByLanguage: maps.Clone(ps.FilesByLanguage), Lines: ps.Lines, Bytes: ps.Bytes,
		NodesByKind: maps.Clone(ps.NodesByKind), EdgesByKind: maps.Clone(ps.EdgesByKind),
		Resolved: ps.Resolved, External: ps.External, Unresolved: ps.Unresolved,
		UnresolvedByKind: maps.Clone(ps.UnresolvedByKind)}
	for i, fb := range changed {
		st.addFile(olds[i], -1)
		st.addFile(fb, 1)
	}
	for _, fb := range ordered {
		for _, r := range []*fileResult{fb.inh, fb.res} {
			if r == nil {
				continue
			}
			if room := maxUnresolvedSample - len(st.UnresolvedSample); room > 0 {
				st.UnresolvedSample = append(st.UnresolvedSample, r.sample[:min(room, len(r.sample))]...)
			}
		}
	}
	st.Nodes = len(g.nodes)
	st.Edges = len(g.edges)
	g.stats = st
	return g
}

// sharedEdges is a file's result whose edges start at index at in a new
// graph's edge list.
type sharedEdges struct {
	r  *fileResult
	at int
}

// shareEdges points each file's resolved edges at their copy in the graph's
// edge list, so that the builder and the graph hold one copy of them (the
// graph is immutable; the capacity is capped, so an append to a result
// would copy, never write into the graph).
func shareEdges(edges []Edge, shared []sharedEdges) {
	for _, s := range shared {
		end := s.at + len(s.r.edges)
		s.r.edges = edges[s.at:end:end]
	}
}

// addFile adds (sign 1) or removes (sign -1) one file's share of the
// statistics that depend on its content.
func (st *Stats) addFile(fb *fileBuild, sign int) {
	st.Lines += sign * fb.fd.Lines
	st.Bytes += int64(sign) * fb.fd.Size
	for _, n := range fb.nodes {
		addCount(st.NodesByKind, n.Kind, sign)
		if n.Parent != "" {
			addCount(st.EdgesByKind, EdgeContains, sign)
		}
	}
	for _, r := range []*fileResult{fb.inh, fb.res} {
		if r == nil {
			continue
		}
		for _, e := range r.edges {
			addCount(st.EdgesByKind, e.Kind, sign)
		}
		st.Resolved += sign * r.resolved
		st.External += sign * r.external
		st.Unresolved += sign * r.unresolved
		for _, kc := range r.byKind {
			addCount(st.UnresolvedByKind, kc.kind, sign*kc.n)
		}
	}
}

// addCount adds d to m[k], removing the key when it drops to zero (as a
// count assembled from scratch would not have it).
func addCount[K comparable](m map[K]int, k K, d int) {
	if v := m[k] + d; v != 0 {
		m[k] = v
	} else {
		delete(m, k)
	}
}
