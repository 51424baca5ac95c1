package codegraph

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// naiveOut and naiveIn list a node's edges by scanning every edge, the way
// the adjacency rows must list them (edge order).
func naiveOut(g *Graph, id string, kinds ...EdgeKind) []Edge {
	var r []Edge
	for _, e := range g.Edges() {
		if e.From == id && hasKind(kinds, e.Kind) {
			r = append(r, e)
		}
	}
	return r
}

func naiveIn(g *Graph, id string, kinds ...EdgeKind) []Edge {
	var r []Edge
	for _, e := range g.Edges() {
		if e.To == id && hasKind(kinds, e.Kind) {
			r = append(r, e)
		}
	}
	return r
}

func compactProject() map[string]string {
	return map[string]string{
		"pkg/__init__.py":  "from .util import helper\n",
		"pkg/util.py":      "import os\n\ndef helper(x):\n    return os.path.join(x, 'a')\n\nclass Base:\n    def run(self):\n        return helper(1)\n",
		"pkg/main.py":      "from pkg.util import Base, helper\n\nclass Child(Base):\n    def run(self):\n        helper(2)\n        return super().run()\n\ndef main():\n    Child().run()\n    helper(3)\n",
		"requirements.txt": "requests==2.0\n",
		"app.py":           "import requests\nfrom pkg.main import main\n\nmain()\nrequests.get('x')\n",
	}
}

func TestAdjacencyMatchesEdgeScan(t *testing.T) {
	g := openT(t, writeTree(t, compactProject()), Options{NoCache: true}).Graph()
	if len(g.Edges()) < 10 {
		t.Fatalf("only %d edges: the project did not index", len(g.Edges()))
	}
	for _, n := range g.Nodes() {
		for _, kinds := range [][]EdgeKind{nil, {EdgeCalls}, {EdgeContains, EdgeImports}} {
			if got, want := g.Out(n.ID, kinds...), naiveOut(g, n.ID, kinds...); !reflect.DeepEqual(got, want) {
				t.Errorf("Out(%s %v) = %v, want %v", n.QualName, kinds, got, want)
			}
			if got, want := g.In(n.ID, kinds...), naiveIn(g, n.ID, kinds...); !reflect.DeepEqual(got, want) {
				t.Errorf("In(%s %v) = %v, want %v", n.QualName, kinds, got, want)
			}
		}
		if got, ok := g.Node(n.ID); !ok || got != n {
			t.Errorf("Node(%s) = %v, %v", n.ID, got, ok)
		}
	}
	if _, ok := g.Node("no such node"); ok {
		t.Error("Node found an absent ID")
	}
	if len(g.Out("no such node")) != 0 || len(g.In("no such node")) != 0 {
		t.Error("an absent node has edges")
	}
}

// A graph whose edges name an endpoint that is not a node (not made by the
// builder, but Graph does not forbid it) still lists them.
func TestAdjacencyEdgeToUnknownNode(t *testing.T) {
	a := &Node{ID: "a", Kind: KindFunction, Name: "a"}
	b := &Node{ID: "b", Kind: KindFunction, Name: "b"}
	g := &Graph{nodes: []*Node{a, b}, byID: nodePositions([]*Node{a, b}), edges: []Edge{
		{From: "a", To: "b", Kind: EdgeCalls},
		{From: "a", To: "ghost", Kind: EdgeUses},
		{From: "ghost", To: "b", Kind: EdgeCalls},
		{From: "b", To: "a", Kind: EdgeCalls},
		{From: "a", To: "b", Kind: EdgeUses},
	}}
	for _, id := range []string{"a", "b", "ghost"} {
		if got, want := g.Out(id), naiveOut(g, id); !reflect.DeepEqual(got, want) {
			t.Errorf("Out(%s) = %v, want %v", id, got, want)
		}
		if got, want := g.In(id), naiveIn(g, id); !reflect.DeepEqual(got, want) {
			t.Errorf("In(%s) = %v, want %v", id, got, want)
		}
	}
	if p := g.Path("b", "b"); p != nil {
		t.Errorf("Path to itself = %v", p)
	}
	if p := g.Path("b", "a"); len(p) != 1 || p[0].To != "a" {
		t.Errorf("Path(b, a) = %v", p)
	}
}

// The builder keeps no second copy of resolved edges: each file's results
// are windows of the graph's edge list, also after incremental updates, and
// the duplicate filters used while resolving are gone.
func TestResolvedEdgesShareGraphArray(t *testing.T) {
	root := writeTree(t, compactProject())
	p := openT(t, root, Options{NoCache: true})
	check := func(g *Graph, when string) {
		t.Helper()
		homes := edgeHomes(g) // update_overlay_test.go
		if len(homes) == 0 {
			t.Fatalf("%s: no edges", when)
		}
		shared := 0
		for path, fb := range p.b.fbs {
			for _, r := range []*fileResult{fb.inh, fb.res} {
				if r == nil || len(r.edges) == 0 {
					continue
				}
				if !inHomes(homes, &r.edges[0]) {
					t.Errorf("%s: %s's edges are not in the graph's edge list", when, path)
				}
				if r.seen != nil {
					t.Errorf("%s: %s keeps its duplicate filter", when, path)
				}
				shared += len(r.edges)
			}
		}
		if shared == 0 {
			t.Errorf("%s: no resolved edges", when)
		}
	}
	check(p.Graph(), "index")
	// A body edit (fast path), then a new definition (full assembly).
	util := filepath.Join(root, "pkg", "util.py")
	src, _ := os.ReadFile(util)
	os.WriteFile(util, append(src, "\n# edited\n"...), 0o644)
	g, err := p.UpdateFiles(context.Background(), []string{util})
	if err != nil {
		t.Fatal(err)
	}
	check(g, "body edit")
	sameGraph(t, g, openT(t, root, Options{NoCache: true}).Graph())
	os.WriteFile(util, append(src, "\n\ndef added():\n    helper(4)\n"...), 0o644)
	if g, err = p.UpdateFiles(context.Background(), []string{util}); err != nil {
		t.Fatal(err)
	}
	check(g, "new definition")
	sameGraph(t, g, openT(t, root, Options{NoCache: true}).Graph())
	// An edge added to a kept result after the build (addEdge rebuilds the
	// filter) is deduplicated and never written into the graph.
	fb := p.b.fbs["pkg/main.py"]
	before := append([]Edge(nil), g.Edges()...)
	n := len(fb.res.edges)
	e := fb.res.edges[0]
	fb.res.addEdge(e.From, e.To, e.Kind, 1)
	if len(fb.res.edges) != n {
		t.Error("a duplicate edge was added")
	}
	fb.res.addEdge(e.From, "elsewhere", EdgeUses, 1)
	if len(fb.res.edges) != n+1 || !reflect.DeepEqual(before, g.Edges()) {
		t.Error("adding to a kept result changed the published graph")
	}
}

func uintptrLess(a, b *Edge) bool {
	return reflect.ValueOf(a).Pointer() < reflect.ValueOf(b).Pointer()
}

func TestTrimSlack(t *testing.T) {
	s := make([]int, 3, 100)
	s[0], s[1], s[2] = 1, 2, 3
	got := trimSlack(s)
	if !reflect.DeepEqual(got, []int{1, 2, 3}) || cap(got) != 3 {
		t.Errorf("trimSlack = %v cap %d", got, cap(got))
	}
	tight := make([]int, 8, 9)
	if got := trimSlack(tight); &got[0] != &tight[0] {
		t.Error("a nearly full slice was copied")
	}
	if got := trimSlack(make([]int, 0, 5)); got == nil || cap(got) != 0 {
		t.Errorf("empty slice: %v cap %d", got, cap(got))
	}
}

// A Go file's scope holds only what its imports bind: the package's
// top-level names are found in the shared table, and calls across the
// package's files still resolve.
func TestScopeSharesPackageNames(t *testing.T) {
	files := map[string]string{"go.mod": "module example.com/m\n\ngo 1.21\n"}
	for i := 0; i < 20; i++ {
		next := (i + 1) % 20
		files[fmt.Sprintf("p/f%d.go", i)] = fmt.Sprintf("package p\n\nimport \"strings\"\n\nfunc F%d(s string) string {\n\treturn F%d(strings.TrimSpace(s))\n}\n", i, next)
	}
	p := openT(t, writeTree(t, files), Options{NoCache: true})
	g := p.Graph()
	for i := 0; i < 20; i++ {
		if !hasEdge(t, g, fmt.Sprintf("example.com/m/p.F%d", i), fmt.Sprintf("example.com/m/p.F%d", (i+1)%20), EdgeCalls) {
			t.Errorf("F%d does not call F%d", i, (i+1)%20)
		}
	}
	fb := p.b.fbs["p/f0.go"]
	if len(fb.scope) > 2 {
		t.Errorf("f0.go's scope copies names: %v", fb.scope)
	}
	if bd, ok := fb.scopeLookup("F7"); !ok || bd.kind != bDef {
		t.Errorf("F7 not in f0.go's scope: %v %v", bd, ok)
	}
	if _, ok := fb.scopeLookup("strings"); !ok {
		t.Error("the import is not in the scope")
	}
}
