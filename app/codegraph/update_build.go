package codegraph

// This file holds what lets an update that changed no file's interface
// skip the builder's project-wide passes: the sorted file list is patched,
// and the tables derived from every file (base classes, Python method
// names, Go interface matching) are kept when the changed files contribute
// the same to them as before.

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// fileDiff is how a build's files differ from the last build's.
type fileDiff struct {
	// old is the last build's map (path → fileBuild), or nil when every
	// file must be processed again: none was built, or a file that names
	// modules (go.mod, __init__.py) came, went or changed.
	old map[string]*fileBuild
	// next is the next build's map: the unchanged files' fileBuilds (the
	// caller adds todo's once they are filled).
	next map[string]*fileBuild
	// todo holds a new, empty fileBuild for every new or changed file.
	todo []*fileBuild
	// gone: a file of the last build is not in files; sameFiles: the
	// paths are the last build's.
	gone, sameFiles bool
}

// diffFiles compares files with the last build's (b.fbs; a file is
// unchanged when its *fileData is the same object).
//
// With b.hint set (UpdateFiles: a superset of the paths whose entry may
// differ since the last build), only those paths are compared and next is
// a clone of the last map with them changed: the three loops over every
// file and the N inserts into a new map are skipped. On pyenv (11.7 k
// files) they were 5–7 ms of a 32 ms one-file edit, and 10–12 ms of the
// first edit after PrepareUpdates (the per-file structures are then out of
// the CPU caches). The hint is consumed.
func (b *builder) diffFiles(files map[string]*fileData) fileDiff {
	hint := b.hint
	b.hint = nil
	if hint == nil || b.fbs == nil {
		return diffAllFiles(b.fbs, files)
	}
	d := diffHinted(b.fbs, files, hint, b.refilled)
	if d.old != nil {
		b.hinted++
	}
	if b.checkHint {
		full := diffAllFiles(b.fbs, files)
		if err := sameDiff(d, full); err != nil {
			panic(fmt.Sprintf("codegraph: build hint wrong: %v", err))
		}
	}
	return d
}

// diffAllFiles is diffFiles comparing every file.
func diffAllFiles(old map[string]*fileBuild, files map[string]*fileData) fileDiff {
	// Module names depend on go.mod files and on which folders are Python
	// packages: when one of those files comes or goes, name every file again.
	for p, fd := range files {
		if o := old[p]; (o == nil || o.fd != fd) && namesModules(p) {
			old = nil
			break
		}
	}
	for p := range old {
		if _, ok := files[p]; !ok && namesModules(p) {
			old = nil
			break
		}
	}
	d := fileDiff{old: old, next: make(map[string]*fileBuild, len(files))}
	for p, fd := range files {
		if o := old[p]; o != nil && o.fd == fd {
			d.next[p] = o
			continue
		}
		d.todo = append(d.todo, &fileBuild{fd: fd})
	}
	for p := range old {
		if _, ok := files[p]; !ok {
			d.gone = true
			break
		}
	}
	// Files came or went: every file may resolve differently.
	d.sameFiles = old != nil && len(old) == len(files)
	for p := range files {
		if old[p] == nil {
			d.sameFiles = false
			break
		}
	}
	return d
}

// noteRefilled records which of the filled files' fileBuilds hold another
// *fileData than files (b.refilled); all is set when every file was filled.
func (b *builder) noteRefilled(files map[string]*fileData, filled []*fileBuild, all bool) {
	if all || b.refilled == nil {
		b.refilled = map[string]bool{}
	}
	for _, fb := range filled {
		if p := fb.fd.Path; files[p] != fb.fd {
			b.refilled[p] = true
		} else {
			delete(b.refilled, p)
		}
	}
}

// diffHinted is diffFiles comparing the hinted paths only, and the
// refilled ones, whose entry always differs from files (diffAllFiles
// processes them again every time, and so does this).
func diffHinted(old map[string]*fileBuild, files map[string]*fileData, hint, refilled map[string]bool) fileDiff {
	if len(refilled) > 0 {
		all := make(map[string]bool, len(hint)+len(refilled))
		for p := range hint {
			all[p] = true
		}
		for p := range refilled {
			all[p] = true
		}
		hint = all
	}
	for p := range hint {
		fd, in := files[p]
		o, had := old[p]
		if (in && (!had || o.fd != fd) || !in && had) && namesModules(p) {
			return diffAllFiles(nil, files)
		}
	}
	d := fileDiff{old: old, next: maps.Clone(old), sameFiles: len(old) == len(files)}
	for p := range hint {
		fd, in := files[p]
		o, had := old[p]
		switch {
		case !in:
			if had {
				delete(d.next, p)
				d.gone = true
			}
		case had && o.fd == fd:
		default:
			if !had {
				d.sameFiles = false
			}
			delete(d.next, p) // as in diffAllFiles: the caller adds the new one
			d.todo = append(d.todo, &fileBuild{fd: fd})
		}
	}
	return d
}

// sameDiff reports how two diffs of the same files differ (tests: the
// hinted one against the full one), or nil.
func sameDiff(a, b fileDiff) error {
	switch {
	case (a.old == nil) != (b.old == nil):
		return fmt.Errorf("old map: hinted nil %v, full nil %v", a.old == nil, b.old == nil)
	case a.gone != b.gone || a.sameFiles != b.sameFiles:
		return fmt.Errorf("gone %v/%v, same files %v/%v", a.gone, b.gone, a.sameFiles, b.sameFiles)
	case len(a.next) != len(b.next) || len(a.todo) != len(b.todo):
		return fmt.Errorf("%d/%d unchanged, %d/%d to do", len(a.next), len(b.next), len(a.todo), len(b.todo))
	}
	for p, fb := range b.next {
		if a.next[p] != fb {
			return fmt.Errorf("%s: unchanged in one only", p)
		}
	}
	todo := map[*fileData]bool{}
	for _, fb := range b.todo {
		todo[fb.fd] = true
	}
	for _, fb := range a.todo {
		if !todo[fb.fd] {
			return fmt.Errorf("%s: to do in one only", fb.fd.Path)
		}
	}
	return nil
}

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
