package graphview

import (
	"fmt"
	"math"
	"testing"

	"codeloom/app/codegraph"
)

// Two groups of files referencing each other within the group, listed
// interleaved: the ordered grid puts each group together, so its edges are
// much shorter than in view order, and the layout is the same every time.
func TestGridOrderKeepsConnectedNodesTogether(t *testing.T) {
	v := &View{Title: "Overview", Layout: LayoutGrid}
	const per = 12
	for i := 0; i < per; i++ {
		for _, g := range []string{"a", "b"} {
			id := fmt.Sprintf("%s%d", g, i)
			v.Nodes = append(v.Nodes, ViewNode{ID: id, Kind: codegraph.KindFile, Label: id + ".py"})
		}
	}
	for _, g := range []string{"a", "b"} {
		for i := 0; i < per; i++ {
			for j := i + 1; j < per; j += 3 {
				v.Edges = append(v.Edges, ViewEdge{From: fmt.Sprintf("%s%d", g, i), To: fmt.Sprintf("%s%d", g, j), Kind: codegraph.EdgeImports, Count: 1 + (i+j)%5})
			}
		}
	}
	length := func(lay *Layout) float64 {
		s := 0.0
		for _, e := range v.Edges {
			a, b := lay.Nodes[e.From], lay.Nodes[e.To]
			s += math.Hypot(a.X-b.X, a.Y-b.Y)
		}
		return s
	}
	plain, ordered := length(gridLayout(v, false)), length(GridLayout(v))
	if ordered > 0.75*plain {
		t.Errorf("ordered grid: total edge length %.0f, view order %.0f: want at most 75%%", ordered, plain)
	}
	again := GridLayout(v)
	for id, b := range GridLayout(v).Nodes {
		if again.Nodes[id] != b {
			t.Fatalf("node %s placed differently on a second layout", id)
		}
	}
	if len(again.Nodes) != len(v.Nodes) || len(again.Edges) != len(v.Edges) {
		t.Errorf("layout has %d nodes, %d edges; view %d, %d", len(again.Nodes), len(again.Edges), len(v.Nodes), len(v.Edges))
	}
}

// An expanded file's definitions keep their place right after the file.
func TestGridOrderLeavesDefinitionBlocks(t *testing.T) {
	nodes := []ViewNode{{ID: "f", Kind: codegraph.KindFile}, {ID: "f:a", Kind: codegraph.KindFunction}}
	if summaryBlock(nodes) {
		t.Error("a block with a function is reordered")
	}
	if !summaryBlock([]ViewNode{{ID: "dir:x", Kind: KindFolder}, {ID: "f", Kind: codegraph.KindFile}}) {
		t.Error("a block of folders and files is not reordered")
	}
}
