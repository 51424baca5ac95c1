package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// goFlowProject has one function per shape of issue 10 that the Go type flow
// must follow; each calls exactly the methods listed in TestGoTypeFlow.
var goFlowProject = map[string]string{
	"go.mod": "module ex.com/m\n\ngo 1.22\n",
	"other/base.go": `package other

// Base is embedded from another package.
type Base struct{}

func (b *Base) Hello() string { return "" }

// Logger logs.
type Logger struct{}

func (l *Logger) Log(s string) {}
`,
	"db/db.go": `package db

import "ex.com/m/other"

// DB has a logger field.
type DB struct {
	log *other.Logger
	all []*other.Logger
	byName map[string]*other.Logger
}

func (d *DB) Logger() *other.Logger { return d.log }

// Open opens.
func Open(n int) *DB { return nil }

// Default is a package-level variable.
var Default = &DB{}
`,
	"m.go": `package m

import (
	"ex.com/m/db"
	"ex.com/m/other"
)

type conn struct{ db *db.DB }

// Server embeds Base from another package.
type Server struct {
	*other.Base
	conn *conn
}

type T struct{}

func (t T) M() int    { return 0 }
func (t T) Next() *U  { return nil }
func NewT(n int) *T   { return nil }

type U struct{}

func (u *U) Done() {}
func (u *U) M() int  { return 1 }

// Shape is an interface.
type Shape interface {
	Area() float64
	Scale(f float64) Shape
}

// Box implements Shape.
type Box struct{}

func (b Box) Area() float64         { return 0 }
func (b Box) Scale(f float64) Shape { return b }

// Ball implements Shape through an embedded type.
type Ball struct{ Box }

// Line has Area with another arity: not a Shape.
type Line struct{}

func (l Line) Area(x int) float64 { return 0 }
func (l Line) Scale(f float64) Shape { return nil }

func fieldChain(s *Server) { s.conn.db.Logger() }

func promoted(s *Server) { s.Hello() }

func varDecl() { var o T; o.M() }

func rangeVar(ts []*T) {
	for _, t := range ts {
		t.Next()
	}
}

func assertion(x any) {
	t := x.(*T)
	t.M()
}

func typeSwitch(x any) {
	switch v := x.(type) {
	case *U:
		v.Done()
	}
}

func indexed(xs []T) { xs[0].M() }

func callResult() { NewT(2).M() }

func chained() {
	x := NewT(1).Next()
	x.M()
}

func fieldIndex(d *db.DB) {
	d.all[0].Log("a")
	d.byName["k"].Log("b")
}

func pkgVar() { db.Default.Logger().Log("c") }

func openArgs() { db.Open(3).Logger() }

func dispatch(s Shape) { s.Area() }

// Items is a named slice type.
type Items []*T

// Len makes a named non-struct type a Shape-like type with methods.
func (it Items) Len() int { return len(it) }

func namedSlice(xs Items) {
	xs[0].M()
	for _, x := range xs {
		x.Next()
	}
	xs.Len()
}

func pair() (int, *U) { return 0, nil }

func multi() {
	n, u := pair()
	u.Done()
	_ = n
}

// Shadow's loop variable u hides the receiver u.
func (u *U) Shadow(x any) {
	for u := x.(*T); u != nil; {
		u.M()
		break
	}
}

func anyGet() any { return nil }

func assertCall() { anyGet().(*T).M() }

// Sized is implemented by Items, a named slice type.
type Sized interface{ Len() int }
`,
}

// targetQuals lists the qualified names of the targets of id's edges of
// kind, sorted, duplicates kept.
func targetQuals(g *Graph, id string, kind EdgeKind) []string {
	var out []string
	for _, e := range g.Out(id, kind) {
		c, _ := g.Node(e.To)
		out = append(out, c.QualName)
	}
	sort.Strings(out)
	return out
}

// wantCallees checks that each function of want (its qualified name less
// the prefix m) has calls edges to exactly the callees listed.
func wantCallees(t *testing.T, g *Graph, m string, want map[string][]string) {
	t.Helper()
	for fn, callees := range want {
		have := targetQuals(g, byQual(t, g, m+fn).ID, EdgeCalls)
		sort.Strings(callees)
		if strings.Join(have, " ") != strings.Join(callees, " ") {
			t.Errorf("%s calls %v, want %v", fn, have, callees)
		}
	}
}

func TestGoTypeFlow(t *testing.T) {
	g := openT(t, writeTree(t, goFlowProject), Options{NoCache: true}).Graph()
	const m, d, o = "ex.com/m.", "ex.com/m/db.", "ex.com/m/other."
	want := map[string][]string{
		"fieldChain": {d + "DB.Logger"},
		"promoted":   {o + "Base.Hello"},
		"varDecl":    {m + "T.M"},
		"rangeVar":   {m + "T.Next"},
		"assertion":  {m + "T.M"},
		"typeSwitch": {m + "U.Done"},
		"indexed":    {m + "T.M"},
		"callResult": {m + "NewT", m + "T.M"},
		// The type of x is the last call's result (*U), not the first's (*T).
		"chained":    {m + "NewT", m + "T.Next", m + "U.M"},
		"fieldIndex": {o + "Logger.Log"},
		"pkgVar":     {d + "DB.Logger", o + "Logger.Log"},
		"openArgs":   {d + "Open", d + "DB.Logger"},
		"dispatch":   {m + "Shape.Area"},
		"multi":      {m + "pair", m + "U.Done"},
		"U.Shadow":   {m + "T.M"},
		"assertCall": {m + "anyGet", m + "T.M"},
		"namedSlice": {m + "T.M", m + "T.Next", m + "Items.Len"},
	}
	wantCallees(t, g, m, want)
	// Interface dispatch: to each implementation (Ball through its embedded Box).
	disp := targetQuals(g, byQual(t, g, m+"dispatch").ID, EdgeDispatches)
	if strings.Join(disp, " ") != m+"Box.Area" {
		t.Errorf("dispatch dispatches to %v, want [Box.Area]", disp)
	}
	var impl []string
	for _, e := range g.In(byQual(t, g, m+"Shape").ID, EdgeImplements) {
		c, _ := g.Node(e.From)
		impl = append(impl, c.QualName)
	}
	sort.Strings(impl)
	if strings.Join(impl, " ") != m+"Ball "+m+"Box" {
		t.Errorf("Shape implemented by %v, want Ball and Box (not Line)", impl)
	}
	// The interface's methods are nodes of the interface; rdeps of an
	// implementation reaches the caller through dispatch.
	if am := byQual(t, g, m+"Shape.Area"); am.Kind != KindMethod || am.Parent != byQual(t, g, m+"Shape").ID {
		t.Errorf("Shape.Area: %+v", am)
	}
	found := false
	for _, n := range g.RDeps(byQual(t, g, m+"Box.Area").ID) {
		found = found || n.QualName == m+"dispatch"
	}
	if !found {
		t.Errorf("rdeps of Box.Area lacks dispatch")
	}
	wantEdge(t, g, m+"Server", o+"Base", EdgeInherits)
	wantEdge(t, g, m+"Items", m+"Sized", EdgeImplements)
}

// TestGoStdModule: in the standard library's tree (module std), import paths
// have no module prefix, and calls between its packages resolve.
func TestGoStdModule(t *testing.T) {
	root := writeTree(t, map[string]string{
		"go.mod":                         "module std\n\ngo 1.26\n",
		"strconv/quote.go":               "package strconv\n\nfunc Quote(s string) string { return s }\n",
		"fmt/print.go":                   "package fmt\n\nimport \"strconv\"\n\nfunc Sprint(s string) string { return strconv.Quote(s) }\n",
		"vendor/golang.org/x/net/a/a.go": "package a\n\nfunc A() {}\n",
		"net/http/h.go":                  "package http\n\nimport \"golang.org/x/net/a\"\n\nfunc H() { a.A() }\n",
	})
	g := openT(t, root, Options{NoCache: true}).Graph()
	wantEdge(t, g, "fmt.Sprint", "strconv.Quote", EdgeCalls)
	wantEdge(t, g, "net/http.H", "golang.org/x/net/a.A", EdgeCalls)
}

// TestGoDispatchIncremental: a one-file update that removes an
// implementation drops its implements and dispatches edges, and the result
// equals a fresh index.
func TestGoDispatchIncremental(t *testing.T) {
	root := writeTree(t, goFlowProject)
	p := openT(t, root, Options{NoCache: true})
	const m = "ex.com/m."
	if !hasEdge(t, p.Graph(), m+"dispatch", m+"Box.Area", EdgeDispatches) {
		t.Fatal("no dispatch before the edit")
	}
	src := strings.Replace(goFlowProject["m.go"], "func (b Box) Area() float64         { return 0 }", "", 1)
	if err := os.WriteFile(filepath.Join(root, "m.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := p.UpdateFiles(context.Background(), []string{filepath.Join(root, "m.go")})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range g.Edges() {
		if e.Kind == EdgeDispatches || (e.Kind == EdgeImplements && e.To == byQual(t, g, m+"Shape").ID) {
			a, _ := g.Node(e.From)
			b, _ := g.Node(e.To)
			t.Errorf("stale %s edge %s -> %s", e.Kind, a.QualName, b.QualName)
		}
	}
	sameGraph(t, g, openT(t, root, Options{NoCache: true}).Graph())
}
