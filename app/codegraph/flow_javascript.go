package codegraph

import "strings"

// JS/TS facts the value-flow layer reads that extraction cannot give as a
// plain type name: JSDoc @type tags on variables, this.x assignments and
// class fields (the query captures the comment right above them), and
// TypeScript parameter properties (constructor(private sink: Sink) makes
// this.sink a Sink), and non-null assertions in receivers (this.a!.m()). jsRefs rewrites a file's references into the refAssign
// records the flow layer already understands; it is idempotent, so a file
// data that went through it once is returned as it is.

// maxJSDocType bounds the comment text read for a @type tag.
const maxJSDocType = 4096

// jsRefs returns fd, or a copy whose references have JSDoc @type comments
// turned into type names (other comments dropped) and TypeScript parameter
// properties added as this.name assignments.
func jsRefs(fd *fileData) *fileData {
	need := false
	var self map[string][]int32   // var self = this: the names and where
	var props map[string][]refRec // obj.m = fn: by "obj.m"
	for _, r := range fd.Refs.All() {
		if r.Kind == refValue && jsPropValue(r) {
			if props == nil {
				props = map[string][]refRec{}
			}
			props[r.Name] = append(props[r.Name], r)
			need = true
		}
		if r.Kind == refValue && r.Object == "this" && r.Def >= 0 {
			if self == nil {
				self = map[string][]int32{}
			}
			self[r.Name] = append(self[r.Name], r.Def)
		}
		if !need && r.Kind == refCall && jsCast(r.Object) != "" {
			need = true
		}
		if !need && ((r.Kind == refAssign && (strings.HasPrefix(r.Object, "/*") || strings.HasPrefix(r.Object, "//") || jsParamProperty(fd, r))) || jsNonNull(r.Object) != "") {
			need = true
		}
	}
	if !need && self != nil {
		for _, r := range fd.Refs.All() {
			if r.Kind == refCall && self[r.Object] != nil && jsInside(fd, r.Def, self[r.Object]) {
				need = true
				break
			}
		}
	}
	if !need {
		return fd
	}
	out := make([]refRec, 0, fd.Refs.Len()+4)
	seen := map[refRec]bool{}
	for _, r := range fd.Refs.All() {
		if r.Kind == refAssign {
			seen[r] = true
		}
	}
	for _, r := range fd.Refs.All() {
		if r.Kind == refAssign && (strings.HasPrefix(r.Object, "/*") || strings.HasPrefix(r.Object, "//")) {
			typ := jsDocType(r.Object)
			if typ == "" {
				continue
			}
			r.Object = typ
			if seen[r] {
				continue
			}
			seen[r] = true
		}
		if o := jsNonNull(r.Object); o != "" {
			r.Object = o // this.a!.m(): the non-null assertion does not change the type
		}
		if r.Kind == refCall && self[r.Object] != nil && jsInside(fd, r.Def, self[r.Object]) {
			r.Object = "this" // var self = this; self.m()
		}
		if r.Kind == refValue && jsPropValue(r) {
			continue // read above; not a variable of the flow layer
		}
		if r.Kind == refCall && r.Object != "" && props != nil {
			if fn, ok := jsPropFunc(fd, r, props[r.Object+"."+r.Name]); ok {
				r.Object, r.Name = "", fn // createDebug.enable = enable; createDebug.enable(): enable runs
			}
		}
		if typ := jsCast(r.Object); r.Kind == refCall && typ != "" {
			// (x as Sink).write(): the receiver expression has type Sink.
			c := refRec{Kind: refAssign, Name: r.Object, Object: typ, Def: r.Def, Line: r.Line}
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
		out = append(out, r)
		if jsParamProperty(fd, r) {
			p := refRec{Kind: refAssign, Name: "this." + r.Name, Object: r.Object, Def: r.Def, Line: r.Line}
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	cp := *fd
	cp.Refs = packRefs(out)
	return &cp
}

// jsPropValue reports a record of obj.m = name (obj a plain identifier).
func jsPropValue(r refRec) bool {
	obj, _, ok := strings.Cut(r.Name, ".")
	return ok && obj != "this" && obj != "module" && obj != "exports" && isDottedIdent(r.Name) && isDottedIdent(r.Object) && !strings.Contains(r.Object, ".")
}

// jsPropFunc returns the name assigned to obj.m (one assignment, in a
// definition around call r or at top level), the function a call obj.m()
// runs.
func jsPropFunc(fd *fileData, r refRec, as []refRec) (string, bool) {
	if len(as) != 1 {
		return "", false // none, or reassigned: which one runs is unknown
	}
	a := as[0]
	if a.Def >= 0 && !jsInside(fd, r.Def, []int32{a.Def}) {
		return "", false
	}
	return a.Object, true
}

// jsCast returns T for a receiver written (expr as T) or (expr as T<U>)
// with T a plain (dotted) type name, else "".
func jsCast(obj string) string {
	if len(obj) < 8 || obj[0] != '(' || obj[len(obj)-1] != ')' {
		return ""
	}
	i := strings.LastIndex(obj, " as ")
	if i < 0 {
		return ""
	}
	t := strings.TrimSpace(obj[i+4 : len(obj)-1])
	if j := strings.IndexByte(t, '<'); j > 0 && strings.HasSuffix(t, ">") {
		t = t[:j]
	}
	switch t {
	case "any", "unknown", "never", "const":
		return ""
	}
	if !isDottedIdent(t) || strings.Count(obj[:i], "(")-strings.Count(obj[:i], ")") != 1 {
		return "" // (a as B) | C, or a cast inside a call: not the receiver's type
	}
	return t
}

// jsInside reports whether def is one of defs or nested in one of them.
func jsInside(fd *fileData, def int32, defs []int32) bool {
	for d := def; d >= 0; d = fd.Defs[d].Parent {
		for _, o := range defs {
			if d == o {
				return true
			}
		}
	}
	return false
}

// jsNonNull returns a receiver expression with TypeScript non-null
// assertions removed (this.a!.b! → this.a.b) when that leaves a dotted
// name, else "".
func jsNonNull(obj string) string {
	if !strings.Contains(obj, "!") || strings.Contains(obj, "!=") {
		return ""
	}
	o := strings.ReplaceAll(obj, "!", "")
	if !isDottedIdent(o) {
		return ""
	}
	return o
}

// jsParamProperty reports a typed parameter of a constructor declared with
// an accessibility or readonly modifier (a TypeScript parameter property).
func jsParamProperty(fd *fileData, r refRec) bool {
	if r.Kind != refAssign || r.Def < 0 || strings.Contains(r.Name, ".") || r.Name == returnHint {
		return false
	}
	d := fd.Defs[r.Def]
	if d.Name != "constructor" || !strings.Contains(d.Sig, r.Name) {
		return false
	}
	for _, p := range sigParamTexts(d.Sig, d.Name) {
		f := strings.Fields(strings.TrimSpace(p))
		for i := 0; i+1 < len(f); i++ {
			switch f[i] {
			case "private", "public", "protected", "readonly", "override":
			default:
				continue
			}
			if name := strings.TrimRight(strings.SplitN(f[i+1], ":", 2)[0], "?"); name == r.Name {
				return true
			}
		}
	}
	return false
}

// jsDocType returns the type a JSDoc comment gives with @type {T} (the
// first member of a union other than null/undefined, generics dropped), or
// "" when there is none or it is not a plain (dotted) type name.
func jsDocType(c string) string {
	if len(c) > maxJSDocType || !strings.HasPrefix(c, "/**") {
		return ""
	}
	i := strings.Index(c, "@type")
	if i < 0 {
		return ""
	}
	rest := strings.TrimSpace(c[i+len("@type"):])
	if !strings.HasPrefix(rest, "{") {
		return ""
	}
	end := strings.IndexByte(rest, '}')
	if end < 0 {
		return ""
	}
	for _, alt := range strings.Split(rest[1:end], "|") {
		t := strings.Trim(strings.TrimSpace(alt), "!?()")
		if j := strings.IndexAny(t, "<[( "); j >= 0 {
			if t[j] == '(' || t[j] == '[' {
				return "" // function(…) or T[]: not an instance of T
			}
			t = t[:j]
		}
		switch t {
		case "null", "undefined", "":
			continue
		}
		if isDottedIdent(t) {
			return t
		}
		return ""
	}
	return ""
}

// jsDefaultExport reports whether an assignment target exports its value as
// a CommonJS module's default (module.exports = Layer).
func jsDefaultExport(lhs string) bool {
	return lhs == "module.exports"
}

// jsModuleDefault returns what a CommonJS module exports as a whole
// (module.exports = Layer; function Layer() {…}): a call Layer(…) or
// new Layer(…) of var Layer = require('./layer') runs it.
func (b *builder) jsModuleDefault(key string) (string, bool) {
	fs := b.modules[modKey("js", key)]
	if len(fs) == 0 || fs[0].fd.Default == "" {
		return "", false
	}
	id, ok := b.top[modKey("js", key)][fs[0].fd.Default]
	return id, ok
}

// jsThisProperty resolves this.name() inside a function assigned to a
// property (app.use = function use() { this.lazyrouter() }, or
// Foo.prototype.bar = function () { this.baz() }): this is the object the
// function was assigned to, so name is the function assigned to the same
// object's property name in the same file. In a constructor function Foo,
// this.baz() is Foo.prototype.baz. Inside an arrow or a nested function the
// nearest enclosing definition that gives an answer is used (arrows share
// their this; var self = this is rewritten to this by jsRefs). Outside any
// named function (app[method] = function () { this.set() } at top level),
// this.name() is the one function the file assigns to a property name of
// one object.
func (b *builder) jsThisProperty(fb *fileBuild, r refRec) (string, bool) {
	for d := r.Def; d >= 0; d = fb.fd.Defs[d].Parent {
		if fb.fd.Defs[d].Kind == KindClass {
			return "", false
		}
		if id, ok := b.jsThisIn(fb, d, r.Name); ok {
			return id, true
		}
	}
	if r.Def >= 0 {
		return "", false
	}
	found, obj := -1, ""
	for k, o := range fb.fd.Defs {
		if o.Parent >= 0 || (o.Kind != KindFunction && o.Kind != KindMethod) || o.Name != r.Name {
			continue
		}
		lhs, _, ok := strings.Cut(o.Sig, " = ")
		if !ok || !strings.HasSuffix(lhs, "."+r.Name) || !isDottedIdent(lhs) {
			continue
		}
		if found >= 0 && obj != strings.TrimSuffix(lhs, "."+r.Name) {
			return "", false // two objects have it: which one this is is unknown
		}
		found, obj = k, strings.TrimSuffix(lhs, "."+r.Name)
	}
	if found < 0 || obj == "this" {
		return "", false
	}
	return fb.ids[found], true
}

// jsThisIn resolves this.name() with this bound by definition d (see
// jsThisProperty).
func (b *builder) jsThisIn(fb *fileBuild, d int32, name string) (string, bool) {
	def := fb.fd.Defs[d]
	lhs, _, ok := strings.Cut(def.Sig, " = ")
	if !ok {
		// A constructor function: function View() { this.lookup() } with
		// View.prototype.lookup = function lookup() {…}.
		if def.Kind != KindFunction || !strings.HasPrefix(def.Sig, "function "+def.Name+"(") {
			return "", false
		}
		lhs = def.Name + ".prototype." + def.Name
	}
	i := strings.LastIndexByte(lhs, '.')
	if i <= 0 || lhs[i+1:] != def.Name || !isDottedIdent(lhs) {
		return "", false
	}
	obj := lhs[:i]
	if obj == "this" {
		return "", false
	}
	want := obj + "." + name + " = "
	for k, o := range fb.fd.Defs {
		if (o.Kind == KindFunction || o.Kind == KindMethod) && o.Name == name && strings.HasPrefix(o.Sig, want) {
			return fb.ids[k], true
		}
	}
	return "", false
}

// jsPreferTop reports whether top-level definition d of fb should take a
// name from prev: a definition in an implementation over one in a
// declaration file of the same module (types.js over types.d.ts, which a
// compiled TypeScript package ships side by side: the declared class has
// no method bodies); a declaration (function sendfile(…)) over a function
// assigned to a property (res.sendfile = function (…)), which binds no
// variable.
func (b *builder) jsPreferTop(prev string, d defRec, fb *fileBuild) bool {
	loc, ok := b.defAt(prev)
	if !ok {
		return false
	}
	if pd, dd := jsDeclarationFile(loc.fb.fd.Path), jsDeclarationFile(fb.fd.Path); pd != dd {
		return pd
	}
	return jsPropertyDef(loc.fb.fd.Defs[loc.idx]) && !jsPropertyDef(d)
}

// jsMadeClass returns the class a function makes, for a class whose base
// is a call of it (`class Int extends make(ast) {}` with
// `const make = ast => class SchemaClass {…}`, a mixin returning
// `class extends Base {…}`): the one class defined directly in the
// function's body. It reports false for anything else (a class itself, a
// function defining no class or several).
func (b *builder) jsMadeClass(fnID string) (string, bool) {
	loc, ok := b.defAt(fnID)
	if !ok || loc.fb.fd.Defs[loc.idx].Kind == KindClass {
		return "", false
	}
	made := ""
	for i, d := range loc.fb.fd.Defs {
		if d.Parent == int32(loc.idx) && d.Kind == KindClass {
			if made != "" {
				return "", false
			}
			made = loc.fb.ids[i]
		}
	}
	return made, made != ""
}

// jsImplementerCalls binds x.m() where x holds an instance of a TypeScript
// interface (or of a class that leaves m to its subclasses: an abstract
// method is no definition) that has no m of its own: it dispatches to the
// m of each class implementing or extending it (what a service injected as
// `private readonly svc: IModelService` runs). It reports whether it added
// an edge.
func (b *builder) jsImplementerCalls(fe *flowEval, fb *fileBuild, r refRec, src string, res *fileResult) bool {
	added := false
	for _, v := range fe.expr(fb, r.Def, r.Object, 0) {
		if !v.inst || v.elem || len(b.subs[v.id]) == 0 {
			continue
		}
		if _, ok := b.member(v.id, r.Name, false); ok {
			continue
		}
		for _, d := range b.subclassMethods(v.id, r.Name) {
			if d != src {
				res.addEdge(src, d, EdgeDispatches, r.Line)
				added = true
			}
		}
	}
	return added
}

// jsDeclarationFile reports a TypeScript declaration file (.d.ts), which
// shares its module key with the implementation beside it (jsModuleKeys).
func jsDeclarationFile(rel string) bool { return strings.HasSuffix(rel, ".d.ts") }

// jsPropertyDef reports a function defined by assignment to a property
// (obj.name = function …).
func jsPropertyDef(d defRec) bool {
	lhs, _, ok := strings.Cut(d.Sig, " = ")
	return ok && strings.Contains(lhs, ".") && !strings.ContainsAny(lhs, " (")
}
