package codegraph

// This file holds the builder's resolver: binding each reference to a
// definition.

import (
	"iter"
	"slices"
	"strings"
)

// resolveRefs binds a file's references. With inherits set it handles base
// classes only (they must be known before method lookups through bases).
func (b *builder) resolveRefs(fb *fileBuild, res *fileResult, inherits bool) {
	if fb.lang == nil || inherits && len(fb.inherits) == 0 {
		return // (fb.inherits lists the file's refInherit records)
	}
	fd := fb.fd
	family := fb.lang.family
	var fe *flowEval
	refs := fd.Refs.All()
	if inherits {
		refs = inheritRefs(fd.Refs) // (the others are stepped over, not decoded)
	} else if flowFamily(fb.lang) {
		fe = newFlowEval(b, fb)
		defer b.releaseFlowEval(fe)
		// The flow passes loop over the file's references again (stores,
		// arguments, partners): decoded once for all of them.
		rb := b.decodeRefs(fd.Refs)
		defer b.putRefs(rb)
		fe.refs = rb.rs
		refs = slices.All(rb.rs)
	}
	for _, r := range refs {
		if r.Kind == refAssign || r.Kind == refLocal || r.Kind == refValue || (r.Kind == refInherit) != inherits {
			continue
		}
		if r.Kind == refDecorator && r.Def >= 0 {
			r.Def = fd.Defs[r.Def].Parent // applied in the scope around the definition
		}
		src := fb.fileID
		if r.Def >= 0 {
			src = fb.ids[r.Def]
		}
		if r.Kind == refArg || r.Kind == refImplicit {
			if fe != nil {
				b.resolveFlowExtra(fe, fb, r, src, res)
			} else if family == "go" && r.Kind == refArg {
				b.goResolveArg(fb, r, res) // flow_go_values.go
			}
			continue
		}
		ek := EdgeCalls
		kindName := "call"
		switch r.Kind {
		case refUse:
			ek = EdgeUses
		case refInherit:
			ek = EdgeInherits
			kindName = "inherit"
		}
		var target string
		var outcome outcome
		if family == "go" && r.Kind != refInherit && (r.Object != "" || r.Kind == refCall) {
			target, outcome = b.goResolveRef(fb, r) // flow_go.go
		} else {
			target, outcome = b.resolveRef(fb, family, r, 0)
		}
		if r.Kind == refInherit && family == "js" && outcome == outResolved {
			// class C extends make(…): the base is the class make makes
			// (flow_javascript.go); a function that makes none is no base.
			if id, ok := b.jsMadeClass(target); ok {
				target = id
			} else if n := b.node(target); n.found() && n.Kind != KindClass {
				outcome = outUnresolved
			}
		}
		if outcome == outUnresolved && family == "js" && r.Object == "this" {
			if id, ok := b.jsThisProperty(fb, r); ok { // flow_javascript.go
				target, outcome = id, outResolved
			}
		}
		if fe != nil && b.resolveFlowRef(fe, fb, r, src, target, outcome, res) {
			res.resolved++
			continue
		}
		switch outcome {
		case outResolved:
			if r.Kind == refUse && target == src {
				continue
			}
			res.addEdge(src, target, ek, r.Line)
			res.resolved++
			if r.Kind == refInherit {
				if n := b.node(target); n.found() && n.Kind == KindClass {
					res.bases = append(res.bases, [2]string{src, target})
				}
			}
		case outExternal:
			if r.Kind != refUse {
				res.external++
			}
			if r.Kind == refInherit {
				res.extBases = append(res.extBases, src)
			}
		case outBuiltin:
		case outUnresolved:
			if r.Kind == refInherit {
				res.extBases = append(res.extBases, src)
			}
			if r.Kind != refUse {
				name := r.Name
				if r.Object != "" {
					name = r.Object + "." + r.Name
				}
				res.unresolvedRef(fb.fd.Path, kindName, name, r.Line)
			}
		}
	}
}

// inheritRefs yields l's refInherit records, in order, with their index
// among them.
func inheritRefs(l refList) iter.Seq2[int, refRec] {
	return func(yield func(int, refRec) bool) {
		i := 0
		for c := range l.KindCursors(refInherit) {
			r, _ := l.at(c)
			if !yield(i, r) {
				return
			}
			i++
		}
	}
}

type outcome uint8

const (
	outResolved outcome = iota
	outExternal
	outBuiltin
	outUnresolved
)

// memberOutcome looks name up in class cls; a miss in a class with a base
// outside the project is external (the member may be inherited from it).
func (b *builder) memberOutcome(cls, name string, skipSelf bool) (string, outcome) {
	if id, ok := b.member(cls, name, skipSelf); ok {
		return id, outResolved
	}
	if len(b.bases[cls]) == 0 { // no walk needed
		if b.extBase[cls] {
			return "", outExternal
		}
		return "", outUnresolved
	}
	w := b.getWalk(cls)
	defer b.putWalk(w)
	for i := 0; i < len(w.queue); i++ {
		c := w.queue[i]
		if b.extBase[c] {
			return "", outExternal
		}
		for _, base := range b.bases[c] {
			w.visit(base)
		}
	}
	return "", outUnresolved
}

// resolveType resolves a type expression written in scope def to a class.
func (b *builder) resolveType(fb *fileBuild, family, typ string, def int32, depth int) (string, outcome) {
	t := strings.TrimLeft(strings.TrimSpace(typ), "*&")
	if i := strings.IndexAny(t, "[(<"); i > 0 {
		t = t[:i]
	}
	obj, name := "", t
	if i := strings.LastIndex(t, "."); i > 0 {
		obj, name = t[:i], t[i+1:]
	}
	if t == "" || strings.ContainsAny(t[:1], "\"'[{`") {
		return "", outBuiltin // a literal: list, dict, str…
	}
	id, out := b.resolveRef(fb, family, refRec{Kind: refUse, Name: name, Object: obj, Def: def}, depth+1)
	if out == outResolved {
		n := b.node(id)
		if n.found() && (n.Kind == KindFunction || n.Kind == KindMethod) {
			// A call result: the function's recorded result type.
			if loc, ok := b.defAt(id); ok && loc.fb.hints != nil {
				if ts, _ := loc.fb.hintsAt(loc.idx, false, returnHint); len(ts) == 1 && depth < 4 {
					return b.resolveType(loc.fb, family, ts[0], loc.idx, depth+1)
				}
			}
			return "", outUnresolved
		}
		if !n.found() || n.Kind != KindClass {
			return "", outUnresolved
		}
	}
	if out == outBuiltin {
		out = outExternal
	}
	return id, out
}

func (b *builder) resolveRef(fb *fileBuild, family string, r refRec, depth int) (string, outcome) {
	if depth > 4 {
		return "", outUnresolved
	}
	if r.Object != "" {
		if typ, scope, ok := fb.hintFor(r.Object, r.Def); ok {
			cls, out := b.resolveType(fb, family, typ, scope, depth)
			if out != outResolved {
				return "", out
			}
			return b.memberOutcome(cls, r.Name, false)
		}
		if c := r.Object[0]; c == '"' || c == '\'' || c == '[' || c == '{' || c == '`' {
			return "", outBuiltin // a method of a literal
		}
		if strings.HasSuffix(r.Object, "()") && isDottedIdent(r.Object[:len(r.Object)-2]) && r.Object != "super()" {
			// Foo().method(): the constructor's class, or a function's result type.
			cls, out := b.resolveType(fb, family, r.Object[:len(r.Object)-2], r.Def, depth)
			if out != outResolved {
				return "", out
			}
			return b.memberOutcome(cls, r.Name, false)
		}
	}
	if r.Object == "" {
		bd, ok := fb.lookupName(r.Name, r.Def)
		if !ok {
			if fb.lang.builtins[r.Name] {
				return "", outBuiltin
			}
			return "", outUnresolved
		}
		switch bd.kind {
		case bDef:
			return bd.id, outResolved
		case bExternal:
			return "", outExternal
		case bModule:
			if family == "js" {
				if id, ok := b.jsModuleDefault(bd.mod); ok { // flow_javascript.go
					return id, outResolved
				}
			}
		}
		return "", outUnresolved
	}
	obj := r.Object
	if slices.Contains(fb.lang.selfNames, obj) || (r.Def >= 0 && fb.fd.Defs[r.Def].receiver() != "" && obj == goReceiverVar(fb, r.Def)) {
		cls, ok := b.enclosingClass(fb, r.Def)
		if !ok {
			return "", outUnresolved
		}
		return b.memberOutcome(cls, r.Name, false)
	}
	if obj == "super()" || strings.HasPrefix(obj, "super(") {
		cls, ok := b.enclosingClass(fb, r.Def)
		if !ok {
			return "", outUnresolved
		}
		return b.memberOutcome(cls, r.Name, true)
	}
	if !isDottedIdent(obj) {
		return "", outUnresolved
	}
	// obj's segments are walked with strings.Cut (no strings.Split: this
	// runs for every dotted reference and every value-flow lookup).
	first, rest, more := strings.Cut(obj, ".")
	bd, ok := fb.lookupName(first, r.Def)
	if !ok {
		if fb.lang.builtins[first] {
			return "", outBuiltin
		}
		return "", outUnresolved
	}
	switch bd.kind {
	case bExternal:
		return "", outExternal
	case bDef:
		if !more {
			if n := b.node(bd.id); n.found() && n.Kind == KindClass {
				return b.memberOutcome(bd.id, r.Name, false)
			}
		}
		return "", outUnresolved
	case bModule:
		key := bd.mod
		for more {
			var s string
			s, rest, more = strings.Cut(rest, ".")
			next := key + "." + s
			if _, ok := b.modules[modKey(family, next)]; ok {
				key = next
				continue
			}
			last := !more
			// A class in the module, then a member of it.
			if cid, ok := b.top[modKey(family, key)][s]; ok && last {
				if n := b.node(cid); n.found() && n.Kind == KindClass {
					return b.memberOutcome(cid, r.Name, false)
				}
			}
			// A name the module imports (os.path, a re-exported class).
			if mb, ok := b.moduleScope(family, key, s); ok {
				switch {
				case mb.kind == bModule:
					key = mb.mod
					continue
				case mb.kind == bExternal:
					return "", outExternal
				case mb.kind == bDef && last:
					if n := b.node(mb.id); n.found() && n.Kind == KindClass {
						return b.memberOutcome(mb.id, r.Name, false)
					}
				}
			}
			return "", outUnresolved
		}
		if id, ok := b.top[modKey(family, key)][r.Name]; ok {
			return id, outResolved
		}
		if mb, ok := b.moduleScope(family, key, r.Name); ok {
			switch mb.kind {
			case bDef:
				return mb.id, outResolved
			case bExternal:
				return "", outExternal
			}
		}
		if _, ok := b.modules[modKey(family, key)]; !ok {
			// e.g. "import os.path" binds "os" which is not in the project.
			return "", outExternal
		}
		return "", outUnresolved
	}
	return "", outUnresolved
}

// moduleScope looks name up among the names a module binds by importing
// them (its scope is built before references are resolved).
func (b *builder) moduleScope(family, key, name string) (binding, bool) {
	fs := b.modules[modKey(family, key)]
	if len(fs) == 0 || fs[0].scopeState != 2 {
		return binding{}, false
	}
	bd, ok := fs[0].scopeLookup(name)
	return bd, ok && bd.kind != bLocal
}

// goReceiverVar returns the receiver variable name of a Go method def (or of
// the method enclosing def), stored after the receiver type as "Type var".
func goReceiverVar(fb *fileBuild, def int32) string {
	for d := def; d >= 0; d = fb.fd.Defs[d].Parent {
		if fb.fd.Defs[d].receiver() != "" {
			return fb.fd.Defs[d].selfVar()
		}
	}
	return ""
}
