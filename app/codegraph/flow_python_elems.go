package codegraph

import (
	"cmp"
	"slices"
	"strings"
)

// Elements of instances of container classes: a class of the project that
// subclasses list, dict, set, deque, UserList… holds what the file being
// resolved puts into its instances (`t = TokenList(); t.append(x)`), so
// `for x in self`, `self[0]` and `self[k]` inside it (or on any of its
// instances) take those values. Only the file being resolved is read, as
// for parameter values: its own edits re-resolve it.

// pyContainerBases are the outside classes whose subclasses hold elements.
var pyContainerBases = map[string]bool{
	"list": true, "dict": true, "set": true, "frozenset": true, "tuple": true,
	"deque": true, "UserList": true, "UserDict": true, "OrderedDict": true,
	"defaultdict": true, "MutableSequence": true, "MutableMapping": true,
}

// pyContainerClass reports that class cls or one of its bases derives from
// a built-in container (remembered per class).
func (fe *flowEval) pyContainerClass(cls string) bool {
	if v, ok := fe.containerCls[cls]; ok {
		return v
	}
	found := false
	fe.b.walkMRO(cls, func(c string) bool {
		loc, ok := fe.b.defAt(c)
		if !ok || loc.fb.lang == nil || loc.fb.lang.family != "python" {
			return true
		}
		for _, r := range loc.fb.inherits {
			if r.parent == loc.idx && pyContainerBases[r.name] {
				found = true
				return false
			}
		}
		return true
	})
	if fe.containerCls == nil {
		fe.containerCls = map[string]bool{}
	}
	fe.containerCls[cls] = found
	return found
}

// pyInstElems returns what the file being resolved puts into instances of
// container class cls or of its subclasses.
func (fe *flowEval) pyInstElems(cls string, depth int) []flowVal {
	if depth > maxFlowDepth {
		fe.cuts++
		return nil
	}
	if !fe.pyContainerClass(cls) {
		return nil
	}
	fb := fe.fb
	if fe.instElems == nil {
		// Once per file: every variable that is filled as a container and
		// also holds an instance, by the instance's class.
		// In a fixed order: what an evaluation finds can depend on what was
		// evaluated before it (cycles, depth cuts), and map order is random.
		fe.instElems = map[string][]hintKey{}
		var keys []hintKey
		for k := range fb.flowVars() {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b hintKey) int {
			if c := cmp.Compare(a.scope, b.scope); c != 0 {
				return c
			}
			if a.attr != b.attr {
				if a.attr {
					return 1
				}
				return -1
			}
			return strings.Compare(a.name, b.name)
		})
		for _, k := range keys {
			ss, _ := fb.flowAt(k.scope, k.attr, k.name)
			filled := false
			for _, s := range ss {
				filled = filled || s.mode == flowElem
			}
			if !filled {
				continue
			}
			for _, s := range ss {
				if s.mode != flowPlain {
					continue
				}
				for _, v := range fe.src(fb, s, depth+1) {
					if v.inst && !v.elem && fe.pyContainerClass(v.id) && !slices.Contains(fe.instElems[v.id], k) {
						if _, seen := fe.instElems[v.id]; !seen {
							fe.instElemCls = append(fe.instElemCls, v.id)
						}
						fe.instElems[v.id] = append(fe.instElems[v.id], k)
					}
				}
			}
		}
	}
	var out []flowVal
	for _, d := range fe.instElemCls {
		if !fe.b.subclassOf(d, cls) {
			continue
		}
		for _, k := range fe.instElems[d] {
			ss, _ := fb.flowAt(k.scope, k.attr, k.name)
			for _, s := range ss {
				if s.mode != flowElem {
					continue
				}
				for _, v := range fe.src(fb, s, depth+1) {
					v = unElem(v)
					v.may = true
					out = addVals(out, v)
				}
			}
		}
	}
	return out
}

// subclassOf reports that class d is cls or derives from it.
func (b *builder) subclassOf(d, cls string) bool {
	found := false
	b.walkMRO(d, func(c string) bool {
		found = c == cls
		return !found
	})
	return found
}

// asMay marks values as reached through a container element (see flowVal).
func asMay(vs []flowVal) []flowVal { return markVals(vs, func(v *flowVal) { v.may = true }) }

// markVals returns vs with mark applied to each value (deduplicated the
// way addVals does).
func markVals(vs []flowVal, mark func(*flowVal)) []flowVal {
	out := make([]flowVal, 0, len(vs))
	for _, v := range vs {
		mark(&v)
		out = addVals(out, v)
	}
	return out
}

// addValEdge adds the edge of a call made through value v: a call on an
// element of a container may run the method (dispatches), else it does
// (and a recursive one stays a call: dispatches have no loops).
func addValEdge(res *fileResult, src, target string, v flowVal, line int32) {
	if v.may && src != target {
		res.addEdge(src, target, EdgeDispatches, line)
		return
	}
	res.addEdge(src, target, EdgeCalls, line)
}
