package codegraph

import (
	"strings"
)

// Python containers in the value flow: displays, appends and stores,
// element reads, copies, nested containers and element aliases.

// pyContainerAdds are the methods that put their first argument into the
// container they are called on.
var pyContainerAdds = map[string]bool{"append": true, "add": true, "appendleft": true}

// pyContainerMerges are the methods that put the elements of their first
// argument (a container) into the container they are called on.
var pyContainerMerges = map[string]bool{"update": true, "extend": true}

// pyContainerAdd turns x.append(v) (an argument record) into a flow of v
// into container x, as an element, and x.update(y) / x.extend(y) into a
// flow of y's value (its elements) into x.
func pyContainerAdd(fb *fileBuild, r refRec) (hintKey, flowSrc, bool) {
	slot, arg, ok := strings.Cut(r.Name, argSep)
	i := strings.LastIndexByte(r.Object, '.')
	if !ok || i <= 0 || !isDottedIdent(arg) {
		return hintKey{}, flowSrc{}, false
	}
	m := r.Object[i+1:]
	switch {
	case slot == "0" && pyContainerMerges[m]:
		// x.update(y), x.extend(y): x holds y's elements, as y does.
		k, ok := pyBoundKey(fb, r.Object[:i], r.Def)
		return k, flowSrc{scope: r.Def, expr: arg}, ok
	case slot == "0" && pyContainerAdds[m]:
		k, ok := pyBoundKey(fb, r.Object[:i], r.Def)
		return k, flowSrc{scope: r.Def, expr: arg, mode: flowElem}, ok
	}
	return hintKey{}, flowSrc{}, false
}

// pyBoundKey names the variable a container store writes: x in the scope
// that binds it (a module-level list filled inside a function is the
// module's), self.x as the class attribute.
func pyBoundKey(fb *fileBuild, name string, def int32) (hintKey, bool) {
	if strings.Contains(name, ".") {
		return flowKey(fb, name, def)
	}
	for d := def; d >= 0; d = fb.fd.Defs[d].Parent {
		if d != def && fb.fd.Defs[d].Kind == KindClass {
			continue
		}
		if fb.fill.isLocal(d, name) {
			return hintKey{scope: d, name: name}, true
		}
	}
	return hintKey{scope: -1, name: name}, true
}

// pyContainerLit reports a list, tuple, set or dict display.
func pyContainerLit(e string) bool {
	return len(e) >= 2 && (e[0] == '[' && e[len(e)-1] == ']' || e[0] == '(' && e[len(e)-1] == ')' || e[0] == '{' && e[len(e)-1] == '}')
}

// maxContainerText bounds the container displays read for their items.
const maxContainerText = 8000

// containerVals returns the values a container display holds (the items of
// a list, tuple or set, the values of a dict), marked as elements.
func (fe *flowEval) containerVals(fb *fileBuild, scope int32, e string, depth int) []flowVal {
	if len(e) > maxContainerText {
		return nil
	}
	var out []flowVal
	for _, item := range splitTop(e[1 : len(e)-1]) {
		item = strings.TrimSpace(item)
		if j := topLevelColon(item); j >= 0 && e[0] == '{' {
			item = strings.TrimSpace(item[j+1:])
		}
		if item == "" || strings.HasPrefix(item, "*") {
			continue
		}
		if !pyContainerLit(item) && !isDottedIdent(strings.TrimSuffix(dropCallArgs(item), "()")) {
			continue
		}
		for _, v := range fe.expr(fb, scope, item, depth+1) {
			v.elem = true
			out = addVals(out, v)
		}
	}
	return out
}

// elemsOf returns the elements of the containers among vs (for v in x,
// x[k], x.get(k)); an instance's __getitem__ gives what it returns.
func (fe *flowEval) elemsOf(vs []flowVal, subscript bool, depth int) []flowVal {
	var out []flowVal
	for _, v := range vs {
		if v.elem {
			out = addVals(out, unElem(v))
		} else if v.inst {
			if m, ok := fe.b.member(v.id, "__getitem__", false); ok && subscript {
				out = addVals(out, fe.returns(m, depth)...)
			}
			out = addVals(out, fe.pyInstElems(v.id, depth)...)
		}
	}
	return out
}

// unElem takes value v (an element) out of its container: an element of
// an inner container stays one, as a may value (which inner container
// holds it is unknown).
func unElem(v flowVal) flowVal {
	if v.nest {
		v.nest, v.may = false, true
	} else {
		v.elem = false
	}
	return v
}

// asElems marks values as put into a container.
func asElems(vs []flowVal) []flowVal { return markVals(vs, func(v *flowVal) { v.elem = true }) }

// flowNest is the mode of a source whose values are put, as elements of an
// inner container, into the name's container (pyElemAlias).
const flowNest flowMode = 3

// asNested marks the elements among vs as held by an inner container.
func asNested(vs []flowVal) []flowVal {
	return markVals(vs, func(v *flowVal) { v.nest = v.elem })
}

// pyElemAlias records `registry = d.setdefault(k, {})` as an alias of one
// of d's elements: what is stored into registry is also in d, one level
// down (registry[v] = cls makes cls an element of an element of d).
func pyElemAlias(fb *fileBuild, r refRec, hs *ifaceHash) {
	d, ok := strings.CutSuffix(r.Object, ".setdefault")
	if !ok || !isDottedIdent(d) || !isDottedIdent(r.Name) || strings.Contains(r.Name, ".") {
		return
	}
	k, ok := pyBoundKey(fb, d, r.Def)
	if !ok {
		return
	}
	addFlowSrc(fb, k, flowSrc{scope: r.Def, expr: r.Name, mode: flowNest}, hs)
}

// splitSubscript splits "x.y[k]" into "x.y" and true (the last top-level
// subscript), "" and false when e does not end in one.
func splitSubscript(e string) (string, bool) {
	if !strings.HasSuffix(e, "]") {
		return "", false
	}
	depth := 0
	for i := len(e) - 1; i >= 0; i-- {
		switch e[i] {
		case ']', ')', '}':
			depth++
		case '[', '(', '{':
			depth--
			if depth == 0 {
				if e[i] != '[' || i == 0 {
					return "", false
				}
				return e[:i], true
			}
		}
	}
	return "", false
}

// pyCopyFns are the built-ins that make a container of their argument's
// elements: list(x), sorted(x)…
var pyCopyFns = map[string]bool{"list": true, "tuple": true, "sorted": true, "reversed": true, "set": true, "frozenset": true}

// pyCopies finds the first arguments of calls of pyCopyFns (by callee, line
// and scope), to read `x = list(y)` as a copy of y's elements: extraction
// keeps only the callee of an assigned call.
func pyCopies(refs []refRec) map[pyStoreKey]string {
	var out map[pyStoreKey]string
	for _, r := range refs {
		if r.Kind != refArg || !pyCopyFns[r.Object] {
			continue
		}
		slot, arg, ok := strings.Cut(r.Name, argSep)
		if !ok || slot != "0" {
			continue
		}
		if out == nil {
			out = map[pyStoreKey]string{}
		}
		out[pyStoreKey{r.Object, r.Line, r.Def}] = arg
	}
	return out
}

// pyCacheWrapped returns f of functools.lru_cache(…)(f) and
// functools.cache(f) (also imported by name): the wrapper calls f, so the
// value is f's.
func pyCacheWrapped(e string) (string, bool) {
	e = strings.TrimPrefix(e, "functools.")
	var rest string
	switch {
	case strings.HasPrefix(e, "lru_cache("):
		end := groupEnd(e, len("lru_cache"))
		if end < 0 {
			return "", false
		}
		rest = e[end+1:]
	case strings.HasPrefix(e, "cache("):
		rest = e[len("cache"):]
	default:
		return "", false
	}
	if !strings.HasPrefix(rest, "(") || groupEnd(rest, 0) != len(rest)-1 {
		return "", false
	}
	f := strings.TrimSpace(rest[1 : len(rest)-1])
	return f, isDottedIdent(f)
}

// pyElemGets are the container methods whose result is one of the
// container's elements (x = d.get(k)): an assigned call of one is read as
// the expression d.get() (flow.go's expr), not as d.get's result.
var pyElemGets = []string{".get", ".pop", ".setdefault", ".copy"}

// pyElemCall reports an assigned callee whose result is read as an element
// of its receiver (or, for .copy, as the receiver).
func pyElemCall(callee string) bool {
	for _, m := range pyElemGets {
		if strings.HasSuffix(callee, m) && len(callee) > len(m) {
			return true
		}
	}
	return false
}
