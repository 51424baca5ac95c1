package graphview

import (
	"context"
	"fmt"
	"math/rand"
	"os/exec"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"codeloom/app/codegraph"
)

// codeLikeGraph is a synthetic project: files of 8 functions each, every
// function calling about two others (mostly nearby, some far), seeded.
func codeLikeGraph(funcs int) *fakeGraph {
	r := rand.New(rand.NewSource(42))
	g := &fakeGraph{}
	files := funcs/8 + 1
	for f := 0; f < files; f++ {
		g.add(&codegraph.Node{ID: fmt.Sprintf("file%d", f), Kind: codegraph.KindFile, Path: fmt.Sprintf("pkg%d/mod_%d.py", f%7, f)})
	}
	for i := 0; i < funcs; i++ {
		f := i / 8
		g.add(&codegraph.Node{ID: fmt.Sprintf("fn%d", i), Kind: codegraph.KindFunction, Name: fmt.Sprintf("function_%d", i),
			Path: fmt.Sprintf("pkg%d/mod_%d.py", f%7, f), StartLine: i%8*10 + 1, Parent: fmt.Sprintf("file%d", f)})
	}
	for i := 0; i < funcs; i++ {
		for k := 0; k < 2; k++ {
			j := i + 1 + r.Intn(12)
			if r.Intn(4) == 0 {
				j = r.Intn(funcs)
			}
			if j < funcs && j != i {
				g.edge(fmt.Sprintf("fn%d", i), fmt.Sprintf("fn%d", j), codegraph.EdgeCalls)
			}
		}
	}
	return g
}

// neighbourhood returns a focus view of about n real nodes.
func neighbourhood(tb testing.TB, n int) *View {
	ix := NewIndex(codeLikeGraph(4000))
	v, err := Focus(ix, "fn2000", FocusOptions{Depth: 8, Budget: n})
	if err != nil {
		tb.Fatal(err)
	}
	real := 0
	for _, x := range v.Nodes {
		if !x.Stub {
			real++
		}
	}
	if real != n {
		tb.Fatalf("neighbourhood has %d real nodes, want %d", real, n)
	}
	return v
}

// BenchmarkLayout lays out neighbourhood views of 50/150/500 nodes with the
// in-process go-graphviz (WebAssembly) and the native dot binary, on the
// same DOT text, without the cache.
func BenchmarkLayout(b *testing.B) {
	gv, err := NewGraphvizEngine(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer gv.Close()
	_, dotErr := exec.LookPath("dot")
	for _, n := range []int{50, 150, 500} {
		for _, shape := range []string{"clustered", "flat"} {
			v := neighbourhood(b, n)
			if shape == "flat" { // the same graph without folder/file clusters
				flat := *v
				flat.Nodes = append([]ViewNode(nil), v.Nodes...)
				for i := range flat.Nodes {
					flat.Nodes[i].Cluster = ""
				}
				v = &flat
			}
			dot, ids := DOT(v)
			engines := []struct {
				name string
				e    Engine
			}{{"gographviz", gv}, {"native-dot", NativeEngine{}}}
			for _, e := range engines {
				b.Run(fmt.Sprintf("nodes=%d/%s/%s", n, shape, e.name), func(b *testing.B) {
					if e.name == "native-dot" && dotErr != nil {
						b.Skip("dot not installed")
					}
					b.ReportMetric(float64(len(v.Edges)), "edges")
					for i := 0; i < b.N; i++ {
						out, err := e.e.LayoutJSON(context.Background(), dot)
						if err != nil {
							b.Fatal(err)
						}
						if _, err := ParseJSON(out, ids, v); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkGraphvizInit measures starting the in-process Graphviz (with the
// compilation cache warm after the first run).
func BenchmarkGraphvizInit(b *testing.B) {
	for i := 0; i < b.N; i++ {
		e, err := NewGraphvizEngine(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}

// BenchmarkFrame500 measures one pan/zoom frame of a 500-node view: "place"
// repositions every canvas object (what the app does per frame before GL
// draws), "render" also paints the whole window with Fyne's software painter
// (the headless test driver; the GL driver draws on the GPU instead).
func BenchmarkFrame500(b *testing.B) {
	test.NewTempApp(b)
	eng, err := NewGraphvizEngine(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	l := NewLayouter(eng)
	v := neighbourhood(b, 500)
	lay, err := l.Layout(context.Background(), v)
	if err != nil {
		b.Fatal(err)
	}
	g := NewGraphView(l)
	w := test.NewWindow(g)
	defer w.Close()
	w.Resize(fyne.NewSize(1200, 800))
	g.SetLayout(v, lay)
	g.ZoomBy(2.5) // labels visible, like a user reading the graph
	r := test.WidgetRenderer(g).(*graphRenderer)
	b.ReportMetric(float64(len(r.Objects())), "objects")
	b.Run("place", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			d := float32(1 - 2*(i%2))
			g.offset = g.offset.Add(fyne.NewPos(d, d))
			r.place(g.Size())
		}
	})
	b.Run("render", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			d := float32(1 - 2*(i%2))
			g.Dragged(&fyne.DragEvent{Dragged: fyne.NewDelta(d, d)})
			_ = w.Canvas().Capture()
		}
	})
}

// BenchmarkReferences lists the references of a function with 30,000
// callers (typing.py of the pyenv corpus has 26,233), as the references
// panel does when such a node is selected.
func BenchmarkReferences(b *testing.B) {
	ix := NewIndex(starGraph(30000))
	b.ReportAllocs()
	for b.Loop() {
		if refs := References(ix, "hub"); len(refs) != 30000 {
			b.Fatalf("%d references, want 30000", len(refs))
		}
	}
}
