package codegraph

import (
	"context"
	"os"
	"runtime"
	"sort"
	"testing"
	"time"

	"codeloom/app/memory"
)

// TestPersistScale measures the persisted graph on a big corpus (a COPY: it
// writes .codeloom/ into it). It is skipped unless CODELOOM_SCALE_CORPUS
// names the folder; figures go to the test log (BENCHMARKS.md, persist
// section). It compares the two layouts considered — one flat snapshot
// file against per-file fragments in a bbolt bucket — and times the update
// path: the first update after a load (which builds the incremental
// builder), later one-file edits, and the background rewrite.
func TestPersistScale(t *testing.T) {
	root := scaleCorpus(t)
	ctx := context.Background()
	cpu := processCPU
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	type mark struct {
		wall, cpu time.Duration
	}
	since := func(w time.Time, c time.Duration) mark { return mark{time.Since(w), cpu() - c} }
	logf := func(what string, m mark, extra string) {
		t.Logf("%-44s wall %8.1f ms  CPU %8.1f ms  %s", what, float64(m.wall)/1e6, float64(m.cpu)/1e6, extra)
	}

	// Make sure a persisted graph exists (cold index if needed).
	w, c := time.Now(), cpu()
	p, err := Open(ctx, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	logf("open (load if persisted, else cold index)", since(w, c), "from snapshot: "+boolStr(p.Report().FromSnapshot))
	g := p.Graph()
	p.Close()
	t.Logf("graph: %d nodes, %d edges", len(g.nodes), len(g.edges))

	// A: flat file.
	data, err := os.ReadFile(SnapshotPath(root))
	if err != nil {
		t.Fatal(err)
	}
	h0 := heap()
	w, c = time.Now(), cpu()
	p2, err := Open(ctx, root, Options{})
	if err != nil || !p2.Report().FromSnapshot {
		t.Fatalf("reopen: %v %+v", err, p2.Report())
	}
	logf("A flat file: Open (walk + read + decode)", since(w, c), "")
	ga := p2.Graph()
	t.Logf("A flat file: %.1f MB on disk, heap after load +%.1f MB", float64(len(data))/1e6, float64(heap()-h0)/1e6)
	w, c = time.Now(), cpu()
	wr, err := walk(ctx, root, DefaultMaxFileSize, p2.byExt)
	if err != nil {
		t.Fatal(err)
	}
	logf("  of which the walk (stat of every file)", since(w, c), "")
	_ = wr
	w, c = time.Now(), cpu()
	if _, err := encodeSnapshot(p2.headerLocked(), ga, nil, nil); err != nil {
		t.Fatal(err)
	}
	logf("A flat file: encode (no ranks)", since(w, c), "")
	w, c = time.Now(), cpu()
	globalRanks(ga)
	logf("global PageRank (Graph.Rank)", since(w, c), "")

	// B: per-file fragments in a bbolt bucket.
	frags := fragments(ga)
	enc := make(map[string][]byte, len(frags))
	w, c = time.Now(), cpu()
	for k, fg := range frags {
		b, err := encodeSnapshot(&snapHeader{}, fg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		enc[k] = b
	}
	logf("B fragments: encode", since(w, c), "")
	st, err := memory.OpenProject(root)
	if err != nil {
		t.Fatal(err)
	}
	w, c = time.Now(), cpu()
	if err := st.PutBlobs("bench.fragments", enc, nil); err != nil {
		t.Fatal(err)
	}
	logf("B fragments: write (one bbolt transaction)", since(w, c), "")
	st.Close()
	h0 = heap()
	w, c = time.Now(), cpu()
	st, err = memory.OpenProjectReader(root)
	if err != nil {
		t.Fatal(err)
	}
	merged := &Graph{root: root, byID: map[string]int32{}}
	var size int
	err = st.ForEachBlob("bench.fragments", func(k string, v []byte) error {
		size += len(v)
		v = append([]byte(nil), v...) // bbolt's memory is only valid in the transaction
		secs, err := parseSnapshot(v)
		if err != nil {
			return err
		}
		s, err := decodeSnapshot(root, secs)
		if err != nil {
			return err
		}
		for _, n := range s.graph.nodes {
			merged.byID[n.ID] = int32(len(merged.nodes))
			merged.nodes = append(merged.nodes, n)
		}
		merged.edges = append(merged.edges, s.graph.edges...)
		return nil
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	logf("B fragments: open store + read + decode + merge", since(w, c), "")
	t.Logf("B fragments: %d fragments, %.1f MB of values, heap after load +%.1f MB; merged %d nodes %d edges",
		len(enc), float64(size)/1e6, float64(heap()-h0)/1e6, len(merged.nodes), len(merged.edges))
	if st, err := memory.OpenProject(root); err == nil {
		st.DeleteBucket("bench.fragments")
		st.Close()
	}

	// Updates after a load: the first builds the builder, then one-file edits.
	target, full, orig := scaleTarget(t, root, "argparse.py", "json/decoder.py", "fmt/print.go")
	if target == "" {
		t.Log("no known file to edit; update figures skipped")
		p2.Close()
		return
	}
	edit := func(i int) {
		os.WriteFile(full, commentEdited(orig, target, i), 0o644)
	}
	edit(0)
	w, c = time.Now(), cpu()
	if _, err := p2.UpdateFiles(ctx, []string{full}); err != nil {
		t.Fatal(err)
	}
	logf("first update after a load (builds the builder)", since(w, c), "")
	var walls []time.Duration
	var cpus []time.Duration
	for i := 1; i <= 9; i++ {
		edit(i)
		w, c = time.Now(), cpu()
		if _, err := p2.UpdateFiles(ctx, []string{full}); err != nil {
			t.Fatal(err)
		}
		m := since(w, c)
		walls = append(walls, m.wall)
		cpus = append(cpus, m.cpu)
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
	logf("one-file edit "+target+" (median of 9)", mark{walls[4], cpus[4]}, "")
	p2.mu.Lock()
	j := p2.snapJobLocked()
	p2.mu.Unlock()
	w, c = time.Now(), cpu()
	if err := p2.writeSnapshot(j); err != nil {
		t.Fatal(err)
	}
	logf("background rewrite of the persisted graph", since(w, c), "(ranks + encode + write + fsync + rename)")
	os.WriteFile(full, orig, 0o644)
	if _, err := p2.UpdateFiles(ctx, []string{full}); err != nil {
		t.Fatal(err)
	}
	p2.Close()
}

func boolStr(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// fragments splits a graph into per-file sub-graphs (nodes of the file,
// edges leaving them), as layout B would store them.
func fragments(g *Graph) map[string]*Graph {
	out := map[string]*Graph{}
	owner := make(map[string]string, len(g.nodes))
	for _, n := range g.nodes {
		k := n.Path
		if k == "" {
			k = "\x00packages"
		}
		owner[n.ID] = k
		fg := out[k]
		if fg == nil {
			fg = &Graph{}
			out[k] = fg
		}
		fg.nodes = append(fg.nodes, n)
	}
	for _, e := range g.Edges() {
		k := owner[e.From]
		if fg := out[k]; fg != nil {
			fg.edges = append(fg.edges, e)
		}
	}
	return out
}

// BenchmarkPersistOpen opens an unchanged project from its persisted graph
// (CODELOOM_SCALE_CORPUS, a copy that has been indexed once).
func BenchmarkPersistOpen(b *testing.B) {
	root := os.Getenv("CODELOOM_SCALE_CORPUS")
	if root == "" {
		b.Skip("set CODELOOM_SCALE_CORPUS to an indexed copy of a corpus")
	}
	for i := 0; i < b.N; i++ {
		p, err := Open(context.Background(), root, Options{})
		if err != nil || !p.Report().FromSnapshot {
			b.Fatalf("open: %v %+v", err, p.Report().CacheErr)
		}
		p.Close()
	}
}
