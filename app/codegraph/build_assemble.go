package codegraph

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// This file holds the builder's last step: assembling the resolved files
// into the Graph.

// assemble puts the per-file pieces together into an immutable graph.
func (b *builder) assemble(ordered []*fileBuild, env map[string]string) *Graph {
	nNodes, nEdges := len(b.pkgs), len(b.requires)
	for _, fb := range ordered {
		nNodes += len(fb.nodes)
		nEdges += len(fb.nodes) - 1
		if fb.res != nil {
			nEdges += len(fb.res.edges) + len(fb.res.packed)
		}
		if fb.inh != nil {
			nEdges += len(fb.inh.edges) + len(fb.inh.packed)
		}
	}
	g := &Graph{
		root:     b.root,
		nodes:    make([]*Node, 0, nNodes),
		byID:     make(map[string]int32, nNodes),
		edges:    make([]Edge, 0, nEdges),
		byFile:   make(map[string][]*Node, len(ordered)),
		fileNode: make(map[string]*Node, len(ordered)),
		children: make(map[string][]*Node, nNodes/2),
		envNames: map[string][]string{},
		envVals:  env,
		imports:  make(map[string][]importSpan, len(ordered)),
		globals:  map[string][]globalRec{},
		stats: Stats{FilesByLanguage: map[string]int{}, NodesByKind: map[Kind]int{},
			EdgesByKind: map[EdgeKind]int{}, UnresolvedByKind: map[string]int{}},
	}
	st := &g.stats
	var shared []sharedEdges
	addRes := func(r *fileResult) {
		if r == nil {
			return
		}
		at := len(g.edges)
		shared = append(shared, sharedEdges{r, at})
		g.edges = r.appendEdges(g.edges) // (unpacks the last build's, build_final.go)
		if r.packed != nil {
			r.edges, r.packed = g.edges[at:len(g.edges):len(g.edges)], nil // (shareEdges reads its length)
		}
		st.Resolved += r.resolved
		st.External += r.external
		st.Unresolved += r.unresolved
		for _, kc := range r.byKind {
			st.UnresolvedByKind[kc.kind] += kc.n
		}
		if room := maxUnresolvedSample - len(st.UnresolvedSample); room > 0 {
			st.UnresolvedSample = appendSample(st.UnresolvedSample, r.sample[:min(room, len(r.sample))])
		}
	}
	for _, fb := range ordered {
		fd := fb.fd
		st.Files++
		lname := fd.Lang
		if lname == "" {
			lname = "other"
		}
		st.FilesByLanguage[lname]++
		st.Lines += fd.Lines
		st.Bytes += fd.Size
		g.fileNode[fd.Path] = fb.nodes[0]
		if len(fb.nodes) > 1 {
			g.byFile[fd.Path] = fb.nodes[1:]
		}
		for _, n := range fb.nodes {
			g.byID[n.ID] = int32(len(g.nodes))
			g.nodes = append(g.nodes, n)
			if n.Parent != "" {
				g.children[n.Parent] = append(g.children[n.Parent], n)
				g.edges = append(g.edges, Edge{From: n.Parent, To: n.ID, Kind: EdgeContains, Line: n.StartLine})
			}
		}
		for id, names := range fb.envNames {
			g.envNames[id] = names
		}
		g.imports[fd.Path] = fb.spans
		if len(fd.Globals) > 0 {
			g.globals[fd.Path] = fd.Globals
		}
		addRes(fb.inh)
		addRes(fb.res)
	}
	g.edges = append(g.edges, b.requires...)
	g.edges = append(g.edges, b.goEdges...)
	for _, n := range b.packageNodes() {
		g.byID[n.ID] = int32(len(g.nodes))
		g.nodes = append(g.nodes, n)
	}
	shareEdges(g.edges, shared)
	// Children of Go types may come from several files: keep source order.
	for _, fb := range ordered {
		if fb.lang != nil && fb.lang.family == "go" {
			for _, n := range fb.nodes[1:] {
				if kids := g.children[n.ID]; len(kids) > 1 {
					sortNodes(kids)
				}
			}
		}
	}
	for _, n := range g.nodes {
		st.NodesByKind[n.Kind]++
	}
	for _, e := range g.edges {
		st.EdgesByKind[e.Kind]++
	}
	st.Nodes = len(g.nodes)
	st.Edges = len(g.edges)
	return g
}

// dropResolveState drops, before the last build's graph is assembled
// (builder.final), everything that only resolution and later builds read:
// the per-file tables (scopes, hints, value flow, locals), the
// project-wide tables, and the records' definitions, references and
// imports. What assemble reads stays: each file's nodes, edges, imports'
// spans, environment names, and its record's path, size, lines and
// globals. The records are the project's (Project.files), released with
// the builder right after the build; the cache was written before.
//
// A collection follows, so that the graph is assembled in the memory
// this frees instead of on top of it: on pyenv's stdlib the assembly
// (every edge copied into one list, the node maps) was the peak of a cold
// index, ≈ 75 MB above the end of resolution. The pages it frees are
// given back to the system at once (debug.FreeOSMemory): the runtime
// keeps freed pages resident until its background scavenger gets to them,
// and on pyenv's stdlib ≈ 240 MiB of them stayed through the assembly and
// the snapshot's write, on top of what those allocate (peak RSS 711-758
// -> 674-681 MiB, same CPU; BENCHMARKS.md, lead6).
func (b *builder) dropResolveState(ordered []*fileBuild) {
	for _, fb := range ordered {
		fd := fb.fd
		fd.Refs, fd.Imports, fd.Env = refList{}, nil, nil
		fb.keys, fb.inherits = nil, nil
		fb.tab, fb.hints, fb.flow, fb.facts = nil, nil, nil, nil
		fb.scope, fb.topScope = nil, nil
		fb.goHintAt, fb.goDisp, fb.goParamCalls, fb.argAsked = nil, nil, nil, nil
	}
	b.modules, b.top, b.members, b.bases, b.subs = nil, nil, nil, nil, nil
	b.pyNames, b.extBase, b.locs = nil, nil, nil
	b.pyArgs, b.goImpl = nil, nil
	b.buildPools = &buildPools{}
	if liveHeapBelow(buildGCMinLive) {
		runtime.GC() // a small project's few freed pages are not worth the system calls and faults
	} else {
		debug.FreeOSMemory()
	}
	// The definitions' nodes, not made through the resolution, are made
	// (build_nodetext.go) in the memory the collection freed.
	makeAllDefNodes(ordered)
	for _, fb := range ordered {
		fb.fd.Defs, fb.ids = nil, nil
	}
}

// appendSample appends unresolved references to a graph's sample, each
// name copied: a name decoded from a file's packed references is a part of
// that file's string table (refs_packed.go), which the graph would
// otherwise keep whole.
func appendSample(dst, src []UnresolvedRef) []UnresolvedRef {
	for _, u := range src {
		u.Name = strings.Clone(u.Name)
		dst = append(dst, u)
	}
	return dst
}
