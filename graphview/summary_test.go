package graphview

import (
	"fmt"
	"strings"
	"testing"

	"codeloom/app/codegraph"
)

// treeGraph: a project shaped like a standard library: root files, folders
// nested two deep, functions calling across folders, and imports of packages
// named like the project's own folders (as Go's do) and of outside ones.
func treeGraph(top, sub, files int) *fakeGraph {
	g := &fakeGraph{}
	var fns []string
	add := func(p string) {
		fid := "f:" + p
		g.add(&codegraph.Node{ID: fid, Kind: codegraph.KindFile, Path: p})
		fn := "fn:" + p
		g.add(&codegraph.Node{ID: fn, Kind: codegraph.KindFunction, Name: "f", Path: p, StartLine: 1, Parent: fid})
		fns = append(fns, fn)
	}
	for r := 0; r < files*3; r++ {
		add(fmt.Sprintf("mod%d.py", r))
	}
	for t := 0; t < top; t++ {
		for s := 0; s < sub; s++ {
			for f := 0; f < files; f++ {
				add(fmt.Sprintf("top%d/sub%d/file%d.py", t, s, f))
			}
		}
	}
	g.add(&codegraph.Node{ID: "pkg:top1/sub0", Kind: codegraph.KindPackage, Name: "top1/sub0"})
	g.add(&codegraph.Node{ID: "pkg:numpy", Kind: codegraph.KindPackage, Name: "numpy"})
	for i, fn := range fns {
		g.edge(fn, fns[(i*7+3)%len(fns)], codegraph.EdgeCalls)
		g.edge(fn, fns[(i*13+1)%len(fns)], codegraph.EdgeCalls)
		if i%5 == 0 {
			g.edge("f:"+strings.TrimPrefix(fn, "fn:"), "pkg:top1/sub0", codegraph.EdgeImports)
			g.edge("f:"+strings.TrimPrefix(fn, "fn:"), "pkg:numpy", codegraph.EdgeImports)
		}
	}
	return g
}

func TestFolderSummaryStaysInBudgetAndCountsReferences(t *testing.T) {
	g := treeGraph(40, 6, 12) // 40 top folders × 6 × 12 files + 36 root files
	ix := NewIndex(g)
	v := Overview(ix, OverviewOptions{})
	if len(v.Nodes) > DefaultNodeBudget+1 {
		t.Fatalf("overview has %d nodes, budget %d", len(v.Nodes), DefaultNodeBudget)
	}
	if len(v.Edges) > DefaultEdgeBudget {
		t.Fatalf("overview has %d edges, budget %d", len(v.Edges), DefaultEdgeBudget)
	}
	if v.HiddenEdges == 0 {
		t.Error("a dense graph kept every edge: the budget did not cut")
	}
	total, maxCount := 0, 0
	for _, e := range v.Edges {
		total += e.Count
		maxCount = max(maxCount, e.Count)
	}
	if maxCount < 2 {
		t.Errorf("no edge carries more than one reference: %v", v.Edges[:min(5, len(v.Edges))])
	}
	var rest, folders int
	for _, n := range v.Nodes {
		switch n.Kind {
		case KindGroup:
			rest++
		case KindFolder:
			folders++
		}
	}
	if rest == 0 || folders == 0 {
		t.Errorf("want folders and a +k more node, got %d folders, %d groups: %v", folders, rest, ids(v))
	}
	// The package named like a folder stands for it: no node of its own.
	if _, ok := v.Node("pkg:top1/sub0"); ok {
		t.Error("a package naming a project folder got its own node")
	}
	if _, ok := v.Node(ExternalNodeID); !ok {
		t.Errorf("outside packages are not summarised in one node: %v", ids(v))
	}
	// Opening a folder shows what is inside, still bounded.
	var fid string
	for _, n := range v.Nodes {
		if n.Kind == KindFolder {
			fid = n.ID
			break
		}
	}
	open := Overview(ix, OverviewOptions{ExpandedFolders: map[string]bool{fid: true}})
	if _, ok := open.Node(fid); ok {
		t.Fatalf("opened folder %s still drawn as one node", fid)
	}
	inside := 0
	for _, n := range open.Nodes {
		if n.Cluster == strings.TrimPrefix(fid, "dir:")+"/" {
			inside++
		}
	}
	if inside == 0 {
		t.Errorf("opened folder shows nothing inside it: %v", ids(open))
	}
	if len(open.Nodes) > DefaultNodeBudget+minOpenCap+2 || len(open.Edges) > DefaultEdgeBudget {
		t.Errorf("opened overview %d nodes, %d edges", len(open.Nodes), len(open.Edges))
	}
}

func TestFolderSummaryOpensFoldersThatFit(t *testing.T) {
	// Go's tree: few folders at the top, no root files: the summary opens
	// the biggest folders while the budget allows instead of drawing 3 boxes.
	g := treeGraph(3, 5, 4)
	ix := NewIndex(g)
	v := Overview(ix, OverviewOptions{FolderThreshold: 10})
	if len(v.Nodes) < 15 {
		t.Errorf("summary of 3 folders × 5 subfolders drew only %d nodes: %v", len(v.Nodes), ids(v))
	}
	if len(v.Edges) == 0 {
		t.Error("no edges between the summary's nodes")
	}
}

func TestGridLayoutPlacesEveryNodeWithoutOverlap(t *testing.T) {
	v := Overview(NewIndex(treeGraph(40, 6, 12)), OverviewOptions{})
	lay := GridLayout(v)
	if len(lay.Nodes) != len(v.Nodes) {
		t.Fatalf("placed %d of %d nodes", len(lay.Nodes), len(v.Nodes))
	}
	var boxes []NodeBox
	for _, b := range lay.Nodes {
		for _, o := range boxes {
			if abs(b.X-o.X) < (b.W+o.W)/2 && abs(b.Y-o.Y) < (b.H+o.H)/2 {
				t.Fatalf("nodes %s and %s overlap", b.ID, o.ID)
			}
		}
		boxes = append(boxes, b)
		if b.X-b.W/2 < -1e-6 || b.Y-b.H/2 < -1e-6 || b.X+b.W/2 > lay.Width+1e-6 || b.Y+b.H/2 > lay.Height+1e-6 {
			t.Errorf("node %s %+v outside the %vx%v drawing", b.ID, b, lay.Width, lay.Height)
		}
	}
	if len(lay.Edges) != len(v.Edges) {
		t.Errorf("%d of %d edges drawn", len(lay.Edges), len(v.Edges))
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestDashedEdgesAreCutIntoDashes(t *testing.T) {
	pts := []Point{{0, 0}, {90, 0}}
	solid := edgeSegments(pts, false)
	dashed := edgeSegments(pts, true)
	if len(solid) != 1 {
		t.Fatalf("solid: %v", solid)
	}
	if len(dashed) != 10 { // 90 points of 5-on 4-off
		t.Fatalf("dashed: %d segments %v", len(dashed), dashed)
	}
	if !Dashed(codegraph.EdgeDispatches) || !Dashed(codegraph.EdgeImplements) || Dashed(codegraph.EdgeCalls) {
		t.Error("wrong dashed kinds")
	}
}

func TestSymbolViewPutsCallersLeftCalleesRight(t *testing.T) {
	ix := NewIndex(smallGraph())
	v := Symbol(ix, "fn:total", SymbolOptions{})
	side := map[string]int{}
	for _, n := range v.Nodes {
		side[n.ID] = n.Side
	}
	if side["fn:main"] != SideCaller || side["m:add"] != SideCaller {
		t.Fatalf("callers of total not on the left: %v", side)
	}
	lay := SymbolLayout(v)
	if !(lay.Nodes["fn:main"].X < lay.Nodes["fn:total"].X) {
		t.Errorf("caller drawn right of the symbol: %+v", lay.Nodes)
	}
	// add is a method: drawn inside its class's frame.
	if n, _ := v.Node("m:add"); n.Cluster != "class Store" {
		t.Errorf("method not grouped under its class: %q", n.Cluster)
	}
	v2 := Symbol(ix, "fn:main", SymbolOptions{})
	l2 := SymbolLayout(v2)
	if !(l2.Nodes["fn:total"].X > l2.Nodes["fn:main"].X) {
		t.Errorf("callee drawn left of the symbol")
	}
	refs := References(ix, "fn:total")
	if len(refs) != 2 || refs[0].Relation != "caller" || refs[0].Path == "" {
		t.Errorf("references of total: %+v", refs)
	}
}
