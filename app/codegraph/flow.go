package codegraph

import (
	"iter"
	"math"
	"slices"
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
	stores     map[refRec]bool     // subscripts written or deleted (not read)
	attrStores map[pyStoreKey]bool // o.x = v (Python: a setter, not a read)
	cuts       int                 // evaluations cut short by maxFlowDepth
	// cutMemo and cutParams keep results cut short by the depth bound, by
	// the depth they were asked at: a shallower start may still find more,
	// but the same question at the same depth gets the same answer without
	// being explored again (without them a chain of parameters passed on
	// through many calls is explored exponentially often).
	cutMemo   map[flowCutKey][]flowVal
	cutParams map[paramCutKey][]flowVal
	top       map[flowMemoKey][]flowVal // operands of implicit calls (topExpr)
	// containerCls and instElems: Python classes deriving from a built-in
	// container, and the variables of fb holding and filled as their
	// instances (flow_python_elems.go).
	containerCls map[string]bool
	instElems    map[string][]hintKey
	instElemCls  []string // instElems' classes in the order they were found
	// partners: Python classes fb combines at run time with
	// type(name, (A, B), {}) (flow_python_classes.go); nil until read.
	partners map[string][]pyPartner
	// siteTargets memoises what call sites of other files are bound to
	// (flow_args.go).
	siteTargets map[argSiteKey][]string
	sitesOf     map[string][]argSite        // fb's callers in other files by callee name
	crossSites  map[defLocation][]crossSite // per function, the sites binding its parameters (crossParamValues)
	aliases     map[string][]string         // fb's module-level variables by the name they are assigned
	// classImports: per class, the definitions imported into its body by
	// local name (flow_args.go).
	classImports map[defLocation]map[string]string
	// stack, low, partial and partialAt handle cycles (see enter).
	stack     []flowBusy
	low       int
	partial   []flowBusy
	partialAt int
	// refs are fb's references decoded for this evaluation (nil outside
	// resolveRefs); read them with refsOf.
	refs []refRec
	// resolved memoises the name rules' answers (resolveRef) the
	// evaluation asks for (flow_memo.go).
	resolved map[refMemoKey]refMemoVal
}

// refsOf yields fb's references: the decoded ones for the file being
// resolved, else decoded from its packed list.
func (fe *flowEval) refsOf(fb *fileBuild) iter.Seq2[int, refRec] {
	if fb == fe.fb && fe.refs != nil {
		return slices.All(fe.refs)
	}
	return fb.fd.Refs.All()
}

// flowSrcIn is a flow source evaluated in another file.
type flowSrcIn struct {
	fb  *fileBuild
	src flowSrc
}

// flowMemoKey is a flow source of a file. Its fixed-size fields come
// first, together: the map hashes them as one run of 14 bytes, then the
// expression (three hash calls with the expression between them).
type flowMemoKey struct {
	fb    *fileBuild
	scope int32
	call  bool
	mode  flowMode
	expr  string
}

// flowCutKey is a flow source asked at a depth.
type flowCutKey struct {
	flowMemoKey
	depth int
}

// paramCutKey is a parameter's values asked at a depth.
type paramCutKey struct {
	hintKey
	depth int
}

// maxFlowDepth bounds the chain of names followed for one expression.
const maxFlowDepth = 10

func newFlowEval(b *builder, fb *fileBuild) *flowEval {
	fb.argAsked = nil // filled again as fb is resolved (flow_args.go)
	fe := &flowEval{b: b, fb: fb, low: math.MaxInt, partialAt: math.MaxInt}
	if m, ok := b.flowMemos.Get().(*flowMemoMaps); ok {
		fe.memo, fe.top, fe.resolved = m.memo, m.top, m.refs // emptied by releaseFlowEval
	} else {
		fe.memo, fe.top = map[flowMemoKey][]flowVal{}, map[flowMemoKey][]flowVal{}
		fe.resolved = map[refMemoKey]refMemoVal{}
	}
	return fe
}

// flowMemoMaps are a flowEval's two largest memo tables, kept from one
// file's evaluation for the next (they grew anew for every file: a sixth
// of the flow layer's allocation on python3.11).
type flowMemoMaps struct {
	memo, top map[flowMemoKey][]flowVal
	refs      map[refMemoKey]refMemoVal
}

// flowMemoKeep bounds the entries of a memo table kept for the next file.
const flowMemoKeep = 1 << 14

// releaseFlowEval empties fe's memo tables and keeps them for the next
// evaluation; fe is not used after.
func (b *builder) releaseFlowEval(fe *flowEval) {
	if len(fe.memo) > flowMemoKeep || len(fe.top) > flowMemoKeep || len(fe.resolved) > flowMemoKeep {
		return
	}
	clear(fe.memo)
	clear(fe.top)
	clear(fe.resolved)
	b.flowMemos.Put(&flowMemoMaps{memo: fe.memo, top: fe.top, refs: fe.resolved})
	fe.memo, fe.top, fe.resolved = nil, nil, nil
}

// src evaluates one flow source.
func (fe *flowEval) src(fb *fileBuild, s flowSrc, depth int) []flowVal {
	mk := flowMemoKey{fb: fb, scope: s.scope, call: s.call, mode: s.mode, expr: s.expr}
	if v, ok := fe.memo[mk]; ok {
		if v != nil && len(v) == 0 {
			fe.hitBusy(flowBusy{mk: mk}) // a cycle: nothing more from here
			return nil
		}
		return v
	}
	if v, ok := fe.cutMemo[flowCutKey{mk, depth}]; ok {
		return v
	}
	fe.memo[mk] = []flowVal{} // in progress
	lvl, low := fe.enter(flowBusy{mk: mk})
	cuts := fe.cuts
	var out []flowVal
	if s.mode >= flowNth {
		out = fe.pyNth(fb, s, depth+1) // a, b = f(): one item of a tuple
	} else if s.call && !(fb.lang.family == "python" && pyContainerLit(s.expr)) {
		out = fe.callResult(fe.expr(fb, s.scope, s.expr, depth+1), depth+1)
	} else {
		out = fe.expr(fb, s.scope, s.expr, depth+1)
	}
	switch s.mode {
	case flowElem:
		out = asElems(out)
	case flowIter:
		out = fe.elemsOf(out, false, depth+1)
	case flowNest:
		out = asNested(out) // flow_python_containers.go
	}
	if len(out) == 0 {
		out = nil // an empty non-nil slice marks an evaluation in progress
	}
	if fe.leave(lvl, low) {
		fe.memo[mk] = out
		fe.partial = append(fe.partial, flowBusy{mk: mk})
		return out
	}
	if fe.cuts != cuts {
		// Cut short by the depth bound: seen from a shallower start the
		// result can be complete, so it is kept for this depth only.
		delete(fe.memo, mk)
		if fe.cutMemo == nil {
			fe.cutMemo = map[flowCutKey][]flowVal{}
		}
		fe.cutMemo[flowCutKey{mk, depth}] = out
		return out
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
		fe.cuts++
		return nil
	}
	e = strings.TrimSpace(e)
	py := fb.lang.family == "python"
	if !isDottedIdent(e) {
		// Containers, built-in calls, calls, subscripts, super(): a plain
		// dotted name (most expressions) is none of them.
		if py && pyContainerLit(e) {
			return fe.containerVals(fb, scope, e, depth)
		}
		if py {
			if vs, ok := fe.pyBuiltinCall(fb, scope, e, depth); ok {
				return vs
			}
		}
		e = dropCallArgs(e)
		if py {
			if obj, ok := splitSubscript(e); ok {
				return fe.elemsOf(fe.expr(fb, scope, obj, depth+1), true, depth+1)
			}
		}
		if strings.HasPrefix(e, "new ") && fb.lang.family == "js" {
			e = strings.TrimSpace(e[4:]) // new C() is C's instance, as a call of C
			if !strings.Contains(e, "(") {
				e += "()"
			}
		}
		if strings.HasPrefix(e, "super().") || strings.HasPrefix(e, "super(") {
			if i := strings.Index(e, ")."); i > 0 && isDottedIdent(e[i+2:]) && !strings.Contains(e[i+2:], ".") {
				if id, out := fe.resolveRef(fb, e[i+2:], e[:i+1], scope); out == outResolved {
					return []flowVal{{id: id}}
				}
			}
			return nil
		}
		if strings.HasSuffix(e, "()") {
			out := fe.callResult(fe.expr(fb, scope, e[:len(e)-2], depth+1), depth+1)
			if py {
				// d.get(k), d.pop(k), d.setdefault(k, v): an element of d.
				for _, m := range []string{".get()", ".pop()", ".setdefault()"} {
					if strings.HasSuffix(e, m) {
						out = addVals(out, fe.elemsOf(fe.expr(fb, scope, e[:len(e)-len(m)], depth+1), false, depth+1)...)
					}
				}
			}
			return out
		}
		i := strings.LastIndex(e, ").")
		if j := strings.LastIndex(e, "]."); py && j > i {
			i = j
		}
		if i > 0 && isDottedIdent(e[i+2:]) {
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
		if id, out := fe.resolveRef(fb, name, obj, scope); out == outResolved {
			return []flowVal{{id: id}}
		}
		return nil
	}
	// Modules, classes and self members first, as calls are bound.
	if id, out := fe.resolveRef(fb, name, obj, scope); out == outResolved {
		if py && fe.b.pyProperty(id) && !fe.classExpr(fb, scope, obj) {
			return fe.returns(id, depth) // o.x reads a property: its getter's result
		}
		return []flowVal{{id: id}}
	}
	if t, ok := fe.module(fb, scope, obj); ok {
		// A module-level variable of a project module.
		return fe.srcs(t, t.srcsOf(t.row(-1, false, name)), depth)
	}
	var out []flowVal
	for _, v := range fe.expr(fb, scope, obj, depth+1) {
		out = addVals(out, fe.attr(v, name, depth+1)...)
	}
	return out
}

// module returns the project file of module expression obj ("pkg.mod").
func (fe *flowEval) module(fb *fileBuild, scope int32, obj string) (*fileBuild, bool) {
	first, rest, more := strings.Cut(obj, ".") // (no strings.Split: most objects are not modules)
	bd, ok := fb.lookupName(first, scope)
	if !ok || bd.kind != bModule {
		return nil, false
	}
	key := bd.mod
	fam := fb.lang.family
	for more {
		var s string
		s, rest, more = strings.Cut(rest, ".")
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
		fe.cuts++
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
	if slices.Contains(fb.lang.selfNames, name) && !(name == "cls" && pyAssigned(fb, scope, name)) { // cls = d.get(k): a local
		if cls, ok := fe.b.enclosingClass(fb, scope); ok {
			if name == "cls" {
				return []flowVal{{id: cls}}
			}
			return []flowVal{{id: cls, inst: true}}
		}
	}
	// A name in none of the file's scope tables (and no callback type
	// learnt for it, fe.extra) is looked up in the file's scope at once.
	s, in, known := fb.sym(name)
	walk := in&(inNested|inLocal|inFlow) != 0 || (fe.extra != nil && fb == fe.fb)
	for d := scope; walk; d = fb.fd.Defs[d].Parent {
		// A class body is not an enclosing scope of the functions inside it.
		if d >= 0 && d != scope && fb.fd.Defs[d].Kind == KindClass {
			continue
		}
		var r tabRow
		if known {
			r = fb.rowAt(d, false, s)
		}
		if d >= 0 && r.nested > 0 {
			return []flowVal{{id: fb.ids[r.nested-1]}}
		}
		if xs, ok := fe.extra[hintKey{scope: d, name: name}]; ok && fb == fe.fb {
			var out []flowVal
			for _, x := range xs {
				out = addVals(out, fe.src(x.fb, x.src, depth)...)
			}
			return out
		}
		if len(r.flow) > 0 {
			out := fe.srcs(fb, fb.srcsOf(r), depth)
			if d >= 0 && fb == fe.fb && fb.facts != nil && slices.Contains(fb.facts.params.of(d), name) {
				// A parameter assigned in the body (msg = deepcopy(msg)):
				// also what the calls pass.
				out = addVals(out, fe.paramValues(fb, d, name, depth)...)
			}
			return out
		}
		if d < 0 {
			break
		}
		if r.local {
			if fb == fe.fb && fb.facts != nil && slices.Contains(fb.facts.params.of(d), name) {
				return fe.paramValues(fb, d, name, depth)
			}
			return nil // a local nothing is known about
		}
	}
	if bd, ok := fb.scopeLookup(name); ok {
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
	n := fe.b.node(v.id)
	if !n.found() || n.Kind != KindClass || v.elem {
		return nil
	}
	if v.inst && name == "__class__" {
		return []flowVal{{id: v.id}}
	}
	var out []flowVal
	found := false
	selfName := "" // the key of self.name = v in a class's flow table, built once
	fe.b.walkMRO(v.id, func(c string) bool {
		loc, ok := fe.b.defAt(c)
		if !ok {
			return true
		}
		found = true
		if id, ok := fe.b.members[c][name]; ok {
			if v.inst && fe.b.pyProperty(id) {
				out = fe.returns(id, depth) // reading a property runs its getter
				return false
			}
			out = []flowVal{{id: id}}
			return false
		}
		if selfName == "" {
			selfName = "self." + name
		}
		if ss, ok := loc.fb.flowAt(loc.idx, true, selfName); ok {
			out = fe.srcs(loc.fb, ss, depth)
			return false
		}
		if id, ok := fe.classImport(loc.fb, loc.idx, name); ok {
			out = []flowVal{{id: id}} // class Message: from email.iterators import walk
			return false
		}
		found = false
		return true
	})
	if !found && len(out) == 0 {
		out = fe.pySubclassAttr(v, name, depth) // set by subclasses only (flow_python_subattr.go)
	}
	if v.may {
		out = asMay(out)
	}
	return out
}

// callResult returns what calling each value returns: a class gives an
// instance, a function the values of its returns.
func (fe *flowEval) callResult(vs []flowVal, depth int) []flowVal {
	var out []flowVal
	for _, v := range vs {
		n := fe.b.node(v.id)
		if !n.found() || v.elem {
			continue
		}
		var r []flowVal
		switch {
		case v.inst:
			if id, ok := fe.b.member(v.id, "__call__", false); ok {
				r = fe.returns(id, depth)
			}
		case n.Kind == KindClass:
			r = []flowVal{{id: v.id, inst: true}}
		case n.Kind == KindFunction || n.Kind == KindMethod:
			r = fe.returns(v.id, depth)
		}
		if v.may {
			r = asMay(r)
		}
		out = addVals(out, r...)
	}
	return out
}

// returns evaluates the results recorded for function id.
func (fe *flowEval) returns(id string, depth int) []flowVal {
	loc, ok := fe.b.defAt(id)
	if !ok || depth > maxFlowDepth {
		if ok {
			fe.cuts++
		}
		return nil
	}
	return fe.srcs(loc.fb, loc.fb.srcsOf(loc.fb.row(loc.idx, false, returnHint)), depth)
}

// walkMRO visits class cls and its bases breadth first until fn says stop.
func (b *builder) walkMRO(cls string, fn func(string) bool) {
	if len(b.bases[cls]) == 0 {
		fn(cls) // no walk needed
		return
	}
	w := b.getWalk(cls)
	defer b.putWalk(w)
	for i := 0; i < len(w.queue); i++ {
		c := w.queue[i]
		if !fn(c) {
			return
		}
		for _, base := range b.bases[c] {
			w.visit(base)
		}
	}
}

// flowCallTargets returns the definitions a call the name rules could not
// bind can reach through values: functions and methods held by variables,
// attributes and results, classes (constructors) and callable instances.
func (fe *flowEval) flowCallTargets(fb *fileBuild, r refRec) []string {
	out, _ := fe.flowCallTargetsMay(fb, r)
	return out
}

// flowCallTargetsMay is flowCallTargets that also tells, for each target,
// whether only container elements reach it (may: see flowVal); nil when
// none does.
func (fe *flowEval) flowCallTargetsMay(fb *fileBuild, r refRec) ([]string, []bool) {
	e := r.Name
	if r.Object != "" {
		e = r.Object + "." + r.Name
	}
	var out []string
	var may []bool
	add := func(id string, v flowVal) {
		for i, o := range out {
			if o == id {
				if may != nil && !v.may {
					may[i] = false // a sure value makes it a call
				}
				return
			}
		}
		out = append(out, id)
		if v.may && may == nil {
			may = make([]bool, len(out)-1, len(out))
		}
		if may != nil {
			may = append(may, v.may)
		}
	}
	for _, v := range fe.expr(fb, r.Def, e, 0) {
		switch {
		case v.elem:
		case v.inst:
			if id, ok := fe.b.member(v.id, "__call__", false); ok {
				add(id, v)
			}
		default:
			if n := fe.b.node(v.id); n.found() && n.Kind != KindFile && n.Kind != KindPackage {
				add(v.id, v)
			}
		}
	}
	return out, may
}

// invertBases maps each class to its direct subclasses, sorted by ID (the
// ranging over bases is in map order; dispatchTargets lists edges in this
// order, so unsorted lists made the edge order differ run to run).
func invertBases(bases map[string][]string) map[string][]string {
	subs := map[string][]string{}
	for c, bs := range bases {
		for _, base := range bs {
			subs[base] = append(subs[base], c)
		}
	}
	for _, s := range subs {
		slices.Sort(s)
	}
	return subs
}

// dispatchTargets returns the methods overriding target (a method of a
// class) in the subclasses of cls, the receiver's static class.
func (b *builder) dispatchTargets(cls, target string) []string {
	tn := b.node(target)
	if !tn.found() || tn.Kind != KindMethod || len(b.subs[cls]) == 0 {
		return nil
	}
	return b.hierWalk(hierKey{hierDispatch, cls, target}, func() []string { return b.walkDispatch(cls, target, tn) })
}

// walkDispatch is dispatchTargets' walk over the subclasses of cls.
func (b *builder) walkDispatch(cls, target string, tn nodeView) []string {
	var out []string
	w := b.getWalk(cls)
	defer b.putWalk(w)
	for i := 0; i < len(w.queue); i++ {
		for _, s := range b.subs[w.queue[i]] {
			if !w.visit(s) {
				continue
			}
			if id, ok := b.members[s][tn.Name]; ok && id != target && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}
