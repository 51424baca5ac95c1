package graphview

import (
	"sort"
	"strings"
	"testing"

	"codeloom/app/codegraph"
)

func ids(v *View) []string {
	var out []string
	for _, n := range v.Nodes {
		out = append(out, n.ID)
	}
	sort.Strings(out)
	return out
}

func hasEdge(v *View, from, to string, k codegraph.EdgeKind) bool {
	for _, e := range v.Edges {
		if e.From == from && e.To == to && e.Kind == k {
			return true
		}
	}
	return false
}

func TestOverviewShowsFilesClusteredByFolderWithLiftedEdges(t *testing.T) {
	ix := NewIndex(smallGraph())
	v := Overview(ix, OverviewOptions{})
	if got, want := strings.Join(ids(v), ","), "f:a,f:b,f:main,p:req"; got != want {
		t.Fatalf("nodes = %s, want %s", got, want)
	}
	clusters := map[string]string{}
	for _, n := range v.Nodes {
		clusters[n.ID] = n.Cluster
	}
	if clusters["f:a"] != "pkg" || clusters["f:main"] != "(project root)" || clusters["p:req"] != "external packages" {
		t.Errorf("clusters = %v", clusters)
	}
	for _, c := range []struct {
		from, to string
		k        codegraph.EdgeKind
	}{
		{"f:main", "f:a", codegraph.EdgeImports}, // imports outranks the lifted calls
		{"f:a", "f:b", codegraph.EdgeCalls},      // lifted from m:add → fn:total
		{"f:b", "p:req", codegraph.EdgeImports},
	} {
		if !hasEdge(v, c.from, c.to, c.k) {
			t.Errorf("missing edge %s -%s-> %s in %v", c.from, c.k, c.to, v.Edges)
		}
	}
	// One edge per pair: main.py imports a.py and its function calls two
	// things in a.py.
	n := 0
	for _, e := range v.Edges {
		if e.From == "f:main" && e.To == "f:a" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("f:main→f:a drawn %d times, want 1", n)
	}
}

func TestOverviewExpandedFileShowsItsDefinitions(t *testing.T) {
	ix := NewIndex(smallGraph())
	v := Overview(ix, OverviewOptions{Expanded: map[string]bool{"f:a": true}})
	if got, want := strings.Join(ids(v), ","), "c:Store,f:a,f:b,f:main,m:add,p:req"; got != want {
		t.Fatalf("nodes = %s, want %s", got, want)
	}
	if !hasEdge(v, "f:a", "c:Store", codegraph.EdgeContains) || !hasEdge(v, "c:Store", "m:add", codegraph.EdgeContains) {
		t.Errorf("contains edges missing: %v", v.Edges)
	}
	if !hasEdge(v, "f:main", "m:add", codegraph.EdgeCalls) || !hasEdge(v, "m:add", "f:b", codegraph.EdgeCalls) {
		t.Errorf("calls not lifted to the visible ends: %v", v.Edges)
	}
	if st, _ := v.Node("c:Store"); st.Cluster != "pkg/a.py" {
		t.Errorf("class cluster = %q, want its file", st.Cluster)
	}
}

func TestFiltersHideNodeAndEdgeKinds(t *testing.T) {
	ix := NewIndex(smallGraph())
	f := Filter{HideNodes: map[codegraph.Kind]bool{codegraph.KindPackage: true}, HideEdges: map[codegraph.EdgeKind]bool{codegraph.EdgeCalls: true}}
	v := Overview(ix, OverviewOptions{Filter: f})
	if _, ok := v.Node("p:req"); ok {
		t.Error("package node shown although packages are hidden")
	}
	for _, e := range v.Edges {
		if e.Kind == codegraph.EdgeCalls || e.To == "p:req" {
			t.Errorf("hidden edge shown: %v", e)
		}
	}
	all := Overview(ix, OverviewOptions{})
	if v.Key() == all.Key() {
		t.Error("filtered and unfiltered views share a cache key")
	}
	if again := Overview(ix, OverviewOptions{Filter: f}); again.Key() != v.Key() {
		t.Error("identical views have different keys")
	}
}

func TestFocusNeighbourhoodDepth(t *testing.T) {
	ix := NewIndex(smallGraph())
	v, err := Focus(ix, "fn:total", FocusOptions{Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(ids(v), ","), "f:b,fn:main,fn:total,m:add"; got != want {
		t.Fatalf("depth 1 nodes = %s, want %s", got, want)
	}
	v2, err := Focus(ix, "fn:total", FocusOptions{Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"c:Store", "f:main", "p:req"} {
		if _, ok := v2.Node(want); !ok {
			t.Errorf("depth 2 misses %s: %v", want, ids(v2))
		}
	}
	if !hasEdge(v2, "fn:main", "fn:total", codegraph.EdgeCalls) {
		t.Errorf("edge missing in focus view: %v", v2.Edges)
	}
	if _, err := Focus(ix, "nope", FocusOptions{}); err == nil {
		t.Error("focus on an unknown node: no error")
	}
}

func TestFocusBudgetAddsMoreStub(t *testing.T) {
	ix := NewIndex(starGraph(300))
	v, err := Focus(ix, "hub", FocusOptions{Depth: 1, Budget: 50})
	if err != nil {
		t.Fatal(err)
	}
	real, stubs, more := 0, 0, 0
	for _, n := range v.Nodes {
		if n.Stub {
			stubs++
			more += n.More
		} else {
			real++
		}
	}
	if real != 50 {
		t.Errorf("real nodes = %d, want the budget 50", real)
	}
	// hub has 300 callers + its file = 301 neighbours; 49 fit.
	if stubs != 1 || more != 301-49 {
		t.Errorf("stubs = %d, more = %d; want 1 stub of %d", stubs, more, 301-49)
	}
	if !hasEdge(v, "hub", "more:hub", "") {
		t.Errorf("stub not attached to hub")
	}
}

func TestFocusFilterKeepsFocusNode(t *testing.T) {
	ix := NewIndex(smallGraph())
	f := Filter{HideNodes: map[codegraph.Kind]bool{codegraph.KindFunction: true, codegraph.KindFile: true}}
	v, err := Focus(ix, "fn:main", FocusOptions{Filter: f})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.Node("fn:main"); !ok {
		t.Fatal("focus node hidden by the filter")
	}
	if _, ok := v.Node("fn:total"); ok {
		t.Error("hidden kind shown in focus view")
	}
	if _, ok := v.Node("m:add"); !ok {
		t.Error("visible neighbour missing")
	}
}

func TestTooltip(t *testing.T) {
	ix := NewIndex(smallGraph())
	n, _ := ix.Node("m:add")
	tip := Tooltip(n)
	for _, want := range []string{"method", "pkg.a.Store.add", "def add(self, item)", "pkg/a.py:5"} {
		if !strings.Contains(tip, want) {
			t.Errorf("tooltip %q lacks %q", tip, want)
		}
	}
	if ix.FileOf("m:add") != "f:a" {
		t.Errorf("FileOf(m:add) = %q", ix.FileOf("m:add"))
	}
}

func TestOverviewCollapsesFoldersOfBigProjects(t *testing.T) {
	ix := NewIndex(starGraph(300)) // 31 files in pkg0..pkg3
	// A budget of 5 nodes cannot open any folder (each holds 7 or 8 files).
	v := Overview(ix, OverviewOptions{FolderThreshold: 10, Budget: 5})
	if len(v.Nodes) != 4 {
		t.Fatalf("collapsed overview has %d nodes (%v), want the 4 folders", len(v.Nodes), ids(v))
	}
	n, ok := v.Node(FolderNodeID("pkg1"))
	if !ok || n.Kind != KindFolder || !strings.Contains(n.Label, "files") {
		t.Fatalf("folder node %+v", n)
	}
	// Calls between files of different folders become folder→folder edges.
	if !hasEdge(v, FolderNodeID("pkg1"), FolderNodeID("pkg0"), codegraph.EdgeCalls) {
		t.Errorf("no lifted folder edge: %v", v.Edges)
	}
	open := Overview(ix, OverviewOptions{FolderThreshold: 10, Budget: 5, ExpandedFolders: map[string]bool{FolderNodeID("pkg1"): true}})
	if _, ok := open.Node(FolderNodeID("pkg1")); ok {
		t.Error("expanded folder still drawn as one node")
	}
	if _, ok := open.Node("file1"); !ok {
		t.Errorf("expanded folder's files missing: %v", ids(open))
	}
	if !hasEdge(open, "file1", FolderNodeID("pkg0"), codegraph.EdgeCalls) {
		t.Errorf("no edge from an expanded file to a collapsed folder: %v", open.Edges)
	}
	if small := Overview(NewIndex(smallGraph()), OverviewOptions{}); len(small.Nodes) != 4 {
		t.Errorf("small projects are not collapsed: %v", ids(small))
	}
}
