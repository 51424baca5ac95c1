package codegraph

import (
	"strings"
)

// Tuples in the Python value flow: `return a, b` is a tuple display, and
// `x, y = f()` gives x the first item of the tuples f returns and y the
// second (by position, through chains of `return g(…)`).

// flowNth is the first of the modes "item k of the value's tuple": a
// source with mode flowNth+k reaches its name through `…, name, … = value`
// with name at position k.
const flowNth flowMode = 16

// maxUnpack bounds the positions an unpacking assignment is read for.
const maxUnpack = 32

// pyTupleText writes a bare tuple ("a, b", as in `return a, b`) as the
// display "(a, b)"; anything else comes back unchanged.
func pyTupleText(e string) string {
	if !strings.Contains(e, ",") || len(splitTop(e)) < 2 {
		return e
	}
	return "(" + e + ")"
}

// pyUnpack records `a, b = value` (r.Name is the target list "a, b"): each
// target takes the item of value's tuple at its position. Positions stop at
// a starred target (`a, *rest = …`).
func pyUnpack(fb *fileBuild, r refRec, hs *ifaceHash) {
	for i, n := range splitTop(r.Name) {
		n = strings.TrimSpace(n)
		if i >= maxUnpack || strings.HasPrefix(n, "*") {
			return
		}
		if !isDottedIdent(n) {
			continue
		}
		k, ok := flowKey(fb, n, r.Def)
		if !ok {
			continue
		}
		addFlowSrc(fb, k, flowSrc{scope: r.Def, expr: r.Object, mode: flowNth + flowMode(i)}, hs)
	}
}

// pyNth evaluates the item at position s.mode-flowNth of the tuples s can
// hold: an item of a tuple display, or of what a called function returns
// (each of its returns evaluated at the same position, memoised by src).
func (fe *flowEval) pyNth(fb *fileBuild, s flowSrc, depth int) []flowVal {
	if depth > maxFlowDepth {
		fe.cuts++
		return nil
	}
	k := int(s.mode - flowNth)
	e := strings.TrimSpace(s.expr)
	if !s.call {
		if pyContainerLit(e) && e[0] == '(' {
			items := splitTop(e[1 : len(e)-1])
			if len(items) < 2 || k >= len(items) {
				return nil
			}
			for _, it := range items[:k+1] {
				if strings.HasPrefix(strings.TrimSpace(it), "*") {
					return nil // positions after a starred item are unknown
				}
			}
			return fe.expr(fb, s.scope, strings.TrimSpace(items[k]), depth+1)
		}
		d := dropCallArgs(e)
		if !strings.HasSuffix(d, "()") || d == e && strings.Contains(e, "(") && !strings.HasSuffix(e, "()") {
			return nil
		}
		e = strings.TrimSuffix(d, "()")
	}
	var out []flowVal
	for _, v := range fe.expr(fb, s.scope, e, depth+1) {
		n := fe.b.node(v.id)
		if v.inst || v.elem || !n.found() || (n.Kind != KindFunction && n.Kind != KindMethod) {
			continue
		}
		loc, ok := fe.b.defAt(v.id)
		if !ok {
			continue
		}
		for _, r := range loc.fb.srcsOf(loc.fb.row(loc.idx, false, returnHint)) {
			if r.mode != flowPlain {
				continue
			}
			out = addVals(out, fe.src(loc.fb, flowSrc{scope: r.scope, expr: r.expr, call: r.call, mode: s.mode}, depth+1)...)
		}
	}
	return out
}
