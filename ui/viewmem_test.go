package ui

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"

	"codeloom/app/memory"
	"codeloom/graphview"
)

// TestViewIndexMemory measures what the window derives from a graph (the
// view index, the first overview, the side tree) on a real project, as the
// app does after opening it: set CODELOOM_VIEWMEM_PROJECT to an indexed
// (warm) copy of a project. It logs the live heap after each step and, with
// CODELOOM_VIEWMEM_PROFILE set, writes a heap profile taken after them.
func TestViewIndexMemory(t *testing.T) {
	root := os.Getenv("CODELOOM_VIEWMEM_PROJECT")
	if root == "" {
		t.Skip("set CODELOOM_VIEWMEM_PROJECT to an indexed project to measure")
	}
	store, err := memory.OpenProject(root)
	if err != nil {
		t.Fatalf("open store of %s: %v", root, err)
	}
	defer store.Close()
	p, err := CodegraphOpener(context.Background(), root, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g := p.Graph()
	live := func() float64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	base := live()
	t.Logf("graph: %d nodes, %d edges; live heap %.0f MB", len(g.Nodes()), len(g.Edges()), base)
	ix := graphview.NewIndex(g)
	afterIx := live()
	t.Logf("view index: +%.0f MB", afterIx-base)
	first := viewParams{ix: ix, mode: modeOverview, expanded: map[string]bool{}, folders: map[string]bool{}}.build()
	afterView := live()
	t.Logf("overview (%d nodes, %d edges): +%.0f MB", len(first.Nodes), len(first.Edges), afterView-afterIx)
	tree := buildTree(g, "")
	afterTree := live()
	t.Logf("side tree: +%.0f MB", afterTree-afterView)
	if out := os.Getenv("CODELOOM_VIEWMEM_PROFILE"); out != "" {
		f, err := os.Create(filepath.Clean(out))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
	}
	runtime.KeepAlive(ix)
	runtime.KeepAlive(tree)
	runtime.KeepAlive(first)
}
