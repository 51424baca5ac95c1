package codegraph

// This file holds what lets an update that changed no file's interface
// skip the builder's project-wide passes: the sorted file list is patched,
// and the tables derived from every file (base classes, Python method
// names, Go interface matching) are kept when the changed files contribute
// the same to them as before.

import (
	"slices"
	"sort"
)

// orderedFiles returns every file of b.fbs sorted by path. When the set of
// files is the previous build's, the previous list is copied with the
// changed files' new objects put in place; otherwise it is sorted again.
func (b *builder) orderedFiles(sameFiles bool, changed []*fileBuild) []*fileBuild {
	if sameFiles && len(b.ordered) == len(b.fbs) {
		ordered := append([]*fileBuild(nil), b.ordered...)
		ok := true
		for _, fb := range changed {
			p := fb.fd.Path
			i := sort.Search(len(ordered), func(i int) bool { return ordered[i].fd.Path >= p })
			if i == len(ordered) || ordered[i].fd.Path != p {
				ok = false
				break
			}
			ordered[i] = fb
		}
		if ok {
			b.ordered = ordered
			return ordered
		}
	}
	paths := make([]string, 0, len(b.fbs))
	for p := range b.fbs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ordered := make([]*fileBuild, len(paths))
	for i, p := range paths {
		ordered[i] = b.fbs[p]
	}
	b.ordered = ordered
	return ordered
}

// sameInheritance reports that each changed file resolved the same base
// classes (and bases outside the project) as its previous version, so the
// project's base and subclass tables stay as they are.
func sameInheritance(changed []*fileBuild, old map[string]*fileBuild) bool {
	for _, fb := range changed {
		o := old[fb.fd.Path]
		if o == nil || (o.inh == nil) != (fb.inh == nil) {
			return false
		}
		if fb.inh == nil {
			continue
		}
		if len(o.inh.bases) != len(fb.inh.bases) || len(o.inh.extBases) != len(fb.inh.extBases) {
			return false
		}
		for i := range fb.inh.bases {
			if o.inh.bases[i] != fb.inh.bases[i] {
				return false
			}
		}
		for i := range fb.inh.extBases {
			if o.inh.extBases[i] != fb.inh.extBases[i] {
				return false
			}
		}
	}
	return true
}

// samePyMethods reports that each changed file defines the same Python
// methods, with the same property bit, as its previous version (what
// pyMemberNames gathers), so the project's method-name table stays.
func samePyMethods(changed []*fileBuild, old map[string]*fileBuild) bool {
	for _, fb := range changed {
		o := old[fb.fd.Path]
		if o == nil || o.lang != fb.lang {
			return false
		}
		if fb.lang == nil || fb.lang.family != "python" {
			continue
		}
		a, b := pyMethodBits(o.fd), pyMethodBits(fb.fd)
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
	}
	return true
}

type pyMethodBit struct {
	name string
	bits uint8
}

// pyMethodBits lists a Python file's methods as pyMemberNames sees them.
func pyMethodBits(fd *fileData) []pyMethodBit {
	var out []pyMethodBit
	for _, d := range fd.Defs {
		if d.Kind == KindMethod {
			bits := pyMethod
			if isPyPropertySig(d.Sig) {
				bits |= pyProperty
			}
			out = append(out, pyMethodBit{d.Name, bits})
		}
	}
	return out
}

// sameGoTypes reports that each changed Go file has the same nodes with
// the same signatures as its previous version: Go interface matching
// (goImplements) reads only those, the member tables and the base tables.
func sameGoTypes(changed []*fileBuild, old map[string]*fileBuild) bool {
	for _, fb := range changed {
		o := old[fb.fd.Path]
		if o == nil || len(o.nodes) != len(fb.nodes) {
			return false
		}
		if fb.lang == nil || fb.lang.family != "go" {
			continue
		}
		for i, n := range fb.nodes {
			on := o.nodes[i]
			if on.ID != n.ID || on.Kind != n.Kind || on.Parent != n.Parent || on.Signature != n.Signature {
				return false
			}
		}
	}
	return true
}

// goEdgesFor returns the Go implements and dispatches edges of the build,
// in the order goInterfaces lists them. With keep set (no changed file
// changed what interface matching reads), the last build's matching is
// kept and only the changed files' dispatches are computed again; when
// those are what the files' previous versions had, the last build's list
// is returned as it is (no copy).
func (b *builder) goEdgesFor(ordered, changed []*fileBuild, old map[string]*fileBuild, keep bool) []Edge {
	todo := changed
	if !keep || b.goImpl == nil {
		b.goImpl = b.goImplements(ordered) // iface_go.go
		todo = ordered
	}
	gi := b.goImpl
	if gi == nil {
		for _, fb := range ordered {
			fb.goDisp = nil
		}
		return nil
	}
	same := keep && b.goEdges != nil
	for _, fb := range todo {
		fb.goDisp = gi.dispatch(b, fb)
		if o := old[fb.fd.Path]; same && (o == nil || !slices.Equal(o.goDisp, fb.goDisp)) {
			same = false
		}
	}
	if same && len(todo) == len(changed) {
		return b.goEdges
	}
	n := len(gi.edges)
	for _, fb := range ordered {
		n += len(fb.goDisp)
	}
	edges := make([]Edge, 0, n)
	edges = append(edges, gi.edges...)
	for _, fb := range ordered {
		edges = append(edges, fb.goDisp...)
	}
	return edges
}
