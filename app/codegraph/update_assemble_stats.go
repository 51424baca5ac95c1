package codegraph

import (
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
