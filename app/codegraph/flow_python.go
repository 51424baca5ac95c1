package codegraph

import (
	"slices"
	"strings"
)

// Python-only rules of the value-flow layer: properties (reading o.x runs
// the getter of a @property), attribute stores (o.x = v runs its setter),
// type(self)(…) and self.__class__(…) as constructors of self's class.

// pyAttrToken is the implicit-call name of an attribute read o.x (the "."
// of the attribute node): Object is the whole attribute text.
const pyAttrToken = "."

// Bits of builder.pyNames.
const (
	pyMethod   uint8 = 1 << iota // a method of that name exists
	pyProperty                   // a property of that name exists
)

// pyMemberNames returns the names of the methods and properties defined in
// the project's Python files: an attribute read is looked at only when a
// property has its name, an implicit call only when a special method it can
// run exists somewhere.
func pyMemberNames(fbs []*fileBuild) map[string]uint8 {
	out := map[string]uint8{}
	for _, fb := range fbs {
		if fb.lang == nil || fb.lang.family != "python" {
			continue
		}
		for _, d := range fb.fd.Defs {
			if d.Kind == KindMethod {
				out[d.Name] |= pyMethod
				if isPyPropertySig(d.Sig) {
					out[d.Name] |= pyProperty
				}
			}
		}
	}
	return out
}

// pyAnyMethod reports that some project class defines one of names.
func (b *builder) pyAnyMethod(names []string) bool {
	for _, n := range names {
		if b.pyNames[n]&pyMethod != 0 {
			return true
		}
	}
	return false
}

// isPyPropertySig reports a getter: a definition decorated with @property
// or @cached_property (not its @x.setter / @x.deleter).
func isPyPropertySig(sig string) bool {
	if !strings.HasPrefix(sig, "@") {
		return false
	}
	deco := sig
	if i := strings.Index(sig, "def "); i >= 0 {
		deco = sig[:i]
	}
	for _, f := range strings.Fields(deco) {
		switch strings.TrimPrefix(f, "@") {
		case "property", "cached_property", "functools.cached_property", "abc.abstractproperty", "abstractproperty":
			return true
		}
	}
	return false
}

// pyProperty reports that definition id is a property getter.
func (b *builder) pyProperty(id string) bool {
	loc, ok := b.defAt(id)
	if !ok || loc.fb.lang == nil || loc.fb.lang.family != "python" {
		return false
	}
	d := loc.fb.fd.Defs[loc.idx]
	return d.Kind == KindMethod && isPyPropertySig(d.Sig)
}

// pySetter returns the @name.setter method declared next to getter id.
func (b *builder) pySetter(getter string) (string, bool) {
	loc, ok := b.defAt(getter)
	if !ok {
		return "", false
	}
	g := loc.fb.fd.Defs[loc.idx]
	for i, d := range loc.fb.fd.Defs {
		if d.Parent == g.Parent && d.Name == g.Name && int32(i) != loc.idx && strings.Contains(d.Sig, "@"+g.Name+".setter") {
			return loc.fb.ids[i], true
		}
	}
	return "", false
}

// pyStoreKey identifies an implicit reference by its operand and place.
type pyStoreKey struct {
	object string
	line   int32
	def    int32
}

// pyStores sorts fb's store references: x[k] = v and del x[k] (subscript
// stores: the subscript pattern also matches them, so their "[" is not a
// read) and o.x = v (attribute stores: a setter runs, not the getter).
func (fe *flowEval) pyStores(fb *fileBuild) {
	if fe.stores != nil {
		return
	}
	fe.stores = map[refRec]bool{}
	fe.attrStores = map[pyStoreKey]bool{}
	subs := map[pyStoreKey]bool{}
	for _, o := range fe.refsOf(fb) {
		if o.Kind == refImplicit && o.Name == "[" {
			subs[pyStoreKey{o.Object, o.Line, o.Def}] = true
		}
	}
	for _, o := range fe.refsOf(fb) {
		if o.Kind != refImplicit || (o.Name != "=" && o.Name != "del") {
			continue
		}
		k := pyStoreKey{o.Object, o.Line, o.Def}
		if o.Name == "=" && !subs[k] {
			fe.attrStores[k] = true
			continue
		}
		fe.stores[refRec{Object: o.Object, Line: o.Line, Def: o.Def}] = true
	}
}

// resolvePyAttr handles o.x when x names a property somewhere in the
// project: a read calls the getter of o's class (and dispatches to the
// overrides in its subclasses), an attribute store calls the setter.
func (b *builder) resolvePyAttr(fe *flowEval, fb *fileBuild, r refRec, src string, store bool, res *fileResult) {
	i := strings.LastIndexByte(r.Object, '.')
	if i <= 0 || i == len(r.Object)-1 {
		return
	}
	obj, name := r.Object[:i], r.Object[i+1:]
	if b.pyNames[name]&pyProperty == 0 || !isDottedIdent(name) {
		return
	}
	if !store {
		fe.pyStores(fb)
		if fe.attrStores[pyStoreKey{r.Object, r.Line, r.Def}] {
			return // o.x = v: the setter's business (its "=" reference)
		}
	}
	var vals []flowVal
	skipSelf := false
	if obj == "super()" || strings.HasPrefix(obj, "super(") && strings.HasSuffix(obj, ")") && !strings.Contains(obj[6:], "(") {
		cls, ok := b.enclosingClass(fb, r.Def)
		if !ok {
			return
		}
		vals, skipSelf = []flowVal{{id: cls, inst: true}}, true
	} else {
		vals = fe.topExpr(fb, r.Def, obj)
	}
	for _, v := range vals {
		if !v.inst || v.elem {
			continue // C.x on the class is the property object; x[…] holds elem
		}
		m, ok := b.member(v.id, name, skipSelf)
		if !ok || !b.pyProperty(m) {
			continue
		}
		if sh, bySubs := b.pyGetterShadowed(v.id, m); !skipSelf && (sh || bySubs) {
			continue // a class attribute replaces the property (flow_python_classes.go)
		}
		target := m
		if store {
			if target, ok = b.pySetter(m); !ok {
				continue
			}
		}
		addValEdge(res, src, target, v, r.Line)
		if skipSelf || store {
			continue
		}
		cls := v.id
		for _, d := range b.dispatchTargets(cls, m) {
			if !store {
				res.addEdge(src, d, EdgeDispatches, r.Line)
			}
		}
	}
}

// pySubclassMembers returns the methods named name that subclasses of the
// class enclosing def define (or inherit from another base, a mixin) when
// the class itself has none: self.m() in a base class that leaves m to its
// subclasses dispatches to each of them.
func (b *builder) pySubclassMembers(fb *fileBuild, def int32, name string) []string {
	cls, ok := b.enclosingClass(fb, def)
	if !ok {
		return nil
	}
	if _, ok := b.member(cls, name, false); ok {
		return nil
	}
	return b.pySubclassMethods(cls, name)
}

// maxSubclassWalk bounds the classes pySubclassMembers visits.
const maxSubclassWalk = 256

// pyCallToken is the implicit-call name of a call whose callee is neither a
// name nor an attribute (the "(" of its argument list): f(x)(…), x[k](…),
// type(self)(…). Object is the callee expression.
const pyCallToken = "("

// resolvePyCallOf binds a call of a computed callee: type(self)(…) and
// type(self).__class__-like constructors make an instance of self's class
// (its __init__ runs, or an override's); f(x)(…) calls what f returns;
// x[k](…) calls what container x holds.
func (b *builder) resolvePyCallOf(fe *flowEval, fb *fileBuild, r refRec, src string, res *fileResult) {
	e := strings.TrimSpace(r.Object)
	if strings.HasPrefix(e, "type(") && strings.HasSuffix(e, ")") {
		arg := strings.TrimSpace(e[5 : len(e)-1])
		for _, v := range fe.expr(fb, r.Def, arg, 0) {
			if !v.inst || v.elem {
				continue
			}
			if init, ok := b.member(v.id, "__init__", false); ok {
				res.addEdge(src, init, EdgeCalls, r.Line)
			}
			b.pySubclassInits(v.id, src, r.Line, res)
		}
		return
	}
	for _, t := range fe.valueCallTargets(fe.expr(fb, r.Def, e, 0)) {
		res.addEdge(src, t, EdgeCalls, r.Line)
		if n := b.node(t); n.found() && n.Kind == KindClass {
			if init, ok := b.member(t, "__init__", false); ok {
				res.addEdge(src, init, EdgeCalls, r.Line)
			}
		}
	}
}

// valueCallTargets returns what calling each value runs: a function or
// method, a class (its constructor), an instance's __call__.
func (fe *flowEval) valueCallTargets(vs []flowVal) []string {
	var out []string
	for _, v := range vs {
		if v.elem {
			continue
		}
		switch {
		case v.inst:
			if id, ok := fe.b.member(v.id, "__call__", false); ok && !slices.Contains(out, id) {
				out = append(out, id)
			}
		default:
			if n := fe.b.node(v.id); n.found() && (n.Kind == KindFunction || n.Kind == KindMethod || n.Kind == KindClass) && !slices.Contains(out, v.id) {
				out = append(out, v.id)
			}
		}
	}
	return out
}

// pyFlowMarks tells apart the value records that are not plain
// assignments, by the implicit references on the same line: a loop
// variable (a "for" over the same expression: keyed "\x00"+expression) and
// a subscript store x[k] = v (an "=" and a "[" on x: keyed by x).
func pyFlowMarks(refs []refRec) map[pyStoreKey]flowMode {
	var marks map[pyStoreKey]flowMode
	var subs map[pyStoreKey]bool
	stores := false
	for _, o := range refs {
		if o.Kind != refImplicit {
			continue
		}
		switch o.Name {
		case "for":
			if marks == nil {
				marks = map[pyStoreKey]flowMode{}
			}
			marks[pyStoreKey{"\x00" + o.Object, o.Line, o.Def}] = flowIter
		case "[":
			if subs == nil {
				subs = map[pyStoreKey]bool{}
			}
			subs[pyStoreKey{o.Object, o.Line, o.Def}] = true
		case "=":
			stores = true
		}
	}
	if stores && subs != nil {
		for _, o := range refs {
			if o.Kind == refImplicit && o.Name == "=" && subs[pyStoreKey{o.Object, o.Line, o.Def}] {
				if marks == nil {
					marks = map[pyStoreKey]flowMode{}
				}
				marks[pyStoreKey{o.Object, o.Line, o.Def}] = flowElem
			}
		}
	}
	if marks == nil {
		marks = map[pyStoreKey]flowMode{} // non-nil: the file is Python
	}
	return marks
}

// classExpr reports that expression obj names a class (C.x reads the
// property object, not its value).
func (fe *flowEval) classExpr(fb *fileBuild, scope int32, obj string) bool {
	pre, name := "", obj
	if i := strings.LastIndexByte(obj, '.'); i > 0 {
		pre, name = obj[:i], obj[i+1:]
	}
	if slices.Contains(fb.lang.selfNames, obj) {
		return obj == "cls"
	}
	id, out := fe.resolveRef(fb, name, pre, scope)
	if out != outResolved {
		return false
	}
	n := fe.b.node(id)
	return n.found() && n.Kind == KindClass
}

// decoratedBy returns the definitions of fb decorated by function f (each
// is passed to f as its first argument).
func (fe *flowEval) decoratedBy(fb *fileBuild, f int32) []flowVal {
	if fb.facts == nil {
		return nil
	}
	var out []flowVal
	for _, d := range fb.facts.decos.defs { // (in increasing order)
		for _, dc := range fb.facts.decos.of(d) {
			if dc.expr != fb.fd.Defs[f].Name && !strings.HasSuffix(dc.expr, "."+fb.fd.Defs[f].Name) {
				continue
			}
			for _, v := range fe.expr(fb, dc.scope, dc.expr, 1) {
				if v.id == fb.ids[f] && !v.inst {
					out = addVals(out, flowVal{id: fb.ids[d]})
				}
			}
		}
	}
	return out
}

// pyBuiltinCall evaluates the built-in calls whose arguments matter:
// staticmethod(f) and classmethod(f) are f; type(x) is x's class and
// type(x)(…) a new instance of it; getattr(o, "name") is o.name and
// getattr(o, "prefix_" + s) any member of o whose name starts so.
func (fe *flowEval) pyBuiltinCall(fb *fileBuild, scope int32, e string, depth int) ([]flowVal, bool) {
	if f, ok := pyCacheWrapped(e); ok {
		// lru_cache()(f) calls f; f = lru_cache()(f) rebinds the name, so
		// the definition is looked up first (the variable is f itself).
		if bd, ok := fb.lookupName(f, scope); ok && bd.kind == bDef {
			return []flowVal{{id: bd.id}}, true
		}
		return fe.expr(fb, scope, f, depth+1), true
	}
	if obj, ok := strings.CutSuffix(e, ".copy()"); ok && isDottedIdent(obj) {
		// d.copy() holds d's elements (a container's copy), or what a
		// project class's copy method returns.
		var out []flowVal
		for _, v := range fe.expr(fb, scope, obj, depth+1) {
			if v.elem {
				out = addVals(out, v)
			}
		}
		return addVals(out, fe.callResult(fe.expr(fb, scope, obj+".copy", depth+1), depth+1)...), true
	}
	open := strings.IndexByte(e, '(')
	if open <= 0 || !strings.HasSuffix(e, ")") {
		return nil, false
	}
	fn := e[:open]
	if fn != "staticmethod" && fn != "classmethod" && fn != "type" && fn != "getattr" && !pyCopyFns[fn] {
		return nil, false
	}
	if bd, ok := fb.lookupName(fn, scope); ok && bd.kind == bDef {
		return nil, false // the project's own function of that name
	}
	closeAt := groupEnd(e, open)
	if closeAt < 0 {
		return nil, false
	}
	args := splitTop(e[open+1 : closeAt])
	rest := strings.TrimSpace(e[closeAt+1:])
	switch fn {
	case "staticmethod", "classmethod":
		if rest != "" || len(args) != 1 {
			return nil, true
		}
		return fe.expr(fb, scope, args[0], depth+1), true
	case "list", "tuple", "sorted", "reversed", "set", "frozenset":
		// A new container of x's elements (x a container, or an instance of
		// a container class).
		if rest != "" || len(args) == 0 || strings.ContainsAny(args[0], "=*") {
			return nil, true
		}
		return asElems(fe.elemsOf(fe.expr(fb, scope, strings.TrimSpace(args[0]), depth+1), false, depth+1)), true
	case "type":
		if len(args) != 1 || (rest != "" && !(strings.HasPrefix(rest, "(") && groupEnd(rest, 0) == len(rest)-1)) {
			return nil, true
		}
		var out []flowVal
		for _, v := range fe.expr(fb, scope, args[0], depth+1) {
			if v.inst && !v.elem {
				out = addVals(out, flowVal{id: v.id, inst: rest != ""})
			}
		}
		return out, true
	}
	// getattr
	if rest != "" || len(args) < 2 {
		return nil, true
	}
	name := strings.TrimSpace(args[1])
	prefix := false
	if i := strings.IndexByte(name, '+'); i > 0 {
		name, prefix = strings.TrimSpace(name[:i]), true
	}
	lit := pyStringLit(name)
	if lit == "" || (!prefix && !isDottedIdent(lit)) {
		return nil, true
	}
	var out []flowVal
	for _, v := range fe.expr(fb, scope, args[0], depth+1) {
		if !prefix {
			out = addVals(out, fe.attr(v, lit, depth+1)...)
			continue
		}
		n := fe.b.node(v.id)
		if v.elem || !n.found() || n.Kind != KindClass {
			continue
		}
		seen := map[string]bool{}
		fe.b.walkMRO(v.id, func(c string) bool {
			var ms []string
			for m := range fe.b.members[c] {
				if strings.HasPrefix(m, lit) && !seen[m] {
					ms = append(ms, m)
				}
			}
			slices.Sort(ms) // not map order: the edges' order would vary
			for _, m := range ms {
				seen[m] = true
				out = addVals(out, flowVal{id: fe.b.members[c][m]})
			}
			return true
		})
	}
	return out, true
}

// groupEnd returns the index of the byte that closes the group starting at
// e[i]: the bracket matching an opening one, or the quote ending a string
// literal ('…', "…" with backslash escapes, Go's raw `…` without); -1 when
// it is not closed. Brackets inside literals do not count. The Python rules
// (calls of built-ins) and Go's (the argument list of a call) share it.
func groupEnd(e string, i int) int {
	if i >= len(e) {
		return -1
	}
	switch e[i] {
	case '"', '\'', '`':
		return quoteEnd(e, i)
	}
	depth := 0
	for ; i < len(e); i++ {
		switch c := e[i]; c {
		case '"', '\'', '`':
			if i = quoteEnd(e, i); i < 0 {
				return -1
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// quoteEnd returns the index of the quote closing the literal opened at e[i].
func quoteEnd(e string, i int) int {
	q := e[i]
	for j := i + 1; j < len(e); j++ {
		switch e[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			return j
		}
	}
	return -1
}

// pyStringLit returns the text of a plain one-line string literal, "" if s
// is not one.
func pyStringLit(s string) string {
	if len(s) < 2 || (s[0] != '"' && s[0] != '\'') || s[len(s)-1] != s[0] {
		return ""
	}
	t := s[1 : len(s)-1]
	if strings.ContainsAny(t, "\"'\\") {
		return ""
	}
	return t
}

// pyCallingBuiltins are the built-ins that call a function handed to them
// (map(f, xs), sorted(xs, key=f), iter(f, end)); staticmethod(f),
// property(f), isinstance(x, C)… only keep or look at it.
var pyCallingBuiltins = map[string]bool{"map": true, "filter": true, "sorted": true, "min": true, "max": true, "iter": true}

// pyFirstDunder reports the implicit calls of which only the first special
// method the class has runs: augmented assignments and !=.
func pyFirstDunder(tok string) bool {
	return tok == "!=" || len(tok) >= 2 && strings.HasSuffix(tok, "=") && tok != "==" && tok != "<=" && tok != ">="
}

// topExpr is expr from depth 0 for the operand of an implicit call,
// remembered per scope: the same operand (self.x, a local) recurs on many
// lines of a function.
func (fe *flowEval) topExpr(fb *fileBuild, scope int32, e string) []flowVal {
	k := flowMemoKey{fb: fb, scope: scope, expr: e}
	if v, ok := fe.top[k]; ok {
		return v
	}
	v := fe.expr(fb, scope, e, 0)
	if fe.top == nil {
		fe.top = map[flowMemoKey][]flowVal{}
	}
	fe.top[k] = v
	return v
}

// refAtCmp orders references by position, then by content: several can
// start at one byte (a.b and a.b.c, an attribute and its call), and a query
// run in bands emits them in another order than one pass. One three-way
// compare per step (the sort called refAtLess twice: 30 → 17 ms a
// python3.11 index; slices.SortFunc's pdqsort took 42 ms on these nearly
// sorted lists, so the stable sort stays).
func refAtCmp(a, b refAt) int {
	if a.start != b.start {
		if a.start < b.start {
			return -1
		}
		return 1
	}
	if a.r.Kind != b.r.Kind {
		if a.r.Kind < b.r.Kind {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.r.Name, b.r.Name); c != 0 {
		return c
	}
	return strings.Compare(a.r.Object, b.r.Object)
}
