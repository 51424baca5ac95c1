package codegraph

import (
	"strconv"
	"strings"
)

// The value-flow layer (Python and JS/TS): an assignment graph whose nodes
// are names (variables, parameters, self.attributes, class attributes,
// function results) and whose edges come from assignments, defaults and
// returns recorded by extraction (refValue: the value of an expression;
// refAssign: the result of calling an expression, or an annotated type).
// It is solved on demand, memoised per file and bounded in depth, when a
// call cannot be bound by name: the abstract values a callee expression can
// hold are definitions (functions, methods, classes as values) and instances
// of classes. What other files can read (module-level names, class
// attributes, results) is part of a file's interface hash, so an edit to it
// re-resolves the importers as any interface change does.

// flowSrc is one value flowing into a name: the expression text, the scope
// (definition index, -1 for the module) it is evaluated in, and whether the
// name holds the expression's value or the result of calling it.
type flowSrc struct {
	scope int32
	expr  string
	call  bool
}

// flowVal is an abstract value: a definition node, or an instance of a class.
type flowVal struct {
	id   string
	inst bool
}

// flowFamilies are the language families the value-flow layer serves.
func flowFamily(l *language) bool {
	return l != nil && (l.family == "python" || l.family == "js")
}

// fillFlow builds fb's flow table from its refValue and refAssign records
// and hashes its interface part (what other files read) with hs.
func fillFlow(fb *fileBuild, hs func(...string)) {
	if !flowFamily(fb.lang) {
		return
	}
	fd := fb.fd
	fillFacts(fb, hs)
	if fb.lang.family == "js" {
		fillJSDoc(fb, hs)
	}
	for _, r := range fd.Refs {
		if r.Kind != refValue && r.Kind != refAssign {
			continue
		}
		src := flowSrc{scope: r.Def, expr: r.Object, call: r.Kind == refAssign}
		k, ok := flowKey(fb, r.Name, r.Def)
		if !ok {
			continue
		}
		if fb.flow == nil {
			fb.flow = map[hintKey][]flowSrc{}
		}
		fb.flow[k] = append(fb.flow[k], src)
		if k.scope < 0 || k.attr || k.name == returnHint || (fb.facts != nil && containsStr(fb.facts.params[k.scope], k.name)) {
			hs("f", strconv.Itoa(int(k.scope)), strconv.FormatBool(k.attr), k.name,
				strconv.Itoa(int(src.scope)), src.expr, strconv.FormatBool(src.call))
		}
		// A class-body name (x = f, x: T) is also an attribute of the class.
		if r.Def >= 0 && fd.Defs[r.Def].Kind == KindClass && !k.attr && r.Name != returnHint {
			ak := hintKey{scope: r.Def, attr: true, name: "self." + r.Name}
			fb.flow[ak] = append(fb.flow[ak], src)
		}
	}
}

// flowFacts are what a file's functions do with their parameters and which
// decorators wrap them, for the call sites in other files.
type flowFacts struct {
	params map[int32][]string      // function → parameter names, in order
	uses   map[int32][]paramUse    // function → calls through its parameters
	decos  map[int32][]decoratorAt // function → its decorators
}

// paramUse is a call through a parameter: p() (member "") or p.member(),
// made by definition caller (the function or one nested in it).
type paramUse struct {
	param, member string
	caller        int32
}

// decoratorAt is a decorator expression and the scope it is evaluated in.
type decoratorAt struct {
	expr  string
	scope int32
}

// fillFacts records parameter uses and decorators (hashed into the
// interface: call sites in other files read them).
func fillFacts(fb *fileBuild, hs func(...string)) {
	fd := fb.fd
	ff := &flowFacts{params: map[int32][]string{}, uses: map[int32][]paramUse{}, decos: map[int32][]decoratorAt{}}
	for i, d := range fd.Defs {
		if d.Kind == KindFunction || d.Kind == KindMethod {
			if ps := sigParams(d.Sig, d.Name); len(ps) > 0 {
				ff.params[int32(i)] = ps
			}
			if fb.lang.family == "js" {
				hs("sig", strconv.Itoa(i), d.Sig) // callbacks are typed from it
			}
		}
	}
	for _, r := range fd.Refs {
		switch r.Kind {
		case refDecorator:
			if r.Def < 0 {
				continue
			}
			e := r.Name
			if r.Object != "" {
				e = r.Object + "." + r.Name
			}
			ff.decos[r.Def] = append(ff.decos[r.Def], decoratorAt{e, fd.Defs[r.Def].Parent})
			hs("deco", strconv.Itoa(int(r.Def)), e)
		case refCall:
			name, member := r.Name, ""
			if r.Object != "" {
				if !isDottedIdent(r.Object) || strings.Contains(r.Object, ".") {
					continue
				}
				name, member = r.Object, r.Name
			}
			if containsStr(fb.lang.selfNames, name) {
				continue // self.m(): the class hierarchy's business
			}
			if f := paramOwner(fb, ff, name, r.Def); f >= 0 {
				u := paramUse{param: name, member: member, caller: r.Def}
				if !containsUse(ff.uses[f], u) {
					ff.uses[f] = append(ff.uses[f], u)
					hs("use", strconv.Itoa(int(f)), name, member, strconv.Itoa(int(r.Def)))
				}
			}
		}
	}
	fb.facts = ff
}

func containsUse(us []paramUse, u paramUse) bool {
	for _, x := range us {
		if x == u {
			return true
		}
	}
	return false
}

// paramOwner returns the function whose parameter name is, seen from def
// (-1 when name is something else: a nested definition, a local).
func paramOwner(fb *fileBuild, ff *flowFacts, name string, def int32) int32 {
	for d := def; d >= 0; d = fb.fd.Defs[d].Parent {
		if d != def && fb.fd.Defs[d].Kind == KindClass {
			continue
		}
		if _, ok := fb.nested[nestKey{d, name}]; ok {
			return -1
		}
		if containsStr(ff.params[d], name) {
			return d
		}
		if fb.locals[nestKey{d, name}] {
			return -1
		}
	}
	return -1
}

// sigParams returns the parameter names of a Python or JS/TS signature
// ("def f(a, b=1, *args, c: int = 2)"); positional ones first, a "*" entry
// marks where positions stop.
func sigParams(sig, name string) []string {
	i := strings.Index(sig, name+"(")
	if i < 0 {
		i = strings.IndexByte(sig, '(')
		if i < 0 {
			return nil
		}
	} else {
		i += len(name)
	}
	depth, start := 0, i+1
	var out []string
	add := func(p string) {
		p = strings.TrimSpace(p)
		if j := strings.IndexAny(p, ":="); j >= 0 {
			p = strings.TrimSpace(p[:j])
		}
		p = strings.TrimSuffix(p, "?")
		switch {
		case p == "" || p == "/":
		case strings.HasPrefix(p, "*") || strings.HasPrefix(p, "..."):
			out = append(out, "*")
		default:
			out = append(out, p)
		}
	}
	for j := i; j < len(sig); j++ {
		switch sig[j] {
		case '(', '[', '{', '<':
			depth++
		case '>':
			if j > 0 && sig[j-1] != '=' {
				depth--
			}
		case ')', ']', '}':
			depth--
			if depth == 0 {
				add(sig[start:j])
				return out
			}
		case ',':
			if depth == 1 {
				add(sig[start:j])
				start = j + 1
			}
		}
	}
	return out
}

// flowKey names the variable a record assigns: self.x in a method is the
// attribute x of the enclosing class.
func flowKey(fb *fileBuild, name string, def int32) (hintKey, bool) {
	if obj, rest, ok := strings.Cut(name, "."); ok {
		if !containsStr(fb.lang.selfNames, obj) || strings.Contains(rest, ".") {
			return hintKey{}, false
		}
		ci := enclosingClassIdx(fb.fd, def)
		if ci < 0 {
			return hintKey{}, false
		}
		return hintKey{scope: ci, attr: true, name: "self." + rest}, true
	}
	return hintKey{scope: def, name: name}, true
}

// flowEval evaluates expressions for the references of one file.
type flowEval struct {
	b    *builder
	fb   *fileBuild // the file whose references are resolved
	memo map[flowMemoKey][]flowVal
	// extra are types learnt while resolving fb: the parameters of a
	// callback typed by the callee's declared parameter (JS/TS).
	extra map[hintKey][]flowSrcIn
	// calledWith indexes fb's own arguments by the callee they are passed
	// to (built on first use); params memoises parameter values.
	calledWith map[string][]refRec
	params     map[hintKey][]flowVal
	stores     map[refRec]bool // subscripts written or deleted (not read)
}

// flowSrcIn is a flow source evaluated in another file.
type flowSrcIn struct {
	fb  *fileBuild
	src flowSrc
}

type flowMemoKey struct {
	fb    *fileBuild
	scope int32
	expr  string
	call  bool
}

// maxFlowDepth bounds the chain of names followed for one expression.
const maxFlowDepth = 10

func newFlowEval(b *builder, fb *fileBuild) *flowEval {
	return &flowEval{b: b, fb: fb, memo: map[flowMemoKey][]flowVal{}}
}

// src evaluates one flow source.
func (fe *flowEval) src(fb *fileBuild, s flowSrc, depth int) []flowVal {
	mk := flowMemoKey{fb, s.scope, s.expr, s.call}
	if v, ok := fe.memo[mk]; ok {
		return v
	}
	fe.memo[mk] = nil // a cycle evaluates to nothing more
	var out []flowVal
	if s.call {
		out = fe.callResult(fe.expr(fb, s.scope, s.expr, depth+1), depth+1)
	} else {
		out = fe.expr(fb, s.scope, s.expr, depth+1)
	}
	fe.memo[mk] = out
	return out
}

// srcs evaluates every source of a variable.
func (fe *flowEval) srcs(fb *fileBuild, ss []flowSrc, depth int) []flowVal {
	var out []flowVal
	for _, s := range ss {
		out = addVals(out, fe.src(fb, s, depth)...)
	}
	return out
}

func addVals(out []flowVal, vs ...flowVal) []flowVal {
	for _, v := range vs {
		dup := false
		for _, o := range out {
			if o == v {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

// expr returns the values expression e (a dotted name, optionally called:
// "f()", "a.b()") can hold in scope of fb.
func (fe *flowEval) expr(fb *fileBuild, scope int32, e string, depth int) []flowVal {
	if depth > maxFlowDepth {
		return nil
	}
	e = dropCallArgs(strings.TrimSpace(e))
	if strings.HasPrefix(e, "new ") && fb.lang.family == "js" {
		e = strings.TrimSpace(e[4:]) // new C() is C's instance, as a call of C
		if !strings.Contains(e, "(") {
			e += "()"
		}
	}
	if strings.HasPrefix(e, "super().") || strings.HasPrefix(e, "super(") {
		if i := strings.Index(e, ")."); i > 0 && isDottedIdent(e[i+2:]) && !strings.Contains(e[i+2:], ".") {
			if id, out := fe.b.resolveRef(fb, fb.lang.family, refRec{Kind: refUse, Name: e[i+2:], Object: e[:i+1], Def: scope}, 0); out == outResolved {
				return []flowVal{{id: id}}
			}
		}
		return nil
	}
	if strings.HasSuffix(e, "()") {
		return fe.callResult(fe.expr(fb, scope, e[:len(e)-2], depth+1), depth+1)
	}
	if i := strings.LastIndex(e, ")."); i > 0 && isDottedIdent(e[i+2:]) {
		// a.f().b: an attribute of a call's result.
		var out []flowVal
		for _, v := range fe.expr(fb, scope, e[:i+1], depth+1) {
			for _, seg := range []string{e[i+2:]} {
				out = addVals(out, fe.attrPath(v, seg, depth+1)...)
			}
		}
		return out
	}
	if !isDottedIdent(e) {
		return nil
	}
	obj, name := "", e
	if i := strings.LastIndex(e, "."); i > 0 {
		obj, name = e[:i], e[i+1:]
	}
	if obj == "" {
		return fe.name(fb, scope, name, depth)
	}
	if obj == "super" && fb.lang.family == "js" {
		obj = "super()" // super.m() in JS/TS is Python's super().m()
		if id, out := fe.b.resolveRef(fb, fb.lang.family, refRec{Kind: refUse, Name: name, Object: obj, Def: scope}, 0); out == outResolved {
			return []flowVal{{id: id}}
		}
		return nil
	}
	// Modules, classes and self members first, as calls are bound.
	if id, out := fe.b.resolveRef(fb, fb.lang.family, refRec{Kind: refUse, Name: name, Object: obj, Def: scope}, 0); out == outResolved {
		return []flowVal{{id: id}}
	}
	if t, ok := fe.module(fb, scope, obj); ok {
		// A module-level variable of a project module.
		return fe.srcs(t, t.flow[hintKey{scope: -1, name: name}], depth)
	}
	var out []flowVal
	for _, v := range fe.expr(fb, scope, obj, depth+1) {
		out = addVals(out, fe.attr(v, name, depth+1)...)
	}
	return out
}

// module returns the project file of module expression obj ("pkg.mod").
func (fe *flowEval) module(fb *fileBuild, scope int32, obj string) (*fileBuild, bool) {
	segs := strings.Split(obj, ".")
	bd, ok := fb.lookupName(segs[0], scope)
	if !ok || bd.kind != bModule {
		return nil, false
	}
	key := bd.mod
	fam := fb.lang.family
	for _, s := range segs[1:] {
		next := key + "." + s
		if _, ok := fe.b.modules[modKey(fam, next)]; ok {
			key = next
			continue
		}
		mb, ok := fe.b.moduleScope(fam, key, s)
		if !ok || mb.kind != bModule {
			return nil, false
		}
		key = mb.mod
	}
	fs := fe.b.modules[modKey(fam, key)]
	if len(fs) == 0 {
		return nil, false
	}
	return fs[0], true
}

// name returns the values of a bare name seen in scope.
func (fe *flowEval) name(fb *fileBuild, scope int32, name string, depth int) []flowVal {
	if depth > maxFlowDepth {
		return nil
	}
	if name == "super" && fb.lang.family == "js" {
		// super(...) in a constructor: the base class's constructor.
		cls, ok := fe.b.enclosingClass(fb, scope)
		if !ok {
			return nil
		}
		// The extends clause comes first; the rest are implemented interfaces.
		if bs := fe.b.bases[cls]; len(bs) > 0 {
			return []flowVal{{id: bs[0]}}
		}
		return nil
	}
	if containsStr(fb.lang.selfNames, name) {
		if cls, ok := fe.b.enclosingClass(fb, scope); ok {
			if name == "cls" {
				return []flowVal{{id: cls}}
			}
			return []flowVal{{id: cls, inst: true}}
		}
	}
	for d := scope; ; d = fb.fd.Defs[d].Parent {
		// A class body is not an enclosing scope of the functions inside it.
		if d >= 0 && d != scope && fb.fd.Defs[d].Kind == KindClass {
			continue
		}
		if i, ok := fb.nested[nestKey{d, name}]; ok && d >= 0 {
			return []flowVal{{id: fb.ids[i]}}
		}
		if xs, ok := fe.extra[hintKey{scope: d, name: name}]; ok && fb == fe.fb {
			var out []flowVal
			for _, x := range xs {
				out = addVals(out, fe.src(x.fb, x.src, depth)...)
			}
			return out
		}
		if ss, ok := fb.flow[hintKey{scope: d, name: name}]; ok {
			return fe.srcs(fb, ss, depth)
		}
		if d < 0 {
			break
		}
		if fb.locals[nestKey{d, name}] {
			if fb == fe.fb && fb.facts != nil && containsStr(fb.facts.params[d], name) {
				return fe.paramValues(fb, d, name, depth)
			}
			return nil // a local nothing is known about
		}
	}
	if bd, ok := fb.scope[name]; ok {
		if bd.kind == bDef {
			return []flowVal{{id: bd.id}}
		}
		if bd.kind != bExternal {
			return nil
		}
	}
	// A module-level variable imported from another project module.
	for _, im := range fb.fd.Imports {
		local := im.Alias
		if local == "" {
			local = im.Name
		}
		if local != name || im.Name == "" || im.Wildcard {
			continue
		}
		_, targets := fe.b.lookupModule(fb, im.Module)
		if len(targets) == 0 || targets[0] == fb {
			return nil
		}
		// Its module-level value, or a name it imports in turn (__init__.py).
		return fe.name(targets[0], -1, im.Name, depth+1)
	}
	return nil
}

// attr returns the values of attribute name of value v.
func (fe *flowEval) attr(v flowVal, name string, depth int) []flowVal {
	n := fe.b.nodeByID[v.id]
	if n == nil || n.Kind != KindClass {
		return nil
	}
	var out []flowVal
	fe.b.walkMRO(v.id, func(c string) bool {
		loc, ok := fe.b.defLoc[c]
		if !ok {
			return true
		}
		if id, ok := fe.b.members[c][name]; ok {
			out = []flowVal{{id: id}}
			return false
		}
		if ss, ok := loc.fb.flow[hintKey{scope: loc.idx, attr: true, name: "self." + name}]; ok {
			out = fe.srcs(loc.fb, ss, depth)
			return false
		}
		return true
	})
	return out
}

// callResult returns what calling each value returns: a class gives an
// instance, a function the values of its returns.
func (fe *flowEval) callResult(vs []flowVal, depth int) []flowVal {
	var out []flowVal
	for _, v := range vs {
		n := fe.b.nodeByID[v.id]
		if n == nil {
			continue
		}
		switch {
		case v.inst:
			if id, ok := fe.b.member(v.id, "__call__", false); ok {
				out = addVals(out, fe.returns(id, depth)...)
			}
		case n.Kind == KindClass:
			out = addVals(out, flowVal{id: v.id, inst: true})
		case n.Kind == KindFunction || n.Kind == KindMethod:
			out = addVals(out, fe.returns(v.id, depth)...)
		}
	}
	return out
}

// returns evaluates the results recorded for function id.
func (fe *flowEval) returns(id string, depth int) []flowVal {
	loc, ok := fe.b.defLoc[id]
	if !ok || depth > maxFlowDepth {
		return nil
	}
	return fe.srcs(loc.fb, loc.fb.flow[hintKey{scope: loc.idx, name: returnHint}], depth)
}

// walkMRO visits class cls and its bases breadth first until fn says stop.
func (b *builder) walkMRO(cls string, fn func(string) bool) {
	seen := map[string]bool{cls: true}
	queue := []string{cls}
	for i := 0; i < len(queue); i++ {
		if !fn(queue[i]) {
			return
		}
		for _, base := range b.bases[queue[i]] {
			if !seen[base] {
				seen[base] = true
				queue = append(queue, base)
			}
		}
	}
}

// flowCallTargets returns the definitions a call the name rules could not
// bind can reach through values: functions and methods held by variables,
// attributes and results, classes (constructors) and callable instances.
func (fe *flowEval) flowCallTargets(fb *fileBuild, r refRec) []string {
	e := r.Name
	if r.Object != "" {
		e = r.Object + "." + r.Name
	}
	var out []string
	for _, v := range fe.expr(fb, r.Def, e, 0) {
		switch {
		case v.inst:
			if id, ok := fe.b.member(v.id, "__call__", false); ok && !containsStr(out, id) {
				out = append(out, id)
			}
		default:
			if n := fe.b.nodeByID[v.id]; n != nil && n.Kind != KindFile && n.Kind != KindPackage && !containsStr(out, v.id) {
				out = append(out, v.id)
			}
		}
	}
	return out
}

// invertBases maps each class to its direct subclasses.
func invertBases(bases map[string][]string) map[string][]string {
	subs := map[string][]string{}
	for c, bs := range bases {
		for _, base := range bs {
			subs[base] = append(subs[base], c)
		}
	}
	return subs
}

// dispatchTargets returns the methods overriding target (a method of a
// class) in the subclasses of cls, the receiver's static class.
func (b *builder) dispatchTargets(cls, target string) []string {
	tn := b.nodeByID[target]
	if tn == nil || tn.Kind != KindMethod || len(b.subs[cls]) == 0 {
		return nil
	}
	var out []string
	seen := map[string]bool{cls: true}
	queue := []string{cls}
	for i := 0; i < len(queue); i++ {
		for _, s := range b.subs[queue[i]] {
			if seen[s] {
				continue
			}
			seen[s] = true
			queue = append(queue, s)
			if id, ok := b.members[s][tn.Name]; ok && id != target && !containsStr(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// resolveFlowRef adds what the value-flow layer knows about reference r of
// fb to res, after (or instead of) the name rules: handled reports that r
// needs nothing more.
//
//   - decorators: a call of the decorator from the scope around the definition;
//   - a constructor call also calls __init__, found along the bases;
//   - a method call on self or a typed receiver dispatches to the overrides
//     in subclasses of the receiver's class;
//   - a call the name rules could not bind is bound through values.
func (b *builder) resolveFlowRef(fe *flowEval, fb *fileBuild, r refRec, src, target string, out outcome, res *fileResult) (handled bool) {
	if r.Kind != refCall && r.Kind != refDecorator {
		return false
	}
	if r.Kind == refDecorator && r.Object != "" && out == outUnresolved &&
		(r.Name == "setter" || r.Name == "getter" || r.Name == "deleter") {
		return true // @prop.setter: a method of the built-in property
	}
	var targets []string
	if out == outResolved {
		targets = []string{target}
	} else if out == outUnresolved {
		targets = fe.flowCallTargets(fb, r)
		for _, t := range targets {
			res.addEdge(src, t, EdgeCalls, r.Line)
		}
		handled = len(targets) > 0
	}
	for _, t := range targets {
		n := b.nodeByID[t]
		if n == nil {
			continue
		}
		if n.Kind == KindClass {
			if init, ok := b.member(t, ctorName(fb.lang), false); ok {
				res.addEdge(src, init, EdgeCalls, r.Line)
			}
		}
		if r.Kind == refCall && (n.Kind == KindFunction || n.Kind == KindMethod) {
			for _, w := range fe.wrappers(t) {
				res.addEdge(src, w, EdgeCalls, r.Line)
			}
		}
		if n.Kind != KindMethod || r.Object == "" || strings.HasPrefix(r.Object, "super(") {
			continue
		}
		cls := n.Parent
		if containsStr(fb.lang.selfNames, r.Object) {
			if c, ok := b.enclosingClass(fb, r.Def); ok {
				cls = c
			}
		}
		for _, d := range b.dispatchTargets(cls, t) {
			res.addEdge(src, d, EdgeDispatches, r.Line)
		}
	}
	return handled
}

// flowDependents returns the project files fb imports directly: a changed
// interface (say, a new override) can change the dispatch edges of its base
// classes' files, which fb imports to name them.
func (b *builder) flowDependents(fb *fileBuild) []*fileBuild {
	if !flowFamily(fb.lang) {
		return nil
	}
	var out []*fileBuild
	for _, im := range fb.fd.Imports {
		if _, ts := b.lookupModule(fb, im.Module); len(ts) > 0 && ts[0] != fb {
			out = append(out, ts[0])
		}
	}
	return out
}

// paramSlot names the parameter of callee (a definition node) that
// argument slot (a position or a keyword) binds; shift skips self.
func (b *builder) paramSlot(callee, slot string, bound bool) (defLocation, string, bool) {
	loc, ok := b.defLoc[callee]
	if !ok || loc.fb.facts == nil {
		return loc, "", false
	}
	ps := loc.fb.facts.params[loc.idx]
	if n, err := strconv.Atoi(slot); err == nil {
		if n < 0 {
			return loc, "", false
		}
		d := loc.fb.fd.Defs[loc.idx]
		if bound && d.Kind == KindMethod && loc.fb.lang.family == "python" && !strings.Contains(d.Sig, "@staticmethod") {
			n++
		}
		if n >= len(ps) || containsStr(ps[:n+1], "*") {
			return loc, "", false
		}
		return loc, ps[n], true
	}
	return loc, slot, containsStr(ps, slot)
}

// resolveFlowArg binds a call through a parameter to the functions an
// argument passes: for f(g) where f calls its parameter p(), an edge from
// the caller inside f to g; for f(x) where f calls p.m(), an edge to the m of
// x's class. The edge is made here, at the call site: this file's edits and
// the interface of f's file (its paramUses) both re-resolve it.
func (b *builder) resolveFlowArg(fe *flowEval, fb *fileBuild, r refRec, src string, res *fileResult) {
	slot, arg, ok := strings.Cut(r.Name, argSep)
	if !ok || arg == "" {
		return
	}
	obj, name := "", r.Object
	if i := strings.LastIndex(r.Object, "."); i > 0 {
		obj, name = r.Object[:i], r.Object[i+1:]
	}
	cr := refRec{Kind: refCall, Name: name, Object: obj, Def: r.Def, Line: r.Line}
	target, out := b.resolveRef(fb, fb.lang.family, cr, 0)
	if strings.HasPrefix(arg, "(") {
		if out == outUnresolved {
			fe.typeCallback(fb, r, slot, arg, fe.flowCallTargets(fb, cr))
		} else if out == outResolved {
			fe.typeCallback(fb, r, slot, arg, []string{target})
		}
		return
	}
	var callees []string
	switch out {
	case outResolved:
		callees = []string{target}
	case outUnresolved:
		callees = fe.flowCallTargets(fb, cr)
	case outBuiltin, outExternal:
		// A function handed to a built-in (map, filter, sorted's key) is
		// called from the frame that hands it over. Not for other outside
		// code: functools.partial, Thread(target=…) keep it for later.
		if out == outBuiltin && fb.lang.family == "python" && b.nodeByID[src] != nil && b.nodeByID[src].Kind != KindFile {
			for _, v := range fe.expr(fb, r.Def, arg, 0) {
				if n := b.nodeByID[v.id]; !v.inst && n != nil && (n.Kind == KindFunction || n.Kind == KindMethod) {
					res.addEdge(src, v.id, EdgeCalls, r.Line)
				}
			}
		}
		return
	}
	var vals []flowVal
	for _, c := range callees {
		if n := b.nodeByID[c]; n != nil && n.Kind == KindClass {
			init, ok := b.member(c, ctorName(fb.lang), false)
			if !ok {
				continue
			}
			c = init
		}
		loc, param, ok := b.paramSlot(c, slot, !b.unboundCall(fb, obj, r.Def))
		if !ok {
			continue
		}
		uses := loc.fb.facts.uses[loc.idx]
		if len(uses) == 0 {
			continue
		}
		if vals == nil {
			vals = fe.expr(fb, r.Def, arg, 0)
			if len(vals) == 0 {
				return
			}
		}
		for _, u := range uses {
			if u.param != param {
				continue
			}
			from := loc.fb.ids[u.caller]
			for _, v := range vals {
				n := b.nodeByID[v.id]
				if n == nil {
					continue
				}
				switch {
				case u.member != "":
					if n.Kind == KindClass {
						if m, ok := b.member(v.id, u.member, false); ok {
							res.addEdge(from, m, EdgeCalls, 0)
						}
					}
				case v.inst:
					if m, ok := b.member(v.id, "__call__", false); ok {
						res.addEdge(from, m, EdgeCalls, 0)
					}
				case n.Kind == KindClass || n.Kind == KindFunction || n.Kind == KindMethod:
					res.addEdge(from, v.id, EdgeCalls, 0)
					if n.Kind == KindClass {
						if m, ok := b.member(v.id, "__init__", false); ok {
							res.addEdge(from, m, EdgeCalls, 0)
						}
					}
				}
			}
		}
	}
}

// wrappers returns the functions the decorators of function id return
// (the wrapper a call of a decorated function really runs).
func (fe *flowEval) wrappers(id string) []string {
	loc, ok := fe.b.defLoc[id]
	if !ok || loc.fb.facts == nil {
		return nil
	}
	var out []string
	for _, d := range loc.fb.facts.decos[loc.idx] {
		for _, v := range fe.callResult(fe.expr(loc.fb, d.scope, d.expr, 0), 0) {
			if n := fe.b.nodeByID[v.id]; !v.inst && n != nil && (n.Kind == KindFunction || n.Kind == KindMethod) && v.id != id && !containsStr(out, v.id) {
				out = append(out, v.id)
			}
		}
	}
	return out
}

// resolveFlowExtra handles the references only the value-flow layer reads:
// arguments (resolveFlowArg) and implicit special-method calls.
func (b *builder) resolveFlowExtra(fe *flowEval, fb *fileBuild, r refRec, src string, res *fileResult) {
	if r.Kind == refArg {
		b.resolveFlowArg(fe, fb, r, src, res)
		return
	}
	dunders := fb.lang.implicit[r.Name]
	if len(dunders) == 0 {
		return
	}
	if r.Name == "[" {
		// x[k] = v and del x[k] also match the plain subscript pattern.
		if fe.stores == nil {
			fe.stores = map[refRec]bool{}
			for _, o := range fb.fd.Refs {
				if o.Kind == refImplicit && (o.Name == "=" || o.Name == "del") {
					fe.stores[refRec{Object: o.Object, Line: o.Line, Def: o.Def}] = true
				}
			}
		}
		if fe.stores[refRec{Object: r.Object, Line: r.Line, Def: r.Def}] {
			return
		}
	}
	for _, v := range fe.expr(fb, r.Def, r.Object, 0) {
		n := b.nodeByID[v.id]
		if n == nil || n.Kind != KindClass {
			continue
		}
		if r.Name == "raise" {
			if v.inst {
				continue // re-raising an instance constructs nothing
			}
			res.addEdge(src, v.id, EdgeCalls, r.Line)
		} else if !v.inst {
			continue // special methods of the class object are its metaclass's
		}
		for _, d := range dunders {
			m, ok := b.member(v.id, d, false)
			if !ok {
				continue
			}
			res.addEdge(src, m, EdgeCalls, r.Line)
			cls := v.id
			if r.Name == "raise" {
				continue
			}
			for _, o := range b.dispatchTargets(cls, m) {
				res.addEdge(src, o, EdgeDispatches, r.Line)
			}
		}
	}
}

// attrPath follows a dotted attribute path from value v.
func (fe *flowEval) attrPath(v flowVal, path string, depth int) []flowVal {
	vs := []flowVal{v}
	for _, seg := range strings.Split(path, ".") {
		var next []flowVal
		for _, x := range vs {
			next = addVals(next, fe.attr(x, seg, depth)...)
		}
		vs = next
	}
	return vs
}

// dropCallArgs rewrites every parenthesised argument list in a callee chain
// to "()": "a.f(x, g(y)).b" → "a.f().b". Text with unbalanced brackets or
// anything but names, dots and calls comes back unchanged.
func dropCallArgs(e string) string {
	if !strings.Contains(e, "(") {
		return e
	}
	var sb strings.Builder
	depth := 0
	for i := 0; i < len(e); i++ {
		c := e[i]
		switch {
		case c == '(':
			if depth == 0 {
				sb.WriteString("()")
			}
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return e
			}
		case depth == 0:
			sb.WriteByte(c)
		}
	}
	if depth != 0 {
		return e
	}
	return sb.String()
}

// ctorName is the method a constructor call runs.
func ctorName(l *language) string {
	if l.family == "js" {
		return "constructor"
	}
	return "__init__"
}

// fillJSDoc records the types JSDoc gives a function's parameters
// (@param {T} name) and result (@returns {T}).
func fillJSDoc(fb *fileBuild, hs func(...string)) {
	for i, d := range fb.fd.Defs {
		if d.Doc == "" || !strings.Contains(d.Doc, "@") || (d.Kind != KindFunction && d.Kind != KindMethod) {
			continue
		}
		for _, line := range strings.Split(d.Doc, "\n") {
			line = strings.TrimSpace(line)
			tag, rest, _ := strings.Cut(line, " ")
			if tag != "@param" && tag != "@returns" && tag != "@return" && tag != "@type" {
				continue
			}
			rest = strings.TrimSpace(rest)
			if !strings.HasPrefix(rest, "{") {
				continue
			}
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				continue
			}
			typ := strings.Trim(strings.TrimSpace(rest[1:end]), "!?")
			if j := strings.IndexAny(typ, "|<[( "); j >= 0 {
				typ = typ[:j]
			}
			if !isDottedIdent(typ) {
				continue
			}
			name := returnHint
			if tag == "@param" {
				f := strings.Fields(rest[end+1:])
				if len(f) == 0 {
					continue
				}
				name = strings.Trim(f[0], "[]")
				if k := strings.IndexByte(name, '='); k >= 0 {
					name = name[:k]
				}
			}
			if fb.flow == nil {
				fb.flow = map[hintKey][]flowSrc{}
			}
			k := hintKey{scope: int32(i), name: name}
			fb.flow[k] = append(fb.flow[k], flowSrc{scope: int32(i), expr: typ, call: true})
			hs("jsdoc", strconv.Itoa(i), name, typ)
		}
	}
}

// typeCallback types the parameters of a callback passed at slot (its
// parameter list is params, "(a, b)") from the function type the callee
// declares for that parameter: operate((source, subscriber) => …) with
// operate(init: (liftedSource: Observable<T>, subscriber: Subscriber<R>) => void).
func (fe *flowEval) typeCallback(fb *fileBuild, r refRec, slot, params string, callees []string) {
	n, err := strconv.Atoi(slot)
	if err != nil || n < 0 {
		return
	}
	names := sigParams(params, "")
	for _, c := range callees {
		if cn := fe.b.nodeByID[c]; cn != nil && cn.Kind == KindClass {
			ctor, ok := fe.b.member(c, ctorName(fb.lang), false)
			if !ok {
				continue
			}
			c = ctor
		}
		loc, ok := fe.b.defLoc[c]
		if !ok {
			continue
		}
		d := loc.fb.fd.Defs[loc.idx]
		types := sigParamTypes(d.Sig, d.Name)
		if n >= len(types) {
			continue
		}
		ftypes := sigParamTypes(types[n], "")
		if !strings.HasPrefix(strings.TrimSpace(types[n]), "(") || len(ftypes) == 0 {
			continue
		}
		// A "this" parameter of the function type takes no argument.
		if ps := sigParams(types[n], ""); len(ps) > 0 && ps[0] == "this" {
			ftypes = ftypes[1:]
		}
		for i, name := range names {
			if i >= len(ftypes) || name == "*" || strings.ContainsAny(name, "{[") {
				break
			}
			t := ftypes[i]
			if j := strings.IndexAny(t, "<[|&"); j >= 0 {
				t = t[:j]
			}
			t = strings.TrimSpace(t)
			if !isDottedIdent(t) {
				continue
			}
			if fe.extra == nil {
				fe.extra = map[hintKey][]flowSrcIn{}
			}
			k := hintKey{scope: r.Def, name: name}
			fe.extra[k] = append(fe.extra[k], flowSrcIn{loc.fb, flowSrc{scope: loc.idx, expr: t, call: true}})
		}
	}
}

// sigParamTypes returns the declared type text of each parameter of a
// TypeScript signature ("" when none), in the order of sigParams.
func sigParamTypes(sig, name string) []string {
	i := strings.Index(sig, name+"(")
	if i < 0 || name == "" {
		i = strings.IndexByte(sig, '(')
		if i < 0 {
			return nil
		}
	} else {
		i += len(name)
	}
	depth, start := 0, i+1
	var out []string
	add := func(p string) {
		p = strings.TrimSpace(p)
		if p == "" {
			return
		}
		t := ""
		if j := topLevelColon(p); j >= 0 {
			t = strings.TrimSpace(p[j+1:])
			if k := strings.LastIndex(t, "="); k >= 0 && !strings.Contains(t[k:], ">") {
				t = strings.TrimSpace(t[:k])
			}
		}
		out = append(out, t)
	}
	for j := i; j < len(sig); j++ {
		switch sig[j] {
		case '(', '[', '{', '<':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				add(sig[start:j])
				return out
			}
		case '>':
			if j > 0 && sig[j-1] != '=' {
				depth--
			}
		case ',':
			if depth == 1 {
				add(sig[start:j])
				start = j + 1
			}
		}
	}
	return out
}

// topLevelColon finds the ":" that starts a parameter's type annotation.
func topLevelColon(p string) int {
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '(', '[', '{', '<':
			depth++
		case ')', ']', '}', '>':
			depth--
		case ':':
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// paramValues returns what the calls in the same file pass to parameter
// name of function f. Only the file being resolved is read (its own edits
// re-resolve it; call sites in other files would not).
func (fe *flowEval) paramValues(fb *fileBuild, f int32, name string, depth int) []flowVal {
	k := hintKey{scope: f, name: name}
	if v, ok := fe.params[k]; ok {
		return v
	}
	if fe.params == nil {
		fe.params = map[hintKey][]flowVal{}
	}
	fe.params[k] = nil
	if fe.calledWith == nil {
		fe.calledWith = map[string][]refRec{}
		for _, r := range fb.fd.Refs {
			if r.Kind != refArg {
				continue
			}
			obj, cname := "", r.Object
			if i := strings.LastIndex(r.Object, "."); i > 0 {
				obj, cname = r.Object[:i], r.Object[i+1:]
			}
			id, out := fe.b.resolveRef(fb, fb.lang.family, refRec{Kind: refCall, Name: cname, Object: obj, Def: r.Def}, 0)
			if out != outResolved {
				continue
			}
			if n := fe.b.nodeByID[id]; n != nil && n.Kind == KindClass {
				init, ok := fe.b.member(id, ctorName(fb.lang), false)
				if !ok {
					continue
				}
				id = init
			}
			if loc, ok := fe.b.defLoc[id]; ok && loc.fb == fb {
				fe.calledWith[id] = append(fe.calledWith[id], r)
			}
		}
	}
	var out []flowVal
	for _, r := range fe.calledWith[fb.ids[f]] {
		slot, arg, ok := strings.Cut(r.Name, argSep)
		if !ok || strings.HasPrefix(arg, "(") {
			continue
		}
		obj := ""
		if i := strings.LastIndex(r.Object, "."); i > 0 {
			obj = r.Object[:i]
		}
		if _, p, ok := fe.b.paramSlot(fb.ids[f], slot, !fe.b.unboundCall(fb, obj, r.Def)); ok && p == name {
			out = addVals(out, fe.expr(fb, r.Def, arg, depth+1)...)
		}
	}
	fe.params[k] = out
	return out
}

// unboundCall reports a method called through its class (C.m(obj, x)): the
// first argument is self, not the first declared parameter after it.
func (b *builder) unboundCall(fb *fileBuild, obj string, def int32) bool {
	if obj == "" || !isDottedIdent(obj) || containsStr(fb.lang.selfNames, obj) {
		return false
	}
	name, pre := obj, ""
	if i := strings.LastIndex(obj, "."); i > 0 {
		pre, name = obj[:i], obj[i+1:]
	}
	id, out := b.resolveRef(fb, fb.lang.family, refRec{Kind: refUse, Name: name, Object: pre, Def: def}, 0)
	if out != outResolved {
		return false
	}
	n := b.nodeByID[id]
	return n != nil && n.Kind == KindClass
}
