package codegraph

import (
	"slices"
	"strconv"
	"strings"
)

// Edges from the value-flow layer (see flow.go): calls bound through values,
// dispatches, arguments, implicit calls, JS/TS callback and JSDoc types.

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
	if b.pyCallShapes(fe, fb, r, src, target, out, res) {
		return true // self.m(…): flow_python_classes.go
	}
	var targets []string
	var may []bool
	if out == outResolved {
		targets = []string{target}
	} else if out == outUnresolved {
		targets, may = fe.flowCallTargetsMay(fb, r)
		for i, t := range targets {
			if may != nil && may[i] && t != src {
				res.addEdge(src, t, EdgeDispatches, r.Line) // on a container's element
			} else {
				res.addEdge(src, t, EdgeCalls, r.Line)
			}
		}
		handled = len(targets) > 0
		if !handled && r.Kind == refCall && fb.lang.family == "python" && slices.Contains(fb.lang.selfNames, r.Object) {
			// self.m() where only subclasses define m (abstract by omission).
			for _, d := range b.pySubclassMembers(fb, r.Def, r.Name) {
				res.addEdge(src, d, EdgeDispatches, r.Line)
				handled = true
			}
		}
		if !handled && r.Kind == refCall && fb.lang.family == "js" && r.Object != "" {
			handled = b.jsImplementerCalls(fe, fb, r, src, res) // flow_javascript.go
		}
	}
	for i, t := range targets {
		n := b.node(t)
		if !n.found() {
			continue
		}
		if n.Kind == KindClass {
			if init, ok := b.member(t, ctorName(fb.lang), false); ok {
				if may != nil && may[i] && init != src {
					res.addEdge(src, init, EdgeDispatches, r.Line) // a class among a container's elements
				} else {
					res.addEdge(src, init, EdgeCalls, r.Line)
				}
			}
			b.pyDynamicInit(fb, r, t, src, res) // self.__class__(…), cls(…)
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
		if slices.Contains(fb.lang.selfNames, r.Object) {
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
		if _, ts := b.lookupModule(fb, im.Module); len(ts) > 0 && ts[0] != fb && !slices.Contains(out, ts[0]) {
			out = append(out, ts[0])
		}
		if fb.lang.family == "python" && im.Name != "" && !im.Wildcard {
			// from pkg import mod: the module mod (its calls are in
			// the argument sites mod's parameters read, flow_args.go).
			sub := im.Module + "." + im.Name
			if strings.HasSuffix(im.Module, ".") {
				sub = im.Module + im.Name
			}
			if _, ts := b.lookupModule(fb, sub); len(ts) > 0 && ts[0] != fb && !slices.Contains(out, ts[0]) {
				out = append(out, ts[0])
			}
		}
	}
	return out
}

// paramSlot names the parameter of callee (a definition node) that
// argument slot (a position or a keyword) binds; shift skips self.
func (b *builder) paramSlot(callee, slot string, bound bool) (defLocation, string, bool) {
	loc, ok := b.defAt(callee)
	if !ok || loc.fb.facts == nil {
		return loc, "", false
	}
	ps := loc.fb.facts.params.of(loc.idx)
	if n, ok := slotNumber(slot); ok {
		if n < 0 {
			return loc, "", false
		}
		d := loc.fb.fd.Defs[loc.idx]
		if bound && d.Kind == KindMethod && loc.fb.lang.family == "python" && !strings.Contains(d.Sig, "@staticmethod") {
			n++
		}
		if n >= len(ps) || slices.Contains(ps[:n+1], "*") {
			return loc, "", false
		}
		return loc, ps[n], true
	}
	return loc, slot, slices.Contains(ps, slot)
}

// slotNumber parses a positional argument slot ("0", "2"); a keyword is
// not one (strconv.Atoi is asked only when the first byte may start a
// number: its error for a keyword allocates).
func slotNumber(slot string) (int, bool) {
	if slot == "" || !(slot[0] >= '0' && slot[0] <= '9' || slot[0] == '-' || slot[0] == '+') {
		return 0, false
	}
	n, err := strconv.Atoi(slot)
	return n, err == nil
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
		b.pyPathArg(fe, fb, r, obj, name, arg, src, res) // os.stat(p): p.__fspath__ (flow_python_classes.go)
		// A function handed to a built-in (map, filter, sorted's key) is
		// called from the frame that hands it over. Not for other outside
		// code: functools.partial, Thread(target=…) keep it for later.
		if out == outBuiltin && fb.lang.family == "python" && (obj == "" && pyCallingBuiltins[name] || obj != "" && name == "sort") && b.node(src).found() && b.node(src).Kind != KindFile {
			for _, v := range fe.expr(fb, r.Def, arg, 0) {
				if n := b.node(v.id); !v.inst && !v.elem && n.found() && (n.Kind == KindFunction || n.Kind == KindMethod) {
					res.addEdge(src, v.id, EdgeCalls, r.Line)
				}
			}
		}
		return
	}
	var vals []flowVal
	for _, c := range callees {
		if n := b.node(c); n.found() && n.Kind == KindClass {
			init, ok := b.member(c, ctorName(fb.lang), false)
			if !ok {
				continue
			}
			c = init
		}
		loc, param, ok := b.paramSlot(c, slot, !fe.unboundCall(fb, obj, r.Def))
		if !ok {
			continue
		}
		uses := loc.fb.facts.uses.of(loc.idx)
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
				n := b.node(v.id)
				if !n.found() || v.elem {
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
	loc, ok := fe.b.defAt(id)
	if !ok || loc.fb.facts == nil {
		return nil
	}
	var out []string
	for _, d := range loc.fb.facts.decos.of(loc.idx) {
		for _, v := range fe.callResult(fe.expr(loc.fb, d.scope, d.expr, 0), 0) {
			if n := fe.b.node(v.id); !v.inst && !v.elem && n.found() && (n.Kind == KindFunction || n.Kind == KindMethod) && v.id != id && !slices.Contains(out, v.id) {
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
	if fb.lang.family == "python" {
		switch r.Name {
		case pyAttrToken:
			b.resolvePyAttr(fe, fb, r, src, false, res)
			return
		case pyCallToken:
			b.resolvePyCallOf(fe, fb, r, src, res)
			return
		case "str", "repr", "{", "%", "format":
			if b.resolvePyConvert(fe, fb, r, src, res) { // flow_python_format.go
				return
			}
		case "raise", "=": // a constructor call; a setter or __setitem__
		default:
			if !b.pyAnyMethod(dunders) {
				return // no class of the project defines what it would run
			}
		}
		switch r.Name {
		case "=":
			fe.pyStores(fb)
			if fe.attrStores[pyStoreKey{r.Object, r.Line, r.Def}] {
				b.resolvePyAttr(fe, fb, r, src, true, res)
				return
			}
		}
	}
	if r.Name == "[" {
		// x[k] = v and del x[k] also match the plain subscript pattern.
		fe.pyStores(fb)
		if fe.stores[refRec{Object: r.Object, Line: r.Line, Def: r.Def}] {
			return
		}
	}
	for _, v := range fe.topExpr(fb, r.Def, r.Object) {
		n := b.node(v.id)
		if !n.found() || n.Kind != KindClass || v.elem {
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
				b.pyImplicitBySubclass(src, v, d, r, res) // flow_python_subattr.go
				continue
			}
			addValEdge(res, src, m, v, r.Line)
			cls := v.id
			if r.Name == "raise" {
				continue
			}
			for _, o := range b.dispatchTargets(cls, m) {
				res.addEdge(src, o, EdgeDispatches, r.Line)
			}
			if len(dunders) > 1 && pyFirstDunder(r.Name) {
				break // x += y runs __iadd__ when there is one, else __add__
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
func fillJSDoc(fb *fileBuild, hs *ifaceHash) {
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
			fb.fill.addSrc(hintKey{scope: int32(i), name: name}, flowSrc{scope: int32(i), expr: typ, call: true})
			hs.add("jsdoc", strconv.Itoa(i), name, typ)
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
		if cn := fe.b.node(c); cn.found() && cn.Kind == KindClass {
			ctor, ok := fe.b.member(c, ctorName(fb.lang), false)
			if !ok {
				continue
			}
			c = ctor
		}
		loc, ok := fe.b.defAt(c)
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
	var out []string
	for _, p := range sigParamTexts(sig, name) {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
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
		if v != nil && len(v) == 0 {
			fe.hitBusy(flowBusy{pk: k, param: true}) // a cycle (see enter)
			return nil
		}
		return v
	}
	if v, ok := fe.cutParams[paramCutKey{k, depth}]; ok {
		return v
	}
	if fe.params == nil {
		fe.params = map[hintKey][]flowVal{}
	}
	fe.params[k] = []flowVal{} // in progress
	lvl, low := fe.enter(flowBusy{pk: k, param: true})
	cuts := fe.cuts
	if fe.calledWith == nil {
		fe.calledWith = map[string][]refRec{}
		// Only calls named like a definition of this file can reach one
		// (f(x), C(x) for C.__init__, o.m(x) for m or an override of it).
		defNames := make(map[string]bool, len(fb.fd.Defs))
		for _, d := range fb.fd.Defs {
			defNames[d.Name] = true
		}
		var later []refRec
		// The arguments of one call are neighbours and share what the call
		// reaches (it depends on the callee's text and the enclosing
		// definition only): worked out once for each run of them.
		var run calledRun
		for _, r := range fe.refsOf(fb) {
			if r.Kind != refArg {
				continue
			}
			if !run.same(r) {
				run = calledRun{object: r.Object, def: r.Def, valid: true}
				obj, cname := calleeName(r.Object)
				if !defNames[cname] {
					// meth(msg) with meth = getattr(self, …)
					run.later = obj == "" && fb.lang.family == "python" && localName(fb, cname, r.Def)
				} else if id, out := fe.resolveRef(fb, cname, obj, r.Def); out == outUnresolved && fb.lang.family == "python" {
					run.later = true
				} else if out == outResolved {
					run.targets = fe.calledDefs(fb, r.Def, obj, id, nil)
				}
			}
			if run.later {
				later = append(later, r)
			}
			fe.addCalledWith(r, run.targets)
		}
		// Callees only values can bind (self._interpolation.before_get(…)),
		// once the directly bound ones are known.
		run = calledRun{}
		for _, r := range later {
			if !run.same(r) {
				run = calledRun{object: r.Object, def: r.Def, valid: true}
				obj, cname := calleeName(r.Object)
				for _, id := range fe.flowCallTargets(fb, refRec{Kind: refCall, Name: cname, Object: obj, Def: r.Def}) {
					run.targets = fe.calledDefs(fb, r.Def, obj, id, run.targets)
				}
			}
			fe.addCalledWith(r, run.targets)
		}
	}
	var out []flowVal
	for _, r := range fe.calledWith[fb.ids[f]] {
		slot, arg, ok := strings.Cut(r.Name, argSep)
		if !ok || strings.HasPrefix(arg, "(") {
			continue
		}
		obj, _ := calleeName(r.Object)
		if _, p, ok := fe.b.paramSlot(fb.ids[f], slot, !fe.unboundCall(fb, obj, r.Def)); ok && p == name {
			out = addVals(out, fe.expr(fb, r.Def, arg, depth+1)...)
		}
	}
	if fb.lang.family == "python" {
		if ps := fb.facts.params.of(f); len(ps) > 0 && ps[0] == name {
			out = addVals(out, fe.decoratedBy(fb, f)...) // @f def g(): g is f's first argument
		}
		out = addVals(out, fe.crossParamValues(fb, f, name, depth)...) // flow_args.go
	}
	if len(out) == 0 {
		out = nil // an empty non-nil slice marks an evaluation in progress
	}
	if fe.leave(lvl, low) {
		fe.params[k] = out
		fe.partial = append(fe.partial, flowBusy{pk: k, param: true})
		return out
	}
	if fe.cuts != cuts {
		delete(fe.params, k) // cut short by the depth bound: kept for this depth only
		if fe.cutParams == nil {
			fe.cutParams = map[paramCutKey][]flowVal{}
		}
		fe.cutParams[paramCutKey{k, depth}] = out
		return out
	}
	fe.params[k] = out
	return out
}

// unboundCall reports a method called through its class (C.m(obj, x)): the
// first argument is self, not the first declared parameter after it.
func (fe *flowEval) unboundCall(fb *fileBuild, obj string, def int32) bool {
	if obj == "" || !isDottedIdent(obj) || slices.Contains(fb.lang.selfNames, obj) {
		return false
	}
	name, pre := obj, ""
	if i := strings.LastIndex(obj, "."); i > 0 {
		pre, name = obj[:i], obj[i+1:]
	}
	id, out := fe.resolveRef(fb, name, pre, def)
	if out != outResolved {
		return false
	}
	n := fe.b.node(id)
	return n.found() && n.Kind == KindClass
}

// calledRun is what paramValues worked out for a run of neighbouring
// arguments passed by calls with the same callee text in the same
// definition: whether the callee is left to the value flow (later), and
// the definitions of the file the call reaches (targets).
type calledRun struct {
	object  string
	def     int32
	valid   bool
	later   bool
	targets []string
}

// same reports that argument r belongs to the run.
func (c *calledRun) same(r refRec) bool {
	return c.valid && r.Object == c.object && r.Def == c.def
}

// calledDefs appends to dst the definitions of fb an argument passed to
// callee id reaches, the call made in def on receiver obj: the callee (a
// class: its constructor) and, for a method called on a receiver, the
// overrides in subclasses of the receiver's class (a call there may
// dispatch to them).
func (fe *flowEval) calledDefs(fb *fileBuild, def int32, obj, id string, dst []string) []string {
	n := fe.b.node(id)
	if !n.found() {
		return dst
	}
	ids := []string{id}
	if n.Kind == KindClass {
		init, ok := fe.b.member(id, ctorName(fb.lang), false)
		if !ok {
			return dst
		}
		ids[0] = init
	} else if n.Kind == KindMethod && obj != "" && fb.lang.family == "python" && !strings.HasPrefix(obj, "super(") {
		cls := n.Parent
		if slices.Contains(fb.lang.selfNames, obj) {
			if c, ok := fe.b.enclosingClass(fb, def); ok {
				cls = c
			}
		}
		ids = append(ids, fe.b.dispatchTargets(cls, id)...)
	}
	for _, c := range ids {
		if loc, ok := fe.b.defAt(c); ok && loc.fb == fb {
			dst = append(dst, c)
		}
	}
	return dst
}

// addCalledWith records argument r as passed to each of targets.
func (fe *flowEval) addCalledWith(r refRec, targets []string) {
	for _, c := range targets {
		fe.calledWith[c] = append(fe.calledWith[c], r)
	}
}

// localName reports that name is a variable assigned in def or a function
// around it (not at module level), and not a parameter of that function: a
// parameter's values come from the calls paramValues is still collecting
// when it asks, so reading them then would keep what is known so far
// (argparse's take_action(action, …) calling action(…) lost every action
// class's __call__ that way).
func localName(fb *fileBuild, name string, def int32) bool {
	s, in, _ := fb.sym(name)
	if in&inLocal == 0 {
		return false
	}
	for d := def; d >= 0; d = fb.fd.Defs[d].Parent {
		if r := fb.rowAt(d, false, s); r.local {
			return fb.facts == nil || !slices.Contains(fb.facts.params.of(d), name)
		}
	}
	return false
}
