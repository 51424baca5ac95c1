package codegraph

import (
	"fmt"
	"math"
	"reflect"
	"testing"
)

// A last build (NoUpdates) gives the same graph as a normal one: the same
// nodes and the same edges in the same order, although it drops each file's
// references once resolved (argument sites read the files' copies of their
// argument records, argIndexSplit) and holds edges packed until assembly.
// The fixture has calls whose parameter values come from call sites in
// other files (the argument index), classes, imports, Go and JavaScript;
// the test fails if an edge is lost, added, reordered or changes kind or
// line, or a node differs.
func TestNoUpdatesGraphSameAsNormal(t *testing.T) {
	files := map[string]string{
		"go.mod":          "module example.com/m\n\ngo 1.22\n",
		"t.go":            "package m\n\ntype T struct{}\n\nfunc (t *T) M() int { return helper() }\n\nfunc helper() int { return 1 }\n",
		"web.js":          "import { f } from './lib.js';\nexport function g() { return f(); }\n",
		"lib.js":          "export function f() { return 1; }\n",
		"pkg/__init__.py": "",
		"pkg/base.py": "class Handler:\n    def handle(self, msg):\n        return msg.render()\n\n" +
			"def run(h, msg):\n    return h.handle(msg)\n",
	}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("pkg/m%02d.py", i)] = fmt.Sprintf("from pkg.base import Handler, run\n\n"+
			"class Msg%d:\n    def render(self):\n        return %d\n\n"+
			"class H%d(Handler):\n    def handle(self, msg):\n        return super().handle(msg)\n\n"+
			"def main():\n    run(H%d(), Msg%d())\n    missing_%d()\n", i, i, i, i, i, i)
	}
	root := writeTree(t, files)
	ref := openT(t, root, Options{NoCache: true}).Graph()
	got := openT(t, root, Options{NoCache: true, NoUpdates: true}).Graph()
	if len(ref.Edges()) < 200 {
		t.Fatalf("fixture has %d edges, want at least 200", len(ref.Edges()))
	}
	calls := 0
	for _, e := range ref.Edges() {
		if e.Kind == EdgeCalls {
			calls++
		}
	}
	if calls < 80 {
		t.Fatalf("fixture has %d calls edges, want at least 80", calls)
	}
	if !reflect.DeepEqual(got.Edges(), ref.Edges()) {
		t.Fatalf("NoUpdates edges (%d) differ from a normal build's (%d)", len(got.Edges()), len(ref.Edges()))
	}
	if len(got.Nodes()) != len(ref.Nodes()) {
		t.Fatalf("NoUpdates has %d nodes, a normal build %d", len(got.Nodes()), len(ref.Nodes()))
	}
	for i, n := range ref.Nodes() {
		if !reflect.DeepEqual(*got.Nodes()[i], *n) {
			t.Fatalf("node %d: NoUpdates %+v, normal %+v", i, *got.Nodes()[i], *n)
		}
	}
}

// packEdges keeps every kind and line of an edge and both its ends, in
// order: ends that are nodes of the build's files (a file node, its
// definitions, in any file) as numbers, the others (a package, an ID of no
// file of the build, an ID whose table entry names another file) as
// strings; it leaves a result it cannot pack (an unknown kind, a line past
// 32 bits, no numbering) as it was.
func TestPackEdgesRoundTrip(t *testing.T) {
	files := make([]*fileBuild, 3)
	locs := newNodeLocs(16)
	locs.addPackage("pkg:os")
	for i := range files {
		fb := &fileBuild{fileID: fmt.Sprint("file", i)}
		for d := 0; d < 3*i; d++ {
			fb.ids = append(fb.ids, fmt.Sprint("def", i, ".", d))
		}
		locs.addFile(fb, nil)
		files[i] = fb
	}
	locs.addFile(&fileBuild{fileID: "stray file", ids: []string{"stray"}}, nil) // a file of no numbering
	trim := &finalTrim{at: map[*fileBuild]int{}}
	for i, fb := range files {
		trim.at[fb] = i
	}
	trim.nums = newNodeNums(files, trim.at, locs) // (newFinalTrim numbers large projects only)
	ends := []string{"file0", "file2", "def2.5", "def1.0", "def2.0", "pkg:os", "nowhere", "stray", "def1.2"}
	var want []Edge
	for i, k := range edgeKinds() {
		want = append(want, Edge{From: ends[i%len(ends)], To: ends[(i*5+1)%len(ends)], Kind: k, Line: i * 1000})
		want = append(want, Edge{From: ends[i%len(ends)], To: ends[(i+3)%len(ends)], Kind: k, Line: -i})
	}
	want = append(want, Edge{From: "def1.1", To: "pkg:os", Kind: EdgeCalls, Line: math.MaxInt32})
	r := &fileResult{edges: append([]Edge(nil), want...)}
	if !r.packEdges(trim.nums) || r.edges != nil || len(r.packed) != len(want) {
		t.Fatalf("packEdges: ok=false or edges kept (%d edges, %d packed)", len(r.edges), len(r.packed))
	}
	if len(r.pk.ext) == 0 || len(r.pk.ext) >= len(want) {
		t.Fatalf("%d ends kept as strings, want some (packages, strays) and not all", len(r.pk.ext))
	}
	if got := r.appendEdges([]Edge{{From: "first"}}); !reflect.DeepEqual(got[1:], want) || got[0].From != "first" {
		t.Fatalf("appendEdges = %v, want %v after the first", got, want)
	}
	for _, bad := range []Edge{{From: "file0", To: "file1", Kind: "other"}, {From: "file0", To: "file1", Kind: EdgeCalls, Line: math.MaxInt32 + 1}} {
		in := append(append([]Edge(nil), want...), bad)
		r := &fileResult{edges: append([]Edge(nil), in...)}
		if r.packEdges(trim.nums) || r.packed != nil || !reflect.DeepEqual(r.edges, in) {
			t.Fatalf("packEdges with %+v: packed %d, edges changed", bad, len(r.packed))
		}
	}
	r = &fileResult{edges: append([]Edge(nil), want...)}
	if r.packEdges(nil) || r.packed != nil || !reflect.DeepEqual(r.edges, want) {
		t.Fatalf("packEdges without numbers packed %d edges", len(r.packed))
	}
}
