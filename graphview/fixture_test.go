package graphview

import (
	"fmt"

	"codeloom/app/codegraph"
)

// fakeGraph is a Source built by hand for tests.
type fakeGraph struct {
	nodes []*codegraph.Node
	edges []codegraph.Edge
}

func (g *fakeGraph) Nodes() []*codegraph.Node { return g.nodes }
func (g *fakeGraph) Edges() []codegraph.Edge  { return g.edges }

func (g *fakeGraph) add(n *codegraph.Node) *codegraph.Node {
	g.nodes = append(g.nodes, n)
	if n.Parent != "" {
		g.edges = append(g.edges, codegraph.Edge{From: n.Parent, To: n.ID, Kind: codegraph.EdgeContains})
	}
	return n
}

func (g *fakeGraph) edge(from, to string, k codegraph.EdgeKind) {
	g.edges = append(g.edges, codegraph.Edge{From: from, To: to, Kind: k})
}

// smallGraph: two files in pkg/, one in the root; a class with a method; calls
// across files; one external package.
func smallGraph() *fakeGraph {
	g := &fakeGraph{}
	g.add(&codegraph.Node{ID: "f:a", Kind: codegraph.KindFile, Name: "a.py", Path: "pkg/a.py"})
	g.add(&codegraph.Node{ID: "f:b", Kind: codegraph.KindFile, Name: "b.py", Path: "pkg/b.py"})
	g.add(&codegraph.Node{ID: "f:main", Kind: codegraph.KindFile, Name: "main.py", Path: "main.py"})
	g.add(&codegraph.Node{ID: "p:req", Kind: codegraph.KindPackage, Name: "requests"})
	g.add(&codegraph.Node{ID: "c:Store", Kind: codegraph.KindClass, Name: "Store", QualName: "pkg.a.Store", Path: "pkg/a.py", StartLine: 3, Parent: "f:a"})
	g.add(&codegraph.Node{ID: "m:add", Kind: codegraph.KindMethod, Name: "add", QualName: "pkg.a.Store.add", Path: "pkg/a.py", StartLine: 5, Parent: "c:Store", Signature: "def add(self, item)"})
	g.add(&codegraph.Node{ID: "fn:total", Kind: codegraph.KindFunction, Name: "total", QualName: "pkg.b.total", Path: "pkg/b.py", StartLine: 1, Parent: "f:b"})
	g.add(&codegraph.Node{ID: "fn:main", Kind: codegraph.KindFunction, Name: "main", QualName: "main.main", Path: "main.py", StartLine: 4, Parent: "f:main"})
	g.edge("f:main", "f:a", codegraph.EdgeImports)
	g.edge("f:main", "f:b", codegraph.EdgeImports)
	g.edge("f:b", "p:req", codegraph.EdgeImports)
	g.edge("fn:main", "c:Store", codegraph.EdgeCalls)
	g.edge("fn:main", "m:add", codegraph.EdgeCalls)
	g.edge("fn:main", "fn:total", codegraph.EdgeCalls)
	g.edge("m:add", "fn:total", codegraph.EdgeCalls)
	return g
}

// starGraph: one hub function called by n functions spread over files, each
// also calling a chain of helpers, for budget and benchmark tests.
func starGraph(n int) *fakeGraph {
	g := &fakeGraph{}
	files := n/10 + 1
	for f := 0; f < files; f++ {
		g.add(&codegraph.Node{ID: fmt.Sprintf("file%d", f), Kind: codegraph.KindFile, Path: fmt.Sprintf("pkg%d/mod%d.py", f%4, f)})
	}
	g.add(&codegraph.Node{ID: "hub", Kind: codegraph.KindFunction, Name: "hub", Path: "pkg0/mod0.py", Parent: "file0"})
	for i := 0; i < n; i++ {
		f := i % files
		id := fmt.Sprintf("fn%d", i)
		g.add(&codegraph.Node{ID: id, Kind: codegraph.KindFunction, Name: fmt.Sprintf("func_%d", i), Path: fmt.Sprintf("pkg%d/mod%d.py", f%4, f), StartLine: i + 1, Parent: fmt.Sprintf("file%d", f)})
		g.edge(id, "hub", codegraph.EdgeCalls)
		if i > 0 && i%3 != 0 {
			g.edge(id, fmt.Sprintf("fn%d", i-1), codegraph.EdgeCalls)
		}
	}
	return g
}
