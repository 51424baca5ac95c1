package codegraph

// This file holds the lookups the resolver asks: modules, scopes, members.

import (
	"path"
	"slices"
	"strings"
)

// lookupModule returns the files of a module key, trying the language's
// candidate keys in order.
func (b *builder) lookupModule(fb *fileBuild, module string) (string, []*fileBuild) {
	for _, k := range fb.lang.importKeys(b.info, fb.fd.Path, module) {
		if fs, ok := b.modules[modKey(fb.lang.family, k)]; ok {
			return k, fs
		}
	}
	return "", nil
}

// packageFor returns the package node an external import names, if any.
func (b *builder) packageFor(fb *fileBuild, module string) string {
	m := b.packages[fb.lang.family]
	if len(m) == 0 {
		return ""
	}
	name := fb.lang.packageName(module)
	if name == "" {
		return ""
	}
	if id, ok := m[name]; ok {
		return id
	}
	// Go and npm: an import path inside a required module path; the longest
	// wins (golang.org/x/tools/gopls over golang.org/x/tools), whatever the
	// map's order.
	best, bestID := "", ""
	for p, id := range m {
		if len(p) > len(best) && strings.HasPrefix(module, p+"/") {
			best, bestID = p, id
		}
	}
	return bestID
}

// ensureScope binds the names a file can use: its own top-level definitions
// (for Go, its package's) and what it imports. Import edges are added here.
func (b *builder) ensureScope(fb *fileBuild) {
	if fb.lang == nil || fb.scopeState != 0 {
		return
	}
	fb.scopeState = 1
	defer func() { fb.scopeState = 2 }()
	if fb.res == nil {
		fb.res = newResult()
	}
	res := fb.res
	fd := fb.fd
	fb.scope = map[string]binding{}
	family := fb.lang.family
	// The module's own top-level names are looked up in the shared table
	// rather than copied into every file's scope (a Go package's names were
	// copied into each of its files: most of the memory of a Go index).
	fb.topScope = b.top[modKey(family, fb.key)]
	var spans []importSpan
	for _, im := range fd.Imports {
		key, targets := b.lookupModule(fb, im.Module)
		local := im.Alias
		if targets == nil {
			// Not in the project: an external package (when a manifest names
			// it) or an unresolved import.
			pkg := b.packageFor(fb, im.Module)
			if pkg != "" {
				res.addEdge(fb.fileID, pkg, EdgeImports, im.Line)
				res.external++
			} else if fb.lang.stdlib != nil && fb.lang.stdlib(im.Module) {
				res.external++
			} else {
				res.unresolvedRef(fd.Path, "import", im.Module, im.Line)
			}
			spans = append(spans, importSpan{im.Start, im.End, true})
			if local == "" {
				local = im.Name
			}
			if local == "" && im.Module != "" {
				local = defaultLocal(fb.lang, im.Module)
			}
			if local != "" && !im.Wildcard {
				if !fb.scopeHas(local) || im.Alias != "" {
					fb.scope[local] = binding{kind: bExternal, id: pkg}
				}
			}
			continue
		}
		spans = append(spans, importSpan{im.Start, im.End, false})
		res.resolved++
		for _, t := range targets[:1] {
			if t != fb {
				res.addEdge(fb.fileID, t.fileID, EdgeImports, im.Line)
			}
		}
		switch {
		case im.Wildcard:
			for name, id := range b.top[modKey(family, key)] {
				if !fb.scopeHas(name) && !strings.HasPrefix(name, "_") {
					fb.scope[name] = binding{kind: bDef, id: id}
				}
			}
		case im.Name != "":
			if local == "" {
				local = im.Name
			}
			name := im.Name
			if name == "default" {
				name = targets[0].fd.Default
			}
			if id, ok := b.top[modKey(family, key)][name]; ok && name != "" {
				fb.scope[local] = binding{kind: bDef, id: id}
				continue
			}
			// A name the module itself imports (a re-export, e.g. in __init__.py).
			if t := targets[0]; t != fb && name != "" {
				b.ensureScope(t)
				if bd, ok := t.scopeLookup(name); ok && t.scopeState == 2 && bd.kind != 0 {
					fb.scope[local] = bd
					continue
				}
			}
			sub := key + "." + im.Name
			if key == "" {
				sub = im.Name
			}
			if subs, ok := b.modules[modKey(family, sub)]; ok {
				res.addEdge(fb.fileID, subs[0].fileID, EdgeImports, im.Line)
				fb.scope[local] = binding{kind: bModule, mod: sub}
				continue
			}
			res.unresolvedRef(fd.Path, "import", im.Module+"."+im.Name, im.Line)
		default:
			if local == "" {
				local = defaultLocal(fb.lang, im.Module)
				if family == "python" {
					// "import a.b" binds "a"; dotted uses are resolved from the root.
					top, _, _ := strings.Cut(im.Module, ".")
					fb.scope[top] = binding{kind: bModule, mod: top}
					continue
				}
			}
			if local != "" && local != "_" && local != "." {
				fb.scope[local] = binding{kind: bModule, mod: key}
			}
		}
	}
	fb.spans = spans
}

// enclosingClassIdx returns the nearest class definition around def in the
// same file, or -1.
func enclosingClassIdx(fd *fileData, def int32) int32 {
	for d := def; d >= 0; d = fd.Defs[d].Parent {
		if fd.Defs[d].Kind == KindClass {
			return d
		}
	}
	return -1
}

// hintFor returns the one type recorded for variable obj as seen from def,
// with the scope it was recorded in.
func (fb *fileBuild) hintFor(obj string, def int32) (string, int32, bool) {
	if fb.hints == nil {
		return "", 0, false
	}
	if o, rest, ok := strings.Cut(obj, "."); ok && (slices.Contains(fb.lang.selfNames, o) || o == goReceiverVar(fb, def)) {
		ci := enclosingClassIdx(fb.fd, def)
		if ci < 0 {
			return "", 0, false
		}
		key := obj // "self." + rest without building it
		if o != "self" {
			key = "self." + rest
		}
		if ts, _ := fb.hintsAt(ci, true, key); len(ts) == 1 {
			return ts[0], def, true
		}
		return "", 0, false
	}
	s, in, ok := fb.sym(obj)
	if !ok || in&inHint == 0 {
		return "", 0, false // no scope has a hint for it
	}
	for d := def; ; d = fb.fd.Defs[d].Parent {
		if ts := fb.hintsOf(fb.rowAt(d, false, s)); ts != nil {
			if len(ts) == 1 {
				return ts[0], d, true
			}
			return "", 0, false
		}
		if d < 0 {
			return "", 0, false
		}
	}
}

// defaultLocal is the name an import without alias binds.
func defaultLocal(l *language, module string) string {
	switch l.family {
	case "go":
		base := path.Base(module)
		// gopkg.in/yaml.v3 → yaml, github.com/x/y/v2 → y
		if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
			base = path.Base(path.Dir(module))
		}
		base, _, _ = strings.Cut(base, ".")
		return strings.TrimPrefix(base, "go-")
	case "python":
		top, _, _ := strings.Cut(module, ".")
		return top
	}
	return ""
}

// enclosingClass returns the node ID of the class a reference inside def
// belongs to (its nearest class ancestor, or a Go method's receiver type).
func (b *builder) enclosingClass(fb *fileBuild, def int32) (string, bool) {
	for d := def; d >= 0; d = fb.fd.Defs[d].Parent {
		if fb.fd.Defs[d].Kind == KindClass {
			return fb.ids[d], true
		}
		if fb.fd.Defs[d].receiver() == "" {
			continue // (the node lookups below are for Go methods only)
		}
		n := b.node(fb.ids[d])
		if p := b.node(n.Parent); p.found() && p.Kind == KindClass {
			return p.ID, true
		}
	}
	return "", false
}

// member finds name in class cls or its bases (breadth first).
func (b *builder) member(cls, name string, skipSelf bool) (string, bool) {
	// The common cases without the walk's allocations: found in the class
	// itself, or a class without bases.
	if !skipSelf {
		if id, ok := b.members[cls][name]; ok {
			return id, true
		}
	}
	if len(b.bases[cls]) == 0 {
		return "", false
	}
	w := b.getWalk(cls)
	defer b.putWalk(w)
	for i := 0; i < len(w.queue); i++ {
		c := w.queue[i]
		if !(skipSelf && i == 0) {
			if id, ok := b.members[c][name]; ok {
				return id, true
			}
		}
		for _, base := range b.bases[c] {
			w.visit(base)
		}
	}
	return "", false
}

// lookupName binds a bare name seen inside definition def: definitions nested
// in an enclosing scope first, then the file's scope.
func (fb *fileBuild) lookupName(name string, def int32) (binding, bool) {
	s, in, _ := fb.sym(name)
	if in&(inNested|inLocal) == 0 {
		return fb.scopeLookup(name) // neither nested nor local anywhere in the file
	}
	for d := def; ; d = fb.fd.Defs[d].Parent {
		// A class body is not an enclosing scope of the functions inside it.
		if d >= 0 && d != def && fb.fd.Defs[d].Kind == KindClass {
			continue
		}
		if d < 0 {
			break // (nested holds no module-level entries that count)
		}
		r := fb.rowAt(d, false, s)
		if !r.found {
			continue
		}
		if r.nested > 0 {
			return binding{kind: bDef, id: fb.ids[r.nested-1]}, true
		}
		if r.local {
			return binding{kind: bLocal}, true // a local variable: its value is unknown
		}
	}
	return fb.scopeLookup(name)
}

// scopeLookup binds name in the file's scope: what its imports bind, else
// its module's top-level definitions.
func (fb *fileBuild) scopeLookup(name string) (binding, bool) {
	if bd, ok := fb.scope[name]; ok {
		return bd, true
	}
	if id, ok := fb.topScope[name]; ok {
		return binding{kind: bDef, id: id}, true
	}
	return binding{}, false
}

// scopeHas reports whether name is bound in the file's scope.
func (fb *fileBuild) scopeHas(name string) bool {
	_, ok := fb.scopeLookup(name)
	return ok
}

func isDottedIdent(s string) bool {
	if s == "" {
		return false
	}
	for rest, more := s, true; more; {
		var part string
		part, rest, more = strings.Cut(rest, ".")
		if part == "" {
			return false
		}
		for i, r := range part {
			if !(r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') || r > 127) {
				return false
			}
		}
	}
	return true
}
