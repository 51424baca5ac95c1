package codegraph

import (
	"slices"
	"strings"
)

// Python class shapes: attributes stored into a class from outside its body
// (`IPv4Address._constants = _IPv4Constants` at module level), constructors
// of self's own class (`self.__class__(…)`, `cls(…)`: the subclasses'
// __init__ may run), and a base-class @property that the subclasses
// replace with a class attribute (`_address_class = IPv4Address`).

// pyClassAttrStores records `C.x = v` at module level, C a class of the
// file, as the class attribute x of C (read as self.x and C.x, by other
// files too: it is hashed into the interface).
func pyClassAttrStores(fb *fileBuild, refs []refRec, hs *ifaceHash) {
	fd := fb.fd
	var classes map[string]int32
	for _, r := range refs {
		if r.Def != -1 || (r.Kind != refValue && r.Kind != refAssign) {
			continue
		}
		obj, attr, ok := strings.Cut(r.Name, ".")
		if !ok || strings.Contains(attr, ".") || !isDottedIdent(r.Name) {
			continue
		}
		if classes == nil {
			classes = map[string]int32{}
			for i, d := range fd.Defs {
				if d.Kind == KindClass && d.Parent < 0 {
					classes[d.Name] = int32(i)
				}
			}
		}
		ci, ok := classes[obj]
		if !ok {
			continue
		}
		addFlowSrc(fb, hintKey{scope: ci, attr: true, name: "self." + attr}, flowSrc{scope: -1, expr: r.Object, call: r.Kind == refAssign}, hs)
	}
}

// pyDynamicInit adds, for a constructor call through the class of self
// (`self.__class__(…)`, `cls(…)`), the __init__ methods of cls's
// subclasses: the instance may be of any of them.
func (b *builder) pyDynamicInit(fb *fileBuild, r refRec, cls, src string, res *fileResult) {
	if fb.lang.family != "python" || !(r.Name == "__class__" && slices.Contains(fb.lang.selfNames, r.Object) || r.Name == "cls" && r.Object == "") {
		return
	}
	b.pySubclassInits(cls, src, r.Line, res)
}

// pySubclassInits adds dispatches to the __init__ methods the subclasses
// of cls define (overriding cls's own, or where cls has none).
func (b *builder) pySubclassInits(cls, src string, line int32, res *fileResult) {
	var inits []string
	if init, ok := b.member(cls, "__init__", false); ok {
		inits = b.dispatchTargets(cls, init)
	} else {
		inits = b.pySubclassMethods(cls, "__init__")
	}
	for _, m := range inits {
		res.addEdge(src, m, EdgeDispatches, line)
	}
}

// pyCallProperty binds self.p(…) where p is a @property that does not run
// for self's class: a class before the getter's along the bases sets p
// (IPv6Network's `_address_class = IPv6Address` over _BaseNetwork's
// property), or every subclass does (then the values are dispatches). It
// reports false (nothing done) when the getter may run.
func (b *builder) pyCallProperty(fe *flowEval, fb *fileBuild, r refRec, src, getter string, res *fileResult) bool {
	if fb.lang.family != "python" || r.Kind != refCall || !slices.Contains(fb.lang.selfNames, r.Object) || !b.pyProperty(getter) {
		return false
	}
	cls, ok := b.enclosingClass(fb, r.Def)
	if !ok {
		return false
	}
	shadowed, bySubs := b.pyGetterShadowed(cls, getter)
	if !shadowed && !bySubs {
		return false
	}
	name := b.node(getter).Name
	var vals []flowVal
	if shadowed {
		vals = fe.attr(flowVal{id: cls, inst: true}, name, 0)
	} else {
		vals = fe.pySubclassAttr(flowVal{id: cls, inst: true}, name, 0)
	}
	for _, v := range vals {
		n := b.node(v.id)
		if !n.found() || v.elem {
			continue
		}
		switch {
		case v.inst:
			if m, ok := b.member(v.id, "__call__", false); ok {
				addValEdge(res, src, m, v, r.Line)
			}
		case n.Kind == KindClass:
			addValEdge(res, src, v.id, v, r.Line)
			if m, ok := b.member(v.id, "__init__", false); ok {
				addValEdge(res, src, m, v, r.Line)
			}
		case n.Kind == KindFunction || n.Kind == KindMethod:
			if v.id != getter {
				addValEdge(res, src, v.id, v, r.Line)
			}
		}
	}
	return true
}

// pyGetterShadowed tells whether property getter, the member the name
// rules find for an instance of cls, does not run: shadowed, a class
// before the getter's along cls's bases sets the name as a class
// attribute; bySubs, every leaf subclass of cls reaches such a class
// attribute first (the getter is a placeholder of an abstract base).
func (b *builder) pyGetterShadowed(cls, getter string) (shadowed, bySubs bool) {
	gn := b.node(getter)
	if !gn.found() {
		return false, false
	}
	// first reports whether the first definition of the name along c's
	// bases is a class attribute.
	first := func(c string) bool {
		other := false
		b.walkMRO(c, func(k string) bool {
			if _, ok := b.members[k][gn.Name]; ok {
				return false // the getter, or an override of it: it dispatches
			}
			if loc, ok := b.defAt(k); ok {
				if _, ok := loc.fb.flowAt(loc.idx, true, "self."+gn.Name); ok {
					other = true
					return false
				}
			}
			return true
		})
		return other
	}
	if first(cls) {
		return true, false
	}
	queue := []string{cls}
	for i := 0; i < len(queue); i++ {
		subs := b.subs[queue[i]]
		if len(subs) == 0 && (i == 0 || !first(queue[i])) {
			return false, false
		}
		for _, s := range subs {
			if len(queue) >= maxSubclassWalk {
				return false, false
			}
			if !slices.Contains(queue, s) {
				queue = append(queue, s)
			}
		}
	}
	return false, true
}

// pyPartner is a class combined with another by type(name, bases, d):
// before tells that it comes first in the bases (its methods override the
// other's).
type pyPartner struct {
	cls    string
	before bool
}

// pyCallShapes adds what flow_python_classes.go knows about a call on self
// or cls: a property the subclasses replace (pyCallProperty) and the
// methods of the classes fb combines with self's class at run time (a
// mixin's self.init() reaches the init of the class put before it, its
// cls.parse() the parse it lacks). It reports that the call needs nothing
// more.
func (b *builder) pyCallShapes(fe *flowEval, fb *fileBuild, r refRec, src, target string, out outcome, res *fileResult) bool {
	if fb.lang.family != "python" || r.Kind != refCall {
		return false
	}
	isSuper := r.Object == "super()"
	if !isSuper && !slices.Contains(fb.lang.selfNames, r.Object) {
		return false
	}
	if out == outResolved && !isSuper && b.pyCallProperty(fe, fb, r, src, target, res) {
		return true
	}
	if isSuper && out == outResolved {
		return false
	}
	if out == outBuiltin {
		return false
	}
	cls, ok := b.enclosingClass(fb, r.Def)
	if !ok {
		return false
	}
	added := false
	for _, p := range fe.pyPartners()[cls] {
		if out == outResolved && !p.before || isSuper && p.before {
			continue // cls's own method wins over those after it; super() looks after it
		}
		m, ok := b.member(p.cls, r.Name, false)
		if !ok || m == target {
			continue
		}
		if n := b.node(m); n.found() && n.Kind == KindMethod {
			res.addEdge(src, m, EdgeDispatches, r.Line)
			added = true
		}
	}
	return added && out != outResolved
}

// pyPartners returns, by class, the classes fb combines it with at run time
// (type(name, (A, B), {}), each base evaluated through values).
func (fe *flowEval) pyPartners() map[string][]pyPartner {
	if fe.partners != nil {
		return fe.partners
	}
	fe.partners = map[string][]pyPartner{}
	fb := fe.fb
	for _, r := range fe.refsOf(fb) {
		if r.Kind != refImplicit || r.Name != "type" || !strings.HasPrefix(r.Object, "(") || !strings.HasSuffix(r.Object, ")") {
			continue
		}
		var sets [][]string
		for _, item := range splitTop(r.Object[1 : len(r.Object)-1]) {
			var set []string
			for _, v := range fe.expr(fb, r.Def, strings.TrimSpace(item), 0) {
				if n := fe.b.node(v.id); n.found() && n.Kind == KindClass && !v.inst && !v.elem && !slices.Contains(set, v.id) {
					set = append(set, v.id)
				}
			}
			sets = append(sets, set)
		}
		for i, si := range sets {
			for _, sj := range sets[i+1:] {
				for _, x := range si {
					for _, y := range sj {
						if x == y {
							continue
						}
						fe.partners[y] = addPartner(fe.partners[y], pyPartner{x, true})
						fe.partners[x] = addPartner(fe.partners[x], pyPartner{y, false})
					}
				}
			}
		}
	}
	return fe.partners
}

func addPartner(ps []pyPartner, p pyPartner) []pyPartner {
	if slices.Contains(ps, p) {
		return ps
	}
	return append(ps, p)
}

// pyAssigned reports that name is assigned in scope (a local cls).
func pyAssigned(fb *fileBuild, scope int32, name string) bool {
	_, ok := fb.flowAt(scope, false, name)
	return ok
}

// pyPathModules are the outside modules whose functions take paths (an
// os.PathLike argument: its __fspath__ runs). Only functions written in C
// count: the call of __fspath__ is then made from the caller's frame (the
// os functions written in Python, pyPathPythonFns, call it themselves).
var pyPathModules = map[string]bool{"os": true, "io": true}

// pyPathPythonFns are the functions of os written in Python.
var pyPathPythonFns = map[string]bool{"fsencode": true, "fsdecode": true, "makedirs": true, "removedirs": true,
	"renames": true, "walk": true, "fwalk": true, "popen": true, "fdopen": true, "get_exec_path": true}

// pyPathArg adds the __fspath__ call of an instance handed to a path
// function of os or io or to open(): os.stat(self) runs self.__fspath__
// (pathlib).
func (b *builder) pyPathArg(fe *flowEval, fb *fileBuild, r refRec, obj, name, arg, src string, res *fileResult) {
	if fb.lang.family != "python" || !(pyPathModules[obj] && !pyPathPythonFns[name] || obj == "" && name == "open") || b.pyNames["__fspath__"]&pyMethod == 0 {
		return
	}
	if obj != "" {
		if bd, ok := fb.lookupName(strings.SplitN(obj, ".", 2)[0], r.Def); !ok || bd.kind == bDef {
			return // not the imported module
		}
	}
	for _, v := range fe.topExpr(fb, r.Def, arg) {
		if !v.inst || v.elem {
			continue
		}
		if m, ok := b.member(v.id, "__fspath__", false); ok {
			addValEdge(res, src, m, v, r.Line)
		}
	}
}
