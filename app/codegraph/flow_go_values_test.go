package codegraph

import (
	"strings"
	"testing"
)

// goValuesProject: function values, methods of generic types and type
// aliases (shapes of issue 10 left after the first Go round).
var goValuesProject = map[string]string{
	"go.mod": "module ex.com/v\n\ngo 1.22\n",
	"v.go": `package v

type T struct{ fn func(int) int }

func (t *T) M() int       { return 0 }
func (t *T) N(x int) int  { return x }
func helper(x int) int    { return x }
func other(x int) int     { return x }

type Handler func(int) int

func methodValue(t *T) {
	f := t.M
	f()
}

func funcValue() {
	g := helper
	g(1)
}

func varFuncValue() {
	var g = helper
	g(2)
}

func fieldFunc(t *T) {
	t.fn(3)
}

func setField() *T {
	return &T{fn: other}
}

var table = map[string]func(int) int{"a": helper}

func mapFunc() {
	table["a"](4)
}

func apply(cb func(int) int) int { return cb(5) }

func passFunc() {
	apply(helper)
}

func passMethod(t *T) {
	apply(t.N)
}

func closure() {
	h := func() { helper(6) }
	h()
}

// Box is a generic type.
type Box[E any] struct{ v E }

func (b *Box[E]) Get() E      { return b.v }
func (b *Box[E]) Put(v E)     {}
func NewBox[E any]() *Box[E]  { return &Box[E]{} }

func genericVar(b *Box[int]) { b.Get() }

func genericNew() {
	b := NewBox[string]()
	b.Put("x")
}

func genericLit() {
	b := Box[int]{}
	b.Get()
}

// Alias is a type alias.
type Alias = T

// PAlias aliases a pointer.
type Named = Box[int]

func aliasVar(a *Alias) { a.M() }

func aliasLit() {
	a := Alias{}
	a.M()
}

func aliasGeneric(n *Named) { n.Get() }

// Stringer constrains type parameters.
type Stringer interface{ String() string }

type Name struct{}

func (n Name) String() string { return "" }

func typeParam[S Stringer](s S) { s.String() }

func typeParamGrouped[K, S Stringer](k K, s S) { k.String() }

// Set's methods call through the type parameter of the type.
type Set[E Stringer] struct{ items []E }

func (st *Set[E]) First() string { return st.items[0].String() }

func (st *Set[E]) Each(e E) { e.String() }

// A composite literal longer than the value texts kept for type flow.
func longLiteral() {
	t := &T{
		fn: func(x int) int {
			return x + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14 + 15 + 16 + 17 + 18 + 19 + 20 + 21 + 22 + 23 + 24 + 25 + 26 + 27 + 28 + 29 + 30 + 31 + 32 + 33 + 34 + 35 + 36 + 37 + 38 + 39
		},
	}
	t.M()
}

var pkgLiteral = T{
	fn: func(x int) int {
		return x + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14 + 15 + 16 + 17 + 18 + 19 + 20 + 21 + 22 + 23 + 24 + 25 + 26 + 27 + 28 + 29 + 30 + 31 + 32 + 33 + 34 + 35 + 36 + 37 + 38 + 39
	},
}

func usePkgLiteral() { pkgLiteral.M() }
`,
}

func TestGoValueFlow(t *testing.T) {
	g := openT(t, writeTree(t, goValuesProject), Options{NoCache: true}).Graph()
	const m = "ex.com/v."
	want := map[string][]string{
		"methodValue":      {m + "T.M"},
		"funcValue":        {m + "helper"},
		"varFuncValue":     {m + "helper"},
		"passFunc":         {m + "apply"},
		"passMethod":       {m + "apply"},
		"closure":          {m + "helper"},
		"genericVar":       {m + "Box.Get"},
		"genericNew":       {m + "NewBox", m + "Box.Put"},
		"genericLit":       {m + "Box.Get"},
		"aliasVar":         {m + "T.M"},
		"aliasLit":         {m + "T.M"},
		"aliasGeneric":     {m + "Box.Get"},
		"typeParam":        {m + "Stringer.String"},
		"typeParamGrouped": {m + "Stringer.String"},
		"Set.First":        {m + "Stringer.String"},
		"Set.Each":         {m + "Stringer.String"},
		"longLiteral":      {m + "T.M"},
		"usePkgLiteral":    {m + "T.M"},
	}
	wantCallees(t, g, m, want)
	// apply calls its parameter cb: each function or method value passed
	// to it is a dispatch target of apply (not of the caller).
	disp := targetQuals(g, byQual(t, g, m+"apply").ID, EdgeDispatches)
	if strings.Join(disp, " ") != m+"T.N "+m+"helper" {
		t.Errorf("apply dispatches to %v, want [T.N helper]", disp)
	}
	// A call on a type parameter is a call of its constraint's method,
	// dispatched to the implementations.
	if !hasEdge(t, g, m+"typeParam", m+"Name.String", EdgeDispatches) {
		t.Errorf("typeParam does not dispatch to Name.String")
	}
	for _, fn := range []string{"passFunc", "passMethod", "methodValue"} {
		if out := g.Out(byQual(t, g, m+fn).ID, EdgeDispatches); len(out) != 0 {
			t.Errorf("%s has dispatches edges %v", fn, out)
		}
	}
}

func TestGoParamName(t *testing.T) {
	for _, c := range []struct {
		sig, name string
		k         int
		want      string
	}{
		{"func apply(cb func(int) int) int", "apply", 0, "cb"},
		{"func f(a, b func(), c int)", "f", 1, "b"},
		{"func f(a int, fns ...func())", "f", 3, "fns"},
		{"func (t *T) Walk(n Node, fn func(Node) bool)", "Walk", 1, "fn"},
		{"func G[T any](x T, f func(T))", "G", 1, "f"},
		{"func u(int, func())", "u", 1, ""},
		{"func f(a int)", "f", 1, ""},
	} {
		if got := goParamName(c.sig, c.name, c.k); got != c.want {
			t.Errorf("goParamName(%q, %d) = %q, want %q", c.sig, c.k, got, c.want)
		}
	}
}

// TestGoParamDispatchIncremental: the dispatches edge from a callee to a
// function passed to it lives in the call site's file; editing either side
// re-resolves it, and each update equals a fresh index.
func TestGoParamDispatchIncremental(t *testing.T) {
	files := map[string]string{
		"go.mod":     "module ex.com/p\n\ngo 1.22\n",
		"lib/lib.go": "package lib\n\n// Apply runs cb.\nfunc Apply(cb func()) { cb() }\n",
		"main.go":    "package main\n\nimport \"ex.com/p/lib\"\n\nfunc helper() {}\n\nfunc other() {}\n\nfunc main() { lib.Apply(helper) }\n",
	}
	root := writeTree(t, files)
	p := openT(t, root, Options{NoCache: true})
	if !hasEdge(t, p.Graph(), "ex.com/p/lib.Apply", "ex.com/p.helper", EdgeDispatches) {
		t.Fatal("no Apply -> helper dispatch before the edits")
	}
	edits := []struct{ file, from, to string }{
		{"main.go", "lib.Apply(helper)", "lib.Apply(other)"},
		{"lib/lib.go", "{ cb() }", "{ _ = cb }"},
		{"lib/lib.go", "{ _ = cb }", "{ cb() }"},
	}
	for i, e := range edits {
		applyEdit(t, p, root, i, e.file, e.from, e.to)
	}
	g := p.Graph()
	if hasEdge(t, g, "ex.com/p/lib.Apply", "ex.com/p.helper", EdgeDispatches) || !hasEdge(t, g, "ex.com/p/lib.Apply", "ex.com/p.other", EdgeDispatches) {
		t.Errorf("after the edits Apply should dispatch to other only")
	}
}
