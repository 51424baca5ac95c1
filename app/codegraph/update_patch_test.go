package codegraph

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// goPatchFixture has an interface, a type whose method lives in another
// file of the package, and a caller dispatching through the interface.
func goPatchFixture() map[string]string {
	return map[string]string{
		"go.mod": "module ex\n\ngo 1.22\n",
		"shape/shape.go": `package shape

// Shape has an area.
type Shape interface {
	Area() float64
}

// Sq is a square.
type Sq struct{ s float64 }

func New(s float64) Sq { return Sq{s} }
`,
		"shape/sq.go": `package shape

func (q Sq) Area() float64 {
	return q.s * q.s
}

func (q Sq) Side() float64 { return q.s }
`,
		"main.go": `package main

import "ex/shape"

func total(xs []shape.Shape) float64 {
	t := 0.0
	for _, x := range xs {
		t += x.Area()
	}
	return t
}

func main() {
	total([]shape.Shape{shape.New(2)})
}
`,
	}
}

// TestUpdatePatchEqualsFresh edits Python and Go files in ways that change
// no name (body edits that add and drop calls, lines moving, a comment, a
// Go method whose type is in another file, a call through an interface) and
// checks that each update took the patch path and gives exactly the graph
// a fresh index gives, field by field; then that edits changing names
// (a new definition, a removed one) take the full path and are equal too.
func TestUpdatePatchEqualsFresh(t *testing.T) {
	files := goPatchFixture()
	for k, v := range pyFixture {
		files["py/"+k] = v
	}
	root := writeTree(t, files)
	p := openT(t, root, Options{NoCache: true})
	ctx := context.Background()
	apply := func(i int, file, from, to string) {
		t.Helper()
		writeEdit(t, root, i, file, from, to)
	}
	check := func(i int, file string, wantFast bool) *Graph {
		t.Helper()
		before := p.b.fastBuilds
		g, err := p.UpdateFiles(ctx, []string{filepath.Join(root, filepath.FromSlash(file))})
		if err != nil {
			t.Fatal(err)
		}
		if fast := p.b.fastBuilds == before+1; fast != wantFast {
			t.Errorf("edit %d (%s): patched=%v, want %v", i, file, fast, wantFast)
		}
		graphsEqual(t, "edit "+file, g, openT(t, root, Options{NoCache: true}).Graph())
		return g
	}
	g := p.Graph()
	area := byQual(t, g, "ex/shape.Sq.Area")
	if area.Parent != byQual(t, g, "ex/shape.Sq").ID {
		t.Fatalf("Sq.Area's parent is %q, want the type in another file", area.Parent)
	}
	wantEdge(t, g, "ex.total", "ex/shape.Sq.Area", EdgeDispatches)
	body := []struct{ file, from, to string }{
		{"shape/sq.go", "return q.s * q.s", "\n\n\treturn q.s * q.Side()"}, // lines move, a new call
		{"main.go", "t += x.Area()", "t += x.Area() + x.Area()"},
		{"main.go", "t += x.Area() + x.Area()", "t += 1"}, // the dispatch goes away
		{"shape/shape.go", "// Sq is a square.", "// Sq is a square, of side s.\n// (two lines)"},
		{"py/pkg/util.py", `return make("x")`, "unknown_call(os.getenv(\"OTHER\"))\n    return make(\"y\")"},
		{"py/pkg/models.py", "return 2", "\n\n        return 3"},
	}
	for i, e := range body {
		apply(i, e.file, e.from, e.to)
		check(i, e.file, true)
	}
	if hasEdge(t, p.Graph(), "ex.total", "ex/shape.Sq.Area", EdgeDispatches) {
		t.Error("the dispatches edge of a removed call is still there")
	}
	apply(100, "main.go", "t += 1", "t += x.Area()")
	wantEdge(t, check(100, "main.go", true), "ex.total", "ex/shape.Sq.Area", EdgeDispatches)
	// Names change: full assembly, same result.
	apply(101, "shape/sq.go", "func (q Sq) Side() float64 { return q.s }", "func (q Sq) Side() float64 { return q.s }\n\nfunc (q Sq) Perimeter() float64 { return 4 * q.s }")
	check(101, "shape/sq.go", false)
	apply(102, "py/pkg/util.py", `return make("y")`, "return make(\"y\")\n\n\ndef added():\n    return helper()")
	check(102, "py/pkg/util.py", false)
	// An interface gains a method Sq lacks: the implements edge goes.
	apply(103, "shape/shape.go", "Area() float64\n", "Area() float64\n\tVolume() float64\n")
	if g := check(103, "shape/shape.go", false); hasEdge(t, g, "ex/shape.Sq", "ex/shape.Shape", EdgeImplements) {
		t.Error("Sq still implements Shape after Shape gained Volume")
	}
}

// TestPrepareUpdates loads a persisted graph, prepares for updates in the
// background while an update arrives, and checks that the update waited for
// the preparation (done once) and gives the graph a fresh index gives; a
// second project prepared before any update keeps an equal graph and its
// first update does not prepare again.
func TestPrepareUpdates(t *testing.T) {
	root := writeTree(t, persistFixture())
	openT(t, root, Options{}).Close()
	ctx := context.Background()

	var stages []string
	var mu sync.Mutex
	hook := func(s string) { mu.Lock(); stages = append(stages, s); mu.Unlock() }
	p := openT(t, root, Options{testHook: hook})
	if !p.Report().FromSnapshot {
		t.Fatal("not loaded from the persisted graph")
	}
	loaded := p.Graph()
	if err := p.PrepareUpdates(ctx); err != nil {
		t.Fatal(err)
	}
	if p.loaded || p.b == nil || p.files == nil {
		t.Fatal("PrepareUpdates left the project unprepared")
	}
	graphsEqual(t, "prepared", p.Graph(), loaded)
	path := applyKillEdit(t, root, 0)
	g, err := p.UpdateFiles(ctx, []string{path})
	if err != nil {
		t.Fatal(err)
	}
	graphsEqual(t, "update after prepare", g, openT(t, root, Options{NoCache: true}).Graph())
	mu.Lock()
	if n := countStr(stages, "prepare-start"); n != 1 {
		t.Errorf("prepared %d times, want once (stages %v)", n, stages)
	}
	mu.Unlock()

	// Concurrent: the preparation and an update race.
	openT(t, root, Options{}).Close()
	stages = nil
	p2 := openT(t, root, Options{testHook: hook})
	if !p2.Report().FromSnapshot {
		t.Fatal("not loaded from the persisted graph")
	}
	done := make(chan error, 1)
	go func() { done <- p2.PrepareUpdates(ctx) }()
	path = applyKillEdit(t, root, 1)
	g, err = p2.UpdateFiles(ctx, []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	graphsEqual(t, "update racing the preparation", g, openT(t, root, Options{NoCache: true}).Graph())
	if p2.Graph() != g {
		t.Error("the preparation replaced the updated graph")
	}
	mu.Lock()
	if n := countStr(stages, "prepare-start"); n != 1 {
		t.Errorf("prepared %d times, want once (stages %v)", n, stages)
	}
	mu.Unlock()
}

func countStr(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

// TestWatchPreparesAtFirstChange: a project loaded from the persisted graph
// and only watched (browsed) is not prepared for updates — that costs as
// much memory as a cold index on a large project — until a file changes.
func TestWatchPreparesAtFirstChange(t *testing.T) {
	root := writeTree(t, persistFixture())
	openT(t, root, Options{}).Close()
	var stages []string
	var mu sync.Mutex
	hook := func(s string) { mu.Lock(); stages = append(stages, s); mu.Unlock() }
	p := openT(t, root, Options{testHook: hook})
	if !p.Report().FromSnapshot {
		t.Fatal("not loaded from the persisted graph")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan *Graph, 4)
	go p.Watch(ctx, func(g *Graph) { changed <- g })
	time.Sleep(2 * watchDebounce)
	mu.Lock()
	if n := countStr(stages, "prepare-start"); n != 0 {
		t.Errorf("watching alone prepared %d times (stages %v)", n, stages)
	}
	mu.Unlock()

	applyKillEdit(t, root, 0)
	select {
	case g := <-changed:
		graphsEqual(t, "watched update", g, openT(t, root, Options{NoCache: true}).Graph())
	case <-time.After(60 * time.Second):
		t.Fatal("no update within 60 s of a change")
	}
	p.mu.Lock()
	ready := !p.loaded && p.b != nil && p.files != nil
	p.mu.Unlock()
	if !ready {
		t.Error("after a change the project is still not prepared for updates")
	}
	mu.Lock()
	if n := countStr(stages, "prepare-start"); n > 1 {
		t.Errorf("prepared %d times after a change, want at most once (stages %v)", n, stages)
	}
	mu.Unlock()
}
