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
func pyClassAttrStores(fb *fileBuild, hs func(...string)) {
	fd := fb.fd
	var classes map[string]int32
	for _, r := range fd.Refs {
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
	name := b.nodeByID[getter].Name
	var vals []flowVal
	if shadowed {
		vals = fe.attr(flowVal{id: cls, inst: true}, name, 0)
	} else {
		vals = fe.pySubclassAttr(flowVal{id: cls, inst: true}, name, 0)
	}
	for _, v := range vals {
		n := b.nodeByID[v.id]
		if n == nil || v.elem {
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
	gn := b.nodeByID[getter]
	if gn == nil {
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
			if loc, ok := b.defLoc[k]; ok {
				if _, ok := loc.fb.flow[hintKey{scope: loc.idx, attr: true, name: "self." + gn.Name}]; ok {
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
