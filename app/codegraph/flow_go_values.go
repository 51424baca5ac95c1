package codegraph

import "strings"

// Go function values. A call through a local variable holding a function or
// a method value (f := t.M; f(); var g = helper; g()) is a calls edge to that
// function: evaluateded by goEval like any other local. A function passed as
// an argument to a parameter of func type that the callee calls
// (apply(helper) where func apply(cb func()) { cb() }) makes a dispatches
// edge from the callee to the function: that call can run it. The edge is
// made while resolving the call site's file, so editing the call site
// re-resolves it; a change to which parameters the callee calls changes the
// callee's interface hash (goVisibleType), which re-resolves its callers.
//
// Not modelled: functions stored in struct fields, maps or slices and called
// from there (t.fn(x), table[k](x)), closures passed as arguments (their
// calls already belong to the enclosing function), and values flowing
// through more than one parameter.

// goParamName returns the name of the parameter of Go function signature sig
// (function or method name) that receives argument slot k, "" when unnamed.
func goParamName(sig, name string, k int) string {
	i := strings.Index(sig, " "+name+"(")
	if i < 0 {
		i = strings.Index(sig, " "+name+"[")
		if i < 0 {
			return ""
		}
	}
	s := sig[i+1+len(name):]
	if s[0] == '[' {
		j := groupEnd(s, 0)
		if j < 0 {
			return ""
		}
		s = s[j+1:]
	}
	if s == "" || s[0] != '(' {
		return ""
	}
	j := groupEnd(s, 0)
	if j < 0 {
		return ""
	}
	items := splitTop(s[1:j])
	named := false
	for _, it := range items {
		if strings.IndexAny(strings.TrimSpace(it), " \t") > 0 {
			named = true
			break
		}
	}
	if !named {
		return ""
	}
	for i, it := range items {
		it = strings.TrimSpace(it)
		nm, typ, _ := strings.Cut(it, " ")
		if i == k || (i < k && strings.HasPrefix(strings.TrimSpace(typ), "...")) {
			return nm
		}
	}
	return ""
}

// goParamCalled reports whether Go definition def of fb calls its parameter
// name (func apply(cb func()) { cb() }).
func goParamCalled(fb *fileBuild, def int32, name string) bool {
	return fb.goParamCalls[nestKey{def, name}]
}

// goRecordParamCalls records, per definition, the parameters it calls.
func (fb *fileBuild) goRecordParamCalls() {
	for _, r := range fb.fd.Refs.All() {
		if goCallsParam(fb.fd, r) {
			if fb.goParamCalls == nil {
				fb.goParamCalls = map[nestKey]bool{}
			}
			fb.goParamCalls[nestKey{r.Def, r.Name}] = true
		}
	}
}

// goCallsParam reports a call of a parameter of the enclosing function.
func goCallsParam(fd *fileData, r refRec) bool {
	if r.Kind != refCall || r.Object != "" || r.Def < 0 || fd.Lang != "go" {
		return false
	}
	d := fd.Defs[r.Def]
	if d.Kind != KindFunction && d.Kind != KindMethod {
		return false
	}
	if !strings.Contains(d.Sig, r.Name) {
		return false
	}
	for k := 0; k < 64; k++ {
		p := goParamName(d.Sig, d.Name, k)
		if p == "" {
			return false
		}
		if p == r.Name {
			return true
		}
	}
	return false
}

// goResolveArg handles an argument passed to a call: a function or method
// value passed to a parameter the callee calls gets a dispatches edge from
// the callee to it.
func (b *builder) goResolveArg(fb *fileBuild, r refRec, res *fileResult) {
	slot, arg, ok := strings.Cut(r.Name, argSep)
	if !ok || arg == "" {
		return
	}
	k := 0
	for _, c := range slot {
		if c < '0' || c > '9' {
			return
		}
		k = k*10 + int(c-'0')
	}
	ev := &goEval{b: b, fb: fb, line: r.Line}
	callee := ev.eval(fb, r.Def, r.Object, 0)
	if callee.kind != geFunc {
		return
	}
	loc, ok := b.defAt(callee.id)
	if !ok || loc.fb.goParamCalls == nil {
		return
	}
	d := loc.fb.fd.Defs[loc.idx]
	p := goParamName(d.Sig, d.Name, k)
	if p == "" || !goParamCalled(loc.fb, loc.idx, p) {
		return
	}
	fn := ev.eval(fb, r.Def, arg, 0)
	if fn.kind != geFunc {
		return
	}
	if n := b.node(fn.id); !n.found() || (n.Kind != KindFunction && n.Kind != KindMethod) {
		return
	}
	res.addEdge(callee.id, fn.id, EdgeDispatches, r.Line)
}
