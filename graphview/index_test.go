package graphview

import (
	"slices"
	"testing"

	"codeloom/app/codegraph"
)

// TestIndexRowsMatchTheGraph checks the compact index against the graph it
// indexes: out/in rows in edge order, edges to unknown nodes left out,
// children by Parent then by contains edges (each once), the file of
// nested definitions, and that the graph's edges are shared, not copied.
func TestIndexRowsMatchTheGraph(t *testing.T) {
	g := smallGraph()
	// A folder-like node whose children are only given by contains edges,
	// one of them twice; an edge to a node that does not exist; a nil node.
	g.add(&codegraph.Node{ID: "d:pkg", Kind: codegraph.KindPackage, Name: "pkg"})
	g.edge("d:pkg", "f:a", codegraph.EdgeContains)
	g.edge("d:pkg", "f:b", codegraph.EdgeContains)
	g.edge("d:pkg", "f:a", codegraph.EdgeContains)
	g.edge("fn:main", "gone", codegraph.EdgeCalls)
	g.nodes = append(g.nodes, nil)
	ix := NewIndex(g)

	if ix.Len() != 9 {
		t.Errorf("Len %d, want 9 (nil skipped)", ix.Len())
	}
	var out []string
	for e := range ix.outEdges("fn:main") {
		out = append(out, e.To)
	}
	if want := []string{"c:Store", "m:add", "fn:total"}; !slices.Equal(out, want) {
		t.Errorf("out of fn:main %v, want %v (edge order, unknown target left out)", out, want)
	}
	var in []string
	for e := range ix.inEdges("fn:total") {
		in = append(in, e.From+">"+string(e.Kind))
	}
	if want := []string{"f:b>contains", "fn:main>calls", "m:add>calls"}; !slices.Equal(in, want) {
		t.Errorf("in of fn:total %v, want %v", in, want)
	}
	var kids []string
	for n := range ix.children("d:pkg") {
		kids = append(kids, n.ID)
	}
	if want := []string{"f:a", "f:b"}; !slices.Equal(kids, want) {
		t.Errorf("children of d:pkg %v, want %v (each once)", kids, want)
	}
	if got := ix.members("c:Store"); !slices.Equal(got, []string{"m:add"}) {
		t.Errorf("members of Store %v", got)
	}
	if f := ix.FileOf("m:add"); f != "f:a" {
		t.Errorf("FileOf(m:add) = %q, want f:a", f)
	}
	if f := ix.FileOf("p:req"); f != "" {
		t.Errorf("FileOf(p:req) = %q, want none", f)
	}
	if f := ix.FileOf("gone"); f != "" {
		t.Errorf("FileOf(unknown) = %q", f)
	}
	for e := range ix.outEdges("m:add") {
		if e != &g.edges[10] { // m:add → fn:total
			t.Errorf("the index yields a copy of the graph's edge, not the edge itself")
		}
	}
	for range ix.outEdges("gone") {
		t.Error("an unknown node has edges")
	}
}
