package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sameEdgeStore checks that a's edges are fresh's, in the same order, read
// the way queries read them (by index, and every node's out and in rows,
// which are compared through Out and In), without compacting a (Edges
// would). Used by graphsEqual.
func sameEdgeStore(t *testing.T, what string, a, fresh *Graph) {
	t.Helper()
	if a.numEdges() != fresh.numEdges() {
		t.Errorf("%s: %d edges, fresh %d", what, a.numEdges(), fresh.numEdges())
		return
	}
	for i := 0; i < a.numEdges(); i++ {
		if x, y := a.edgeAt(int32(i)), fresh.edgeAt(int32(i)); x != y {
			t.Errorf("%s: edge %d is %+v, fresh %+v", what, i, x, y)
			return
		}
	}
	ids := map[string]bool{}
	for _, n := range fresh.nodes {
		ids[n.ID] = true
	}
	for i := 0; i < fresh.numEdges(); i++ {
		e := fresh.edgeAt(int32(i))
		ids[e.From], ids[e.To] = true, true // endpoints that are not nodes too
	}
	for id := range ids {
		if x, y := a.Out(id), fresh.Out(id); !reflect.DeepEqual(x, y) {
			t.Errorf("%s: Out(%s) = %v, fresh %v", what, id, x, y)
			return
		}
		if x, y := a.In(id), fresh.In(id); !reflect.DeepEqual(x, y) {
			t.Errorf("%s: In(%s) = %v, fresh %v", what, id, x, y)
			return
		}
	}
}

// flatCopy returns g when it is flat, else a flat graph with the same
// content, made without keeping it in g (g.Edges would keep it, and the
// next update would start from it).
func flatCopy(g *Graph) *Graph {
	if g.ov == nil {
		return g
	}
	return g.compact()
}

// edgeHomes lists the arrays g's edges live in: the flat list, or an
// overlay's base list and replaced segments. It does not compact g.
func edgeHomes(g *Graph) [][]Edge {
	if g.ov == nil {
		if len(g.edges) == 0 {
			return nil
		}
		return [][]Edge{g.edges}
	}
	src, f := g.ov.view()
	if f != nil {
		return [][]Edge{f.edges}
	}
	homes := [][]Edge{src.base.edges}
	for _, s := range g.ov.replSegs {
		if seg := g.ov.repl[s]; len(seg) > 0 {
			homes = append(homes, seg)
		}
	}
	return homes
}

// inHomes reports whether e points into one of the arrays.
func inHomes(homes [][]Edge, e *Edge) bool {
	for _, h := range homes {
		if len(h) > 0 && !uintptrLess(e, &h[0]) && !uintptrLess(&h[len(h)-1], e) {
			return true
		}
	}
	return false
}

// TestOverlayUpdatesEqualFresh runs a series of one-file edits on a mixed
// Python and Go project — a body edit, a comment that shifts every line of
// a file, the same file again, other files (the overlay grows), a new
// definition, a deleted file, compaction (asked for by Edges, and forced by
// a low limit) — and after each checks that the update's graph equals a
// fresh index field by field (edges by index and every node's rows, without
// compacting it), that a body edit kept the previous graph's edge list
// instead of copying it, and that queries over the overlay answer as the
// fresh graph does.
func TestOverlayUpdatesEqualFresh(t *testing.T) {
	files := goPatchFixture()
	for k, v := range pyFixture {
		files["py/"+k] = v
	}
	// Methods of Sq in a second file: one update changing both files
	// changes one parent's children from two files.
	files["shape/more.go"] = "package shape\n\nfunc (q Sq) Double() float64 { return 2 * q.s }\n"
	root := writeTree(t, files)
	p := openT(t, root, Options{NoCache: true})
	ctx := context.Background()
	replace := func(from, to string) func(string) string {
		return func(s string) string {
			if !strings.Contains(s, from) {
				t.Fatalf("%q not found", from)
			}
			return strings.Replace(s, from, to, 1)
		}
	}
	var also []string // further files changed in the next step
	step := func(what, file string, fn func(string) string, wantPatch bool) *Graph {
		t.Helper()
		prev := p.Graph()
		path := filepath.Join(root, filepath.FromSlash(file))
		if fn != nil {
			path = rewriteFile(t, root, file, fn)
		} else if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		before := p.b.fastBuilds
		g, err := p.UpdateFiles(ctx, append([]string{path}, also...))
		also = nil
		if err != nil {
			t.Fatal(err)
		}
		if patched := p.b.fastBuilds == before+1; patched != wantPatch {
			t.Errorf("%s: patched=%v, want %v", what, patched, wantPatch)
		}
		if wantPatch && g.ov != nil {
			// The unchanged edges are the previous graph's, not a copy.
			base := prev
			if prev.ov != nil {
				if src, f := prev.ov.view(); f != nil {
					base = f
				} else {
					base = src.base
				}
			}
			if src, _ := g.ov.view(); src == nil || src.base != base {
				t.Errorf("%s: the update's edges do not share the previous graph's list", what)
			}
		}
		fresh := openT(t, root, Options{NoCache: true}).Graph()
		graphsEqual(t, what, g, fresh)
		for _, q := range []string{"py.pkg.util.make", "py.pkg.models.Item", "ex/shape.Sq.Area", "ex.total"} {
			var a, b *Node
			for _, n := range g.nodes {
				if n.QualName == q {
					a = n
				}
			}
			for _, n := range fresh.nodes {
				if n.QualName == q {
					b = n
				}
			}
			if (a == nil) != (b == nil) {
				t.Errorf("%s: %s present %v, fresh %v", what, q, a != nil, b != nil)
				continue
			}
			if a == nil {
				continue
			}
			if x, y := ids(g.Deps(a.ID)), ids(fresh.Deps(b.ID)); !reflect.DeepEqual(x, y) {
				t.Errorf("%s: Deps(%s) = %v, fresh %v", what, q, x, y)
			}
			if x, y := ids(g.RDeps(a.ID)), ids(fresh.RDeps(b.ID)); !reflect.DeepEqual(x, y) {
				t.Errorf("%s: RDeps(%s) = %v, fresh %v", what, q, x, y)
			}
			if x, y := g.Path("ex.main", a.ID), fresh.Path("ex.main", b.ID); !reflect.DeepEqual(x, y) {
				t.Errorf("%s: Path(main, %s) = %v, fresh %v", what, q, x, y)
			}
		}
		return g
	}

	g := step("body edit", "py/pkg/util.py", replace("it.save()", "it.save()\n    env()"), true)
	if g.ov == nil {
		t.Fatal("a body edit made a flat graph (copied every edge)")
	}
	g = step("comment shifting every line", "py/pkg/util.py", func(s string) string { return "# a comment\n# two lines\n" + s }, true)
	for _, n := range g.NodesInFile("py/pkg/util.py") {
		if n.Name == "make" && n.StartLine != 9 {
			t.Errorf("make starts at line %d after two lines were added above it, want 9", n.StartLine)
		}
	}
	step("same file again", "py/pkg/util.py", replace("# two lines\n", ""), true)
	step("another file (overlay holds two)", "py/pkg/models.py", replace("return 2", "\n\n        return 3"), true)
	step("Go method in another file than its type", "shape/sq.go", replace("return q.s * q.s", "\n\treturn q.s * q.Side()"), true)
	step("Go dispatch goes", "main.go", replace("t += x.Area()", "t += 1"), true)
	also = []string{rewriteFile(t, root, "shape/more.go", replace("func (q Sq) Double", "// Double doubles.\nfunc (q Sq) Double"))}
	step("two files with methods of one type", "shape/sq.go", replace("func (q Sq) Side", "// Side is s.\nfunc (q Sq) Side"), true)
	g = step("Go dispatch comes back", "main.go", replace("t += 1", "t += x.Area()"), true)
	wantEdge(t, g, "ex.total", "ex/shape.Sq.Area", EdgeDispatches)

	// Compaction asked for by a reader: the next update starts from it.
	if g.ov == nil {
		t.Fatal("not an overlay before compaction")
	}
	flat := g.Edges()
	flatG := g.ov.flat.Load()
	if flatG == nil || flatG.ov != nil || len(flatG.edges) != len(flat) {
		t.Fatal("Edges did not keep the compacted graph")
	}
	if g.ov.src.Load() != nil {
		t.Error("the compacted overlay still holds its base graph")
	}
	graphsEqual(t, "compacted overlay", g, openT(t, root, Options{NoCache: true}).Graph())
	g = step("after Edges compacted", "py/app.py", replace("unknown_func()", "pkg.util.env()"), true)
	if g.ov == nil || g.ov.src.Load() == nil || g.ov.src.Load().base != flatG {
		t.Error("the update after compaction is not an overlay")
	}
	for path, fb := range p.b.fbs {
		for _, r := range []*fileResult{fb.inh, fb.res} {
			if r != nil && len(r.edges) > 0 && !inHomes(edgeHomes(g), &r.edges[0]) {
				t.Errorf("%s's edges are not in the graph's storage after compaction", path)
			}
		}
	}

	// Many successive edits with a low limit: compacted by the update.
	p.b.overlayMax = 5
	flats := 0
	py, goSrc := [2]string{"return 3", "return 4"}, [2]string{"q.s * q.Side()", "q.s * q.s"}
	for i := 0; i < 6; i++ {
		file, from, to := "py/pkg/models.py", py[0], py[1]
		if i%2 == 1 {
			file, from, to = "shape/sq.go", goSrc[0], goSrc[1]
			goSrc[0], goSrc[1] = goSrc[1], goSrc[0]
		} else {
			py[0], py[1] = py[1], py[0]
		}
		g = step("successive edit "+string(rune('0'+i)), file, replace(from, to), true)
		if g.ov == nil {
			flats++
		}
	}
	if flats == 0 {
		t.Error("no update compacted the overlay past its limit")
	}
	p.b.overlayMax = 0

	// Name changes and deleted files: assembled from scratch, equal too.
	step("new definition", "py/pkg/util.py", func(s string) string { return s + "\n\ndef added():\n    return helper()\n" }, false)
	step("body edit after a full build", "py/pkg/util.py", replace("    return helper()", "    make(1)\n    return helper()"), true)
	step("deleted file", "py/app.py", nil, false)
	step("body edit after a deletion", "shape/shape.go", replace("// Sq is a square.", "// Sq is a square.\n// (moved)"), true)
}

// TestOverlayRowsSize: the rows an overlay holds are proportional to the
// replaced segments, not to the graph (what makes an update not copy).
func TestOverlayRowsSize(t *testing.T) {
	root := writeTree(t, pyFixture)
	p := openT(t, root, Options{NoCache: true})
	path := filepath.Join(root, "pkg", "util.py")
	src, _ := os.ReadFile(path)
	os.WriteFile(path, append(src, "\n# edited\n"...), 0o644)
	g, err := p.UpdateFiles(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if g.ov == nil {
		t.Fatal("a comment edit made a flat graph")
	}
	rows := 0
	for _, r := range g.ov.out {
		rows += len(r)
	}
	for _, r := range g.ov.extraOut {
		rows += len(r)
	}
	if rows != g.ov.replEdges || g.ov.replEdges >= g.numEdges() {
		t.Errorf("overlay rows %d for %d replaced edges of %d", rows, g.ov.replEdges, g.numEdges())
	}
}

// TestOverlayReadsDuringCompaction reads an update's graph from several
// goroutines while another compacts it (as the snapshot writer does beside
// the app's queries); every read must give what the fresh graph gives
// (run with -race to check the handover).
func TestOverlayReadsDuringCompaction(t *testing.T) {
	root := writeTree(t, pyFixture)
	p := openT(t, root, Options{NoCache: true})
	path := filepath.Join(root, "pkg", "util.py")
	src, _ := os.ReadFile(path)
	os.WriteFile(path, append([]byte("# shifted\n"), src...), 0o644)
	g, err := p.UpdateFiles(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if g.ov == nil {
		t.Fatal("not an overlay")
	}
	fresh := openT(t, root, Options{NoCache: true}).Graph()
	done := make(chan string, 4)
	for w := 0; w < 3; w++ {
		go func() {
			for i := 0; i < 50; i++ {
				for _, n := range fresh.nodes {
					if !reflect.DeepEqual(g.Out(n.ID), fresh.Out(n.ID)) || !reflect.DeepEqual(g.In(n.ID), fresh.In(n.ID)) ||
						len(g.Children(n.ID)) != len(fresh.Children(n.ID)) {
						done <- "rows of " + n.ID + " differ"
						return
					}
				}
				if len(g.NodesInFile("pkg/util.py")) != len(fresh.NodesInFile("pkg/util.py")) {
					done <- "NodesInFile differs"
					return
				}
			}
			done <- ""
		}()
	}
	go func() { g.Edges(); done <- "" }()
	for i := 0; i < 4; i++ {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
	if g.ov.src.Load() != nil {
		t.Error("not compacted")
	}
}
