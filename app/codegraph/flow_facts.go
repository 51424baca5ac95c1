package codegraph

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Per-file records of the value-flow layer (see flow.go): the flow table,
// parameter uses, decorators, signatures.

// flowSrc is one value flowing into a name: the expression text, the scope
// (definition index, -1 for the module) it is evaluated in, and whether the
// name holds the expression's value or the result of calling it.
type flowSrc struct {
	expr  string // (first: 24 bytes, not 32 with the scope before it)
	scope int32
	call  bool
	mode  flowMode
}

// flowMode says how a source's values reach the name (Python containers).
type flowMode uint8

const (
	flowPlain flowMode = iota
	flowElem           // the value is put into the container: x.append(v), x[k] = v
	flowIter           // the name takes the elements: for v in x
)

// flowVal is an abstract value: a definition node, or an instance of a
// class; elem marks a container (list, dict, set, tuple) holding it.
type flowVal struct {
	id   string
	inst bool
	elem bool
	// may marks a value known only as one element among others of a
	// container (Python: an instance of a list subclass): a call on it
	// may run the method it names, so it makes a dispatches edge.
	may bool
	// nest marks an element that is itself a container's element (Python:
	// d[k][j], a dict of dicts); taking it out of the outer container
	// leaves a may value (which inner container is unknown).
	nest bool
}

// flowFamilies are the language families the value-flow layer serves.
func flowFamily(l *language) bool {
	return l != nil && (l.family == "python" || l.family == "js")
}

// fillFlow builds fb's flow table from its refValue and refAssign records
// (refs, decoded once by fillFileBuild)
// and hashes its interface part (what other files read) with hs.
func fillFlow(fb *fileBuild, refs []refRec, hs *ifaceHash) {
	if !flowFamily(fb.lang) {
		return
	}
	fd := fb.fd
	fillFacts(fb, refs, hs)
	if fb.lang.family == "js" {
		fillJSDoc(fb, hs)
	}
	var marks map[pyStoreKey]flowMode
	var copies map[pyStoreKey]string
	if fb.lang.family == "python" {
		marks = pyFlowMarks(refs)
		copies = pyCopies(refs)
	}
	for _, r := range refs {
		var src flowSrc
		var k hintKey
		var ok bool
		switch {
		case r.Kind == refArg && marks != nil:
			k, src, ok = pyContainerAdd(fb, r)
		case r.Kind != refValue && r.Kind != refAssign:
			continue
		case marks != nil && r.Kind == refValue && strings.Contains(r.Name, ","):
			pyUnpack(fb, r, hs) // a, b = f()
			continue
		default:
			src = flowSrc{scope: r.Def, expr: r.Object, call: r.Kind == refAssign}
			if marks != nil && r.Kind == refValue && r.Name == returnHint {
				src.expr = pyTupleText(src.expr) // return a, b
			}
			if arg, ok := copies[pyStoreKey{r.Object, r.Line, r.Def}]; ok && r.Kind == refAssign {
				src = flowSrc{scope: r.Def, expr: r.Object + "(" + arg + ")"} // x = list(y)
			} else if marks != nil && r.Kind == refAssign && pyElemCall(r.Object) {
				src = flowSrc{scope: r.Def, expr: r.Object + "()"} // x = d.get(k) (flow_python_containers.go)
				pyElemAlias(fb, r, hs)
			}
			if marks != nil && r.Kind == refValue {
				if marks[pyStoreKey{"\x00" + r.Object, r.Line, r.Def}] == flowIter {
					src.mode = flowIter // for v in x
				} else if marks[pyStoreKey{r.Name, r.Line, r.Def}] == flowElem {
					src.mode = flowElem // x[k] = v
				}
			}
			if src.mode == flowElem {
				k, ok = pyBoundKey(fb, r.Name, r.Def)
			} else {
				k, ok = flowKey(fb, r.Name, r.Def)
			}
		}
		if !ok {
			continue
		}
		addFlowSrc(fb, k, src, hs)
		// A class-body name (x = f, x: T) is also an attribute of the class.
		if r.Kind != refArg && r.Def >= 0 && fd.Defs[r.Def].Kind == KindClass && !k.attr && r.Name != returnHint {
			ak := hintKey{scope: r.Def, attr: true, name: "self." + r.Name}
			fb.fill.addSrc(ak, src)
		}
	}
	if marks != nil {
		pyClassAttrStores(fb, refs, hs) // C.x = v at module level (flow_python_classes.go)
	}
}

// addFlowSrc records that src flows into k, hashing it when other files
// can read k (module-level names, attributes, results, parameters).
func addFlowSrc(fb *fileBuild, k hintKey, src flowSrc, hs *ifaceHash) {
	fb.fill.addSrc(k, src)
	if k.scope < 0 || k.attr || k.name == returnHint || (fb.facts != nil && slices.Contains(fb.facts.params.of(k.scope), k.name)) {
		hs.add("f", strconv.Itoa(int(k.scope)), strconv.FormatBool(k.attr), k.name,
			strconv.Itoa(int(src.scope)), src.expr, strconv.FormatBool(src.call), strconv.Itoa(int(src.mode)))
	}
}

// flowFacts are what a file's functions do with their parameters and which
// decorators wrap them, for the call sites in other files.
type flowFacts struct {
	params paramTable            // function → parameter names, in order
	uses   defLists[paramUse]    // function → calls through its parameters
	decos  defLists[decoratorAt] // function → its decorators
}

// defLists holds a list per definition for the few definitions that have
// one, in one slab (Go maps of slices, two per file, took 6.5 MB of a pyenv
// resolution's live heap).
type defLists[T any] struct {
	defs  []int32  // the definitions with a list, in increasing order
	at    []uint32 // defs[i]'s list is items[at[i]:at[i+1]]
	items []T
}

// newDefLists lays out m (definition → its list).
func newDefLists[T any](m map[int32][]T) defLists[T] {
	if len(m) == 0 {
		return defLists[T]{}
	}
	l := defLists[T]{defs: slices.Sorted(maps.Keys(m)), at: make([]uint32, 0, len(m)+1)}
	n := 0
	for _, xs := range m {
		n += len(xs)
	}
	l.items = make([]T, 0, n)
	for _, d := range l.defs {
		l.at = append(l.at, uint32(len(l.items)))
		l.items = append(l.items, m[d]...)
	}
	l.at = append(l.at, uint32(len(l.items)))
	return l
}

// of returns definition d's list.
func (l *defLists[T]) of(d int32) []T {
	i, ok := slices.BinarySearch(l.defs, d)
	if !ok {
		return nil
	}
	return l.items[l.at[i]:l.at[i+1]:l.at[i+1]]
}

// paramTable holds the parameter names of a file's functions in one slab:
// definition d's are names[at[d]:at[d+1]] (a map of slices, one per
// function, took twice the memory).
type paramTable struct {
	names []string
	at    []uint32 // per definition (added in index order), then the end
}

// add records ps as the parameters of definition d (the definitions are
// added in increasing order; those skipped have none).
func (t *paramTable) add(d int32, ps []string) {
	if len(ps) == 0 {
		return
	}
	for int32(len(t.at)) <= d {
		t.at = append(t.at, uint32(len(t.names)))
	}
	t.names = append(t.names, ps...)
}

// of returns the parameters of definition d (none for the module, -1).
func (t *paramTable) of(d int32) []string {
	if d < 0 || int(d) >= len(t.at) {
		return nil
	}
	end := uint32(len(t.names))
	if int(d)+1 < len(t.at) {
		end = t.at[d+1]
	}
	return t.names[t.at[d]:end:end]
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
func fillFacts(fb *fileBuild, refs []refRec, hs *ifaceHash) {
	fd := fb.fd
	ff := &flowFacts{}
	var uses map[int32][]paramUse
	var decos map[int32][]decoratorAt
	for i, d := range fd.Defs {
		if d.Kind == KindFunction || d.Kind == KindMethod {
			ff.params.add(int32(i), sigParams(d.Sig, d.Name))
			if fb.lang.family == "js" {
				hs.add("sig", strconv.Itoa(i), d.Sig) // callbacks are typed from it
			}
		}
	}
	ff.params.names, ff.params.at = trimSlack(ff.params.names), trimSlack(ff.params.at)
	for _, r := range refs {
		switch r.Kind {
		case refDecorator:
			if r.Def < 0 {
				continue
			}
			e := r.Name
			if r.Object != "" {
				e = r.Object + "." + r.Name
			}
			if decos == nil {
				decos = map[int32][]decoratorAt{}
			}
			decos[r.Def] = append(decos[r.Def], decoratorAt{e, fd.Defs[r.Def].Parent})
			hs.add("deco", strconv.Itoa(int(r.Def)), e)
		case refCall:
			name, member := r.Name, ""
			if r.Object != "" {
				if !isDottedIdent(r.Object) || strings.Contains(r.Object, ".") {
					continue
				}
				name, member = r.Object, r.Name
			}
			if slices.Contains(fb.lang.selfNames, name) {
				continue // self.m(): the class hierarchy's business
			}
			if f := paramOwner(fb, ff, name, r.Def); f >= 0 {
				u := paramUse{param: name, member: member, caller: r.Def}
				if !containsUse(uses[f], u) {
					if uses == nil {
						uses = map[int32][]paramUse{}
					}
					uses[f] = append(uses[f], u)
					hs.add("use", strconv.Itoa(int(f)), name, member, strconv.Itoa(int(r.Def)))
				}
			}
		}
	}
	ff.uses, ff.decos = newDefLists(uses), newDefLists(decos)
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
		if r := fb.fill.rowOf(d, name); r != nil && r.nested > 0 {
			return -1
		}
		if slices.Contains(ff.params.of(d), name) {
			return d
		}
		// (Locals are not asked: the flow facts were filled before the
		// locals table was set, which read as empty here; kept so.)
	}
	return -1
}

// sigParams returns the parameter names of a Python or JS/TS signature
// ("def f(a, b=1, *args, c: int = 2)"); positional ones first, a "*" entry
// marks where positions stop.
func sigParams(sig, name string) []string {
	var out []string
	for _, p := range sigParamTexts(sig, name) {
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
	return out
}

// sigParamTexts splits the parameter list of the function name in sig (the
// first one when name is not found) at its top-level commas.
func sigParamTexts(sig, name string) []string {
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
				return append(out, sig[start:j])
			}
		case ',':
			if depth == 1 {
				out = append(out, sig[start:j])
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
		if !slices.Contains(fb.lang.selfNames, obj) || strings.Contains(rest, ".") {
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
