package codegraph

import "strings"

// Go type facts the type flow (flow_go.go) reads beyond plain declarations:
// the constraints of type parameters, and composite literals whose value
// text is too long to keep.

// goDropLiteralValues keeps one type per composite literal assignment: x :=
// T{…} records both the value (when it is short) and the literal's type T
// (always, so that long multi-line literals still type x); the value is
// dropped where the type is known. It runs while finishTables lays out the
// hints (h: each row's types, which it shortens in place).
func (fb *fileBuild) goDropLiteralValues(h *hintLayout) {
	for _, r := range fb.fd.Refs.All() {
		if r.Kind != refAssign || r.Object == "" || strings.HasPrefix(r.Object, valuePrefix) || strings.Contains(r.Name, ".") {
			continue
		}
		i, ok := h.rowOf(r.Def, r.Name)
		if !ok {
			continue
		}
		ts := h.of(i)
		if len(ts) < 2 {
			continue
		}
		for j, t := range ts {
			v, ok := strings.CutPrefix(t, valuePrefix)
			if !ok {
				continue
			}
			v = strings.TrimLeft(v, "& ")
			if strings.HasPrefix(v, r.Object) && strings.HasPrefix(strings.TrimSpace(v[len(r.Object):]), "{") {
				h.drop(i, j)
				break
			}
		}
	}
}

// goTypeParam finds the constraint of type parameter name of the function
// enclosing scope, or of the generic type a method's receiver names
// (func (b *Box[E]) … with type Box[E Item]): the constraint's text and
// where its names are bound.
func (ev *goEval) goTypeParam(fb *fileBuild, name string, scope int32) (string, *fileBuild, int32, bool) {
	for d := scope; d >= 0; d = fb.fd.Defs[d].Parent {
		def := fb.fd.Defs[d]
		if c, ok := goConstraint(def.Sig, def.Name, name); ok {
			return c, fb, d, true
		}
		if def.Kind != KindMethod || def.receiver() == "" {
			continue
		}
		cls, ok := ev.b.enclosingClass(fb, d)
		if !ok {
			continue
		}
		loc, ok := ev.b.defAt(cls)
		if !ok {
			continue
		}
		cd := loc.fb.fd.Defs[loc.idx]
		if c, ok := goConstraint(cd.Sig, cd.Name, name); ok {
			return c, loc.fb, -1, true
		}
	}
	return "", nil, 0, false
}

// goConstraint returns the constraint of type parameter param in the type
// parameter list that follows name in sig ("F[T Stringer, K comparable]("):
// "" and false when there is none or it is any/comparable.
func goConstraint(sig, name, param string) (string, bool) {
	i := strings.Index(sig, name+"[")
	if i < 0 {
		return "", false
	}
	s := sig[i+len(name):]
	j := groupEnd(s, 0)
	if j < 0 {
		return "", false
	}
	items := splitTop(s[1:j])
	for k, it := range items {
		f := strings.Fields(it)
		if len(f) == 0 || f[0] != param {
			continue
		}
		// Grouped names (K, V any) take the constraint of the next item.
		for ; k < len(items); k++ {
			if g := strings.Fields(items[k]); len(g) > 1 {
				c := strings.TrimSpace(strings.Join(g[1:], " "))
				if c == "any" || c == "comparable" || c == "interface{}" {
					return "", false
				}
				return c, true
			}
		}
	}
	return "", false
}
