package codegraph

import "strings"

// Go type flow. Extraction records, per definition, what gives each name a
// type: parameter, field, var and result types (type expressions) and the
// value expressions of := / var / range assignments (refRec.Object after
// valuePrefix). A receiver expression such as s.conn.db, x[i], NewT(2),
// a.B().C() or v.(T) is typed by evaluating its text over those facts:
// identifiers through the definition's scope chain, then package-level vars,
// selectors through struct fields (and embedded types) or package members,
// calls through the callee's declared result type (whatever the arguments),
// indexing through slice/array/map element types, assertions by their type.
//
// Also followed: type aliases (to their target), type parameters (to their
// constraint), locals holding function or method values (flow_go_values.go).
// Not modelled (see BENCHMARKS.md): functions stored in struct fields, maps
// or slices, plain reassignment (x = f()) after a typed declaration, and a
// variable that takes different types in one function (resolved by the
// assignment last before the use, else when one type has the member).

type goEntKind uint8

const (
	geNone    goEntKind = iota
	gePkg               // a package: key
	geType              // a type: typ
	geFunc              // a function or method node: id
	geValue             // a value of type typ
	geBuiltin           // a builtin function: key
)

// goTyp is a type expression with the place it was written in (names in it
// are bound from there), or an already resolved class.
type goTyp struct {
	fb    *fileBuild
	scope int32
	expr  string
	cls   string
}

// goEnt is what a Go expression denotes while its type is followed.
type goEnt struct {
	kind goEntKind
	key  string
	id   string
	typ  goTyp
	ext  bool // unknown because it lies outside the project (or is builtin)
}

// goEval evaluates Go expressions; one per resolved reference.
type goEval struct {
	b *builder
	// The reference being resolved: its file and line pick, among several
	// types of a variable, the one assigned last before the line.
	fb   *fileBuild
	line int32
	// A variable with several recorded types: which one to take (forceName),
	// and the first such variable met (ambName, ambN).
	forceName string
	forceIdx  int
	ambName   string
	ambN      int
}

const goMaxDepth = 8

// goResolveRef resolves a Go reference with a receiver expression.
func (b *builder) goResolveRef(fb *fileBuild, r refRec) (string, outcome) {
	ev := &goEval{b: b, fb: fb, line: r.Line}
	if r.Object == "" {
		// f(): a function, or a local holding a function or method value.
		id, out := b.resolveRef(fb, "go", r, 0)
		if out != outUnresolved {
			return id, out
		}
		if bd, ok := fb.lookupName(r.Name, r.Def); !ok || bd.kind != bLocal {
			return id, out
		}
		if e := ev.ident(fb, r.Def, r.Name, 0); e.kind == geFunc {
			if n := b.node(e.id); n.found() && (n.Kind == KindFunction || n.Kind == KindMethod) {
				return e.id, outResolved
			}
		}
		return id, out
	}
	ent := ev.eval(fb, r.Def, r.Object, 0)
	id, out := ev.selectRef(fb, ent, r.Name)
	if out == outResolved || ev.ambName == "" {
		return id, out
	}
	// A variable with several types (reused names, type switches): resolve
	// when exactly one of them has the member.
	found, name, n := "", ev.ambName, ev.ambN
	for i := 0; i < n && i < 8; i++ {
		alt := &goEval{b: b, fb: fb, line: r.Line, forceName: name, forceIdx: i}
		if id, out := alt.selectRef(fb, alt.eval(fb, r.Def, r.Object, 0), r.Name); out == outResolved {
			if found != "" && found != id {
				return "", outUnresolved
			}
			found = id
		}
	}
	if found != "" {
		return found, outResolved
	}
	return id, out
}

// selectRef resolves member name of what ent denotes.
func (ev *goEval) selectRef(fb *fileBuild, ent goEnt, name string) (string, outcome) {
	b := ev.b
	switch ent.kind {
	case gePkg:
		mk := modKey(fb.lang.family, ent.key)
		if id, ok := b.top[mk][name]; ok {
			return id, outResolved
		}
		if _, ok := b.modules[mk]; !ok {
			return "", outExternal
		}
		return "", outUnresolved
	case geValue, geType:
		cls, ext := ev.classOf(ent.typ)
		if cls == "" {
			if ext {
				return "", outExternal
			}
			return "", outUnresolved
		}
		return b.memberOutcome(cls, name, false)
	}
	if ent.ext {
		return "", outExternal
	}
	return "", outUnresolved
}

// classOf resolves the named type of t to a class node of the project;
// ext reports a type outside the project or builtin.
func (ev *goEval) classOf(t goTyp) (string, bool) {
	cls, ext := ev.classOf1(t)
	// A type alias (type A = B, type N = Box[int]) is its target type.
	for i := 0; i < 4 && cls != ""; i++ {
		n := ev.b.node(cls)
		if !n.found() || !strings.HasPrefix(n.Signature, n.Name+" = ") {
			break
		}
		u := ev.underlying(goTyp{cls: cls})
		if u.cls == cls || u.fb == nil {
			break
		}
		cls, ext = ev.classOf1(u)
	}
	return cls, ext
}

// classOf1 is classOf without following aliases.
func (ev *goEval) classOf1(t goTyp) (string, bool) {
	if t.cls != "" {
		return t.cls, false
	}
	if t.fb == nil {
		return "", false
	}
	e := strings.TrimSpace(t.expr)
	for len(e) > 0 && (e[0] == '*' || e[0] == '(') {
		e = strings.TrimSpace(strings.TrimLeft(e, "*("))
		e = strings.TrimRight(e, ")")
	}
	if i := strings.IndexByte(e, '['); i > 0 { // generic T[K]
		e = e[:i]
	}
	if e == "" || !isDottedIdent(e) {
		return "", false
	}
	pkg, name, qualified := strings.Cut(e, ".")
	if !qualified {
		name = pkg
		bd, ok := goLookupType(t.fb, name, t.scope)
		if !ok {
			// A type parameter is typed by its constraint (an interface
			// of the project: calls on it are interface calls).
			if c, fb, scope, ok := ev.goTypeParam(t.fb, name, t.scope); ok && c != name {
				return ev.classOf1(goTyp{fb: fb, scope: scope, expr: c})
			}
			return "", t.fb.lang.builtins[name]
		}
		switch bd.kind {
		case bDef:
			if n := ev.b.node(bd.id); n.found() && n.Kind == KindClass {
				return bd.id, false
			}
		case bExternal:
			return "", true
		}
		return "", false
	}
	bd, ok := goLookupType(t.fb, pkg, t.scope)
	if !ok {
		return "", false
	}
	switch bd.kind {
	case bExternal:
		return "", true
	case bModule:
		mk := modKey(t.fb.lang.family, bd.mod)
		if id, ok := ev.b.top[mk][name]; ok {
			if n := ev.b.node(id); n.found() && n.Kind == KindClass {
				return id, false
			}
			return "", false
		}
		_, in := ev.b.modules[mk]
		return "", !in
	}
	return "", false
}

// eval evaluates expression text written in definition def of fb.
func (ev *goEval) eval(fb *fileBuild, def int32, expr string, depth int) goEnt {
	expr = strings.TrimSpace(expr)
	if depth > goMaxDepth || expr == "" || len(expr) > maxValueText+16 {
		return goEnt{}
	}
	for len(expr) > 0 && (expr[0] == '&' || expr[0] == '*') {
		expr = strings.TrimSpace(expr[1:])
	}
	if expr == "" {
		return goEnt{}
	}
	// A composite literal of a type literal: []T{…}, map[K]V{…}, [N]T{…}.
	if expr[0] == '[' || strings.HasPrefix(expr, "map[") {
		if i := topLevelIndex(expr, '{'); i > 0 {
			return goEnt{kind: geValue, typ: goTyp{fb: fb, scope: def, expr: expr[:i]}}
		}
		return goEnt{}
	}
	var e goEnt
	i := 0
	switch {
	case expr[0] == '(':
		j := groupEnd(expr, 0)
		if j < 0 {
			return goEnt{}
		}
		e = ev.eval(fb, def, expr[1:j], depth+1)
		i = j + 1
	case isIdentByte(expr[0]) && !(expr[0] >= '0' && expr[0] <= '9'):
		for i < len(expr) && isIdentByte(expr[i]) {
			i++
		}
		e = ev.ident(fb, def, expr[:i], depth)
	default:
		return goEnt{}
	}
	// An unknown operand is followed to the end: a type assertion on it
	// (m[k].(T), f().(T)) still types the result.
	for i < len(expr) {
		switch expr[i] {
		case '.':
			if i+1 < len(expr) && expr[i+1] == '(' {
				j := groupEnd(expr, i+1)
				if j < 0 {
					return goEnt{}
				}
				t := strings.TrimSpace(expr[i+2 : j])
				if t == "type" {
					return goEnt{}
				}
				e = goEnt{kind: geValue, typ: goTyp{fb: fb, scope: def, expr: t}}
				i = j + 1
				continue
			}
			k := i + 1
			for k < len(expr) && isIdentByte(expr[k]) {
				k++
			}
			if k == i+1 {
				return goEnt{}
			}
			if e.kind != geNone {
				e = ev.selectEnt(fb, e, expr[i+1:k], depth)
			}
			i = k
		case '(':
			j := groupEnd(expr, i)
			if j < 0 {
				return goEnt{}
			}
			e = ev.call(fb, def, e, expr[i+1:j], depth)
			i = j + 1
		case '[':
			j := groupEnd(expr, i)
			if j < 0 {
				return goEnt{}
			}
			e = ev.index(e)
			i = j + 1
		case '{':
			if e.kind != geType {
				return goEnt{}
			}
			e = goEnt{kind: geValue, typ: e.typ}
			j := groupEnd(expr, i)
			if j < 0 {
				return e
			}
			i = j + 1
		default:
			return goEnt{} // an operator: not followed
		}
	}
	return e
}

// ident evaluates a bare name.
func (ev *goEval) ident(fb *fileBuild, def int32, name string, depth int) goEnt {
	s, _, known := fb.sym(name)
	for d := def; known; d = fb.fd.Defs[d].Parent {
		r := fb.rowAt(d, false, s)
		if ts := fb.hintsOf(r); len(ts) > 0 {
			return ev.fromHints(fb, d, name, ts, depth)
		}
		if d < 0 {
			break
		}
		if r.nested > 0 {
			break
		}
		if r.local {
			return goEnt{} // a local whose type is not known
		}
	}
	if def >= 0 && name == goReceiverVar(fb, def) {
		if cls, ok := ev.b.enclosingClass(fb, def); ok {
			return goEnt{kind: geValue, typ: goTyp{cls: cls}}
		}
	}
	bd, ok := fb.lookupName(name, def)
	if ok {
		switch bd.kind {
		case bDef:
			n := ev.b.node(bd.id)
			if !n.found() {
				return goEnt{}
			}
			if n.Kind == KindClass {
				return goEnt{kind: geType, typ: goTyp{cls: bd.id}}
			}
			return goEnt{kind: geFunc, id: bd.id}
		case bModule:
			return goEnt{kind: gePkg, key: bd.mod}
		case bExternal:
			return goEnt{ext: true}
		}
		return goEnt{}
	}
	// A package-level variable of another file of the package.
	if e, ok := ev.pkgVar(fb.lang.family, fb.key, name, depth); ok {
		return e
	}
	switch name {
	case "new", "make", "append":
		return goEnt{kind: geBuiltin, key: name}
	}
	return goEnt{ext: fb.lang.builtins[name]}
}

// fromHints evaluates the recorded types or values of variable name.
func (ev *goEval) fromHints(fb *fileBuild, scope int32, name string, ts []string, depth int) goEnt {
	k := 0
	if len(ts) > 1 {
		k = ev.lastBefore(fb, hintKey{scope: scope, name: name})
	}
	if len(ts) > 1 && k < 0 {
		k = 0
		if ev.forceName != name {
			if ev.ambName == "" {
				ev.ambName, ev.ambN = name, len(ts)
			}
			return goEnt{}
		}
		k = ev.forceIdx
		if k >= len(ts) {
			return goEnt{}
		}
	}
	t := ts[k]
	v, isValue := strings.CutPrefix(t, valuePrefix)
	if !isValue {
		return goEnt{kind: geValue, typ: goTyp{fb: fb, scope: scope, expr: t}}
	}
	lhs, rhs, isAssign := cutAssign(v)
	if rng, ok := strings.CutPrefix(strings.TrimSpace(rhs), "range "); isAssign && ok {
		names := strings.Split(lhs, ",")
		pos := -1
		for i, n := range names {
			if strings.TrimSpace(n) == name {
				pos = i
			}
		}
		x := ev.eval(fb, scope, rng, depth+1)
		if x.kind != geValue || pos < 0 {
			return goEnt{}
		}
		x.typ = ev.underlying(x.typ)
		te := strings.TrimLeft(strings.TrimSpace(x.typ.expr), "*")
		switch {
		case pos == 1:
			return ev.index(x)
		case strings.HasPrefix(te, "map["):
			j := groupEnd(te, 3)
			if j < 0 {
				return goEnt{}
			}
			return goEnt{kind: geValue, typ: goTyp{fb: x.typ.fb, scope: x.typ.scope, expr: te[4:j]}}
		case strings.HasPrefix(te, "chan ") || strings.HasPrefix(te, "<-chan "):
			return ev.index(x)
		}
		return goEnt{}
	}
	if isAssign && strings.Contains(lhs, ",") {
		// a, b := x, y or a, b := f(): the name's position picks the value
		// or the result.
		names := strings.Split(lhs, ",")
		pos := -1
		for i, n := range names {
			if strings.TrimSpace(n) == name {
				pos = i
			}
		}
		vals := splitTop(rhs)
		switch {
		case pos < 0:
			return goEnt{}
		case len(vals) == len(names):
			return ev.eval(fb, scope, vals[pos], depth+1)
		case len(vals) == 1:
			return ev.nthResult(fb, scope, vals[0], pos, depth+1)
		}
		return goEnt{}
	}
	return ev.eval(fb, scope, v, depth+1)
}

// cutAssign splits "a, b := rhs" or "a, b = rhs" (top level only).
func cutAssign(s string) (lhs, rhs string, ok bool) {
	i := topLevelIndex(s, '=')
	if i <= 0 || i+1 >= len(s) || s[i+1] == '=' {
		return "", "", false
	}
	lhs = s[:i]
	lhs = strings.TrimSuffix(lhs, ":")
	return lhs, s[i+1:], true
}

// splitTop splits s at top-level commas.
func splitTop(s string) []string {
	var out []string
	for {
		i := topLevelIndex(s, ',')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}

// nthResult evaluates result k of the call expr (k = 0: the value itself).
func (ev *goEval) nthResult(fb *fileBuild, scope int32, expr string, k, depth int) goEnt {
	if k == 0 {
		return ev.eval(fb, scope, expr, depth)
	}
	expr = strings.TrimSpace(expr)
	if !strings.HasSuffix(expr, ")") {
		return goEnt{} // v, ok := m[k] / x.(T) / <-ch: the second is a bool
	}
	open := -1 // the last top-level "(": the call's argument list
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; c {
		case '(', '[', '{', '"', '\'', '`':
			if c == '(' {
				open = i
			}
			if i = groupEnd(expr, i); i < 0 {
				i = len(expr)
			}
		}
	}
	if open <= 0 || strings.HasPrefix(expr[open-1:], ".(") {
		return goEnt{}
	}
	fn := ev.eval(fb, scope, expr[:open], depth)
	if fn.kind != geFunc {
		return goEnt{ext: fn.ext}
	}
	loc, ok := ev.b.defAt(fn.id)
	if !ok || loc.fb.hints == nil {
		return goEnt{}
	}
	for _, t := range loc.fb.hintsOf(loc.fb.row(loc.idx, false, returnHint)) {
		if strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")") {
			if rs := resultTypes(t[1 : len(t)-1]); k < len(rs) {
				return goEnt{kind: geValue, typ: goTyp{fb: loc.fb, scope: loc.idx, expr: rs[k]}}
			}
		}
	}
	return goEnt{}
}

// resultTypes lists the type of each result in a result list "a, b T, err
// error" or "T, error".
func resultTypes(list string) []string {
	items := splitTop(list)
	named := false
	for _, it := range items {
		it = strings.TrimSpace(it)
		if i := strings.IndexAny(it, " \t"); i > 0 && isDottedIdent(it[:i]) && !strings.HasPrefix(it, "chan") && !strings.HasPrefix(it, "map") && !strings.HasPrefix(it, "func") {
			named = true
		}
	}
	out := make([]string, len(items))
	last := ""
	for i := len(items) - 1; i >= 0; i-- {
		it := strings.TrimSpace(items[i])
		if !named {
			out[i] = it
			continue
		}
		if j := strings.IndexAny(it, " \t"); j > 0 {
			last = strings.TrimSpace(it[j+1:])
		}
		out[i] = last
	}
	return out
}

// pkgVar finds a package-level variable name among the files of package key.
func (ev *goEval) pkgVar(family, key, name string, depth int) (goEnt, bool) {
	for _, f := range ev.b.modules[modKey(family, key)] {
		if ts, ok := f.hintsAt(-1, false, name); ok {
			return ev.fromHints(f, -1, name, ts, depth+1), true
		}
	}
	return goEnt{}, false
}

// selectEnt evaluates e.name.
func (ev *goEval) selectEnt(fb *fileBuild, e goEnt, name string, depth int) goEnt {
	b := ev.b
	switch e.kind {
	case gePkg:
		mk := modKey(fb.lang.family, e.key)
		if id, ok := b.top[mk][name]; ok {
			if n := b.node(id); n.found() && n.Kind == KindClass {
				return goEnt{kind: geType, typ: goTyp{cls: id}}
			}
			return goEnt{kind: geFunc, id: id}
		}
		if x, ok := ev.pkgVar(fb.lang.family, e.key, name, depth); ok {
			return x
		}
		_, in := b.modules[mk]
		return goEnt{ext: !in}
	case geValue, geType:
		cls, ext := ev.classOf(e.typ)
		if cls == "" {
			return goEnt{ext: ext}
		}
		if e.kind == geValue {
			if t, ok := b.goField(cls, name); ok {
				return goEnt{kind: geValue, typ: t}
			}
		}
		if id, ok := b.member(cls, name, false); ok {
			return goEnt{kind: geFunc, id: id}
		}
		return goEnt{ext: b.extBase[cls]}
	}
	return goEnt{ext: e.ext}
}

// goField returns the declared type of field name of struct cls or of a
// struct it embeds.
func (b *builder) goField(cls, name string) (goTyp, bool) {
	seen := map[string]bool{cls: true}
	queue := []string{cls}
	for i := 0; i < len(queue); i++ {
		c := queue[i]
		if loc, ok := b.defAt(c); ok && loc.fb.hints != nil {
			if ts, ok := loc.fb.hintsAt(loc.idx, true, "self."+name); ok {
				return goTyp{fb: loc.fb, scope: loc.idx, expr: ts[0]}, true
			}
		}
		for _, base := range b.bases[c] {
			if !seen[base] {
				seen[base] = true
				queue = append(queue, base)
			}
		}
	}
	return goTyp{}, false
}

// call evaluates e(args): a function's declared (first) result type, a
// conversion, or new/make/append.
func (ev *goEval) call(fb *fileBuild, def int32, e goEnt, args string, depth int) goEnt {
	switch e.kind {
	case geFunc:
		loc, ok := ev.b.defAt(e.id)
		if !ok || loc.fb.hints == nil {
			return goEnt{}
		}
		for _, t := range loc.fb.hintsOf(loc.fb.row(loc.idx, false, returnHint)) {
			if !strings.HasPrefix(t, "(") {
				return goEnt{kind: geValue, typ: goTyp{fb: loc.fb, scope: loc.idx, expr: t}}
			}
		}
		return goEnt{kind: geValue} // a value of a type not followed (interface{}, func…)
	case geType:
		return goEnt{kind: geValue, typ: e.typ}
	case geBuiltin:
		first := args
		if i := topLevelIndex(args, ','); i >= 0 {
			first = args[:i]
		}
		if e.key == "append" {
			return ev.eval(fb, def, first, depth+1)
		}
		return goEnt{kind: geValue, typ: goTyp{fb: fb, scope: def, expr: strings.TrimSpace(first)}}
	}
	return goEnt{ext: e.ext}
}

// index evaluates e[i]: the element type of a slice, array, map or channel
// type literal (a generic instantiation keeps e).
func (ev *goEval) index(e goEnt) goEnt {
	switch e.kind {
	case geFunc, geType:
		return e
	case geValue:
	default:
		return goEnt{}
	}
	e.typ = ev.underlying(e.typ)
	t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(e.typ.expr), "*"))
	var el string
	switch {
	case strings.HasPrefix(t, "map["):
		j := groupEnd(t, 3)
		if j < 0 {
			return goEnt{}
		}
		el = t[j+1:]
	case strings.HasPrefix(t, "["):
		j := groupEnd(t, 0)
		if j < 0 {
			return goEnt{}
		}
		el = t[j+1:]
	case strings.HasPrefix(t, "chan "):
		el = t[5:]
	case strings.HasPrefix(t, "<-chan "):
		el = t[7:]
	default:
		return goEnt{}
	}
	return goEnt{kind: geValue, typ: goTyp{fb: e.typ.fb, scope: e.typ.scope, expr: el}}
}

func isIdentByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80
}

// topLevelIndex returns the index of the first c outside brackets and
// literals, or -1.
func topLevelIndex(s string, c byte) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch x := s[i]; x {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '{':
			if c == '{' && depth == 0 {
				return i
			}
			depth++
		case '}':
			depth--
		case '"', '\'', '`':
			j := i + 1
			for j < len(s) && s[j] != x {
				if s[j] == '\\' && x != '`' {
					j++
				}
				j++
			}
			i = j
		default:
			if x == c && depth == 0 {
				return i
			}
		}
	}
	return -1
}

// underlying returns the underlying type of a named non-struct type of the
// project (type Items []*Item), recorded as the type's own "field" named
// after it; other types are returned as they are.
func (ev *goEval) underlying(t goTyp) goTyp {
	e := strings.TrimLeft(strings.TrimSpace(t.expr), "*")
	if t.cls == "" && (e == "" || e[0] == '[' || strings.HasPrefix(e, "map[") || strings.HasPrefix(e, "chan ") || strings.HasPrefix(e, "<-chan ")) {
		return t
	}
	cls, _ := ev.classOf1(t)
	if cls == "" {
		return t
	}
	loc, ok := ev.b.defAt(cls)
	if !ok || loc.fb.hints == nil {
		return t
	}
	name := loc.fb.fd.Defs[loc.idx].Name
	if ts, ok := loc.fb.hintsAt(loc.idx, true, "self."+name); ok {
		return goTyp{fb: loc.fb, scope: loc.idx, expr: ts[0]}
	}
	return t
}

// goLookupType binds a name in a type expression: local variables (often
// named like types: node := …) do not shadow types in signatures.
func goLookupType(fb *fileBuild, name string, def int32) (binding, bool) {
	for d := def; d >= 0; d = fb.fd.Defs[d].Parent {
		if i, ok := fb.nestedAt(d, name); ok {
			return binding{kind: bDef, id: fb.ids[i]}, true
		}
	}
	return fb.scopeLookup(name)
}

// hintAt is one assignment of a type to a variable: the line and the index
// of the type among the variable's recorded types.
type hintAt struct {
	line int32
	idx  int32
}

// goHintLines records where each variable's types are assigned.
func (fb *fileBuild) goHintLines() {
	fb.goRecordParamCalls() // (goDropLiteralValues ran in finishTables)
	for _, r := range fb.fd.Refs.All() {
		if r.Kind != refAssign || r.Name == returnHint {
			continue
		}
		k := hintKey{scope: r.Def, name: r.Name}
		ts, _ := fb.hintsAt(r.Def, false, r.Name)
		if len(ts) < 2 {
			continue
		}
		for i, t := range ts {
			if t == r.Object {
				if fb.goHintAt == nil {
					fb.goHintAt = map[hintKey][]hintAt{}
				}
				fb.goHintAt[k] = append(fb.goHintAt[k], hintAt{r.Line, int32(i)})
				break
			}
		}
	}
}

// lastBefore returns the index of the type last assigned to variable k at
// or before the reference's line, or -1 when that is not one type.
func (ev *goEval) lastBefore(fb *fileBuild, k hintKey) int {
	if fb != ev.fb || ev.line == 0 {
		return -1
	}
	best, idx, tie := int32(-1), -1, false
	for _, h := range fb.goHintAt[k] {
		if h.line > ev.line {
			continue
		}
		switch {
		case h.line > best:
			best, idx, tie = h.line, int(h.idx), false
		case h.line == best && int(h.idx) != idx:
			tie = true
		}
	}
	if tie {
		return -1
	}
	return idx
}
