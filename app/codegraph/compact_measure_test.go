package codegraph

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"testing"
	"time"
)

// TestMeasureCorpus indexes $CODELOOM_MEASURE_DIR cold (no cache) and
// reports the live heap of what the project keeps after a full GC. It is a
// measurement, not a check, and is skipped unless the variable is set; run it
// from a test binary under /usr/bin/time -v to get the process's peak RSS:
//
//	go test -c -o /tmp/cg.test ./app/codegraph/
//	CODELOOM_MEASURE_DIR=/tmp/corpus /usr/bin/time -v /tmp/cg.test -test.run TestMeasureCorpus -test.v
//
// $CODELOOM_MEASURE_DUMP names a file that receives every node (all exported
// fields) and every edge, one a line, sorted: two builds produced the same
// graph when their dumps are equal. $CODELOOM_MEASURE_HEAP names a file for a
// heap profile taken with the graph alive. $CODELOOM_MEASURE_NOUPDATES=1
// opens the project as the CLI does (Options.NoUpdates: the last build drops
// its tables before assembling, and the records and builder are released).
func TestMeasureCorpus(t *testing.T) {
	dir := os.Getenv("CODELOOM_MEASURE_DIR")
	if dir == "" {
		t.Skip("CODELOOM_MEASURE_DIR not set")
	}
	p, err := Open(context.Background(), dir, Options{NoCache: true, NoUpdates: os.Getenv("CODELOOM_MEASURE_NOUPDATES") != ""})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	g := p.Graph()
	st := g.Stats()
	t.Logf("files %d nodes %d edges %d resolved %d external %d unresolved %d",
		st.Files, st.Nodes, st.Edges, st.Resolved, st.External, st.Unresolved)
	t.Logf("live heap after GC (project kept: files, builder, graph): %.1f MB; total alloc %.1f MB; GC cycles %d",
		float64(ms.HeapAlloc)/1e6, float64(ms.TotalAlloc)/1e6, ms.NumGC)
	// What an app keeps once it walks the graph: the Out/In index too.
	if len(g.Nodes()) > 0 {
		g.Out(g.Nodes()[0].ID)
	}
	runtime.GC()
	var ms2 runtime.MemStats
	runtime.ReadMemStats(&ms2)
	t.Logf("live heap with the Out/In index built: %.1f MB (index %.1f MB)",
		float64(ms2.HeapAlloc)/1e6, (float64(ms2.HeapAlloc)-float64(ms.HeapAlloc))/1e6)
	var refLen, defLen, nSeen int
	for _, fd := range p.files {
		refLen += fd.Refs.Len()
		defLen += len(fd.Defs)
	}
	var fbs map[string]*fileBuild
	if p.b != nil { // nil after NoUpdates
		fbs = p.b.fbs
	}
	for _, fb := range fbs {
		for _, r := range []*fileResult{fb.inh, fb.res} {
			if r != nil {
				nSeen += len(r.seen)
			}
		}
	}
	t.Logf("refs %d, defs %d, per-file seen entries %d, lines %d", refLen, defLen, nSeen, st.Lines)
	if hp := os.Getenv("CODELOOM_MEASURE_HEAP"); hp != "" {
		f, err := os.Create(hp)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if os.Getenv("CODELOOM_MEASURE_DIGEST") != "" {
		set, ordered := graphDigest(g)
		t.Logf("digest: set %016x ordered %016x", set, ordered)
	}
	if dp := os.Getenv("CODELOOM_MEASURE_DUMP"); dp != "" {
		if err := dumpGraph(g, dp); err != nil {
			t.Fatal(err)
		}
	}
	if os.Getenv("CODELOOM_MEASURE_PHASES") != "" {
		// The build step alone: drop the builder and graph, keep the parsed
		// files, build again while sampling the live heap.
		p.b = nil
		p.graph.Store(nil)
		g, st = nil, Stats{}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		t.Logf("parsed files only (input of the build step): %.1f MB live", float64(ms.HeapAlloc)/1e6)
		stop := make(chan struct{})
		done := make(chan uint64)
		go func() {
			var peak uint64
			var m runtime.MemStats
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					done <- peak
					return
				case <-tick.C:
					runtime.ReadMemStats(&m)
					peak = max(peak, m.HeapAlloc)
				}
			}
		}()
		start := time.Now()
		p.mu.Lock()
		g, err := p.buildLocked()
		if err != nil {
			t.Fatal(err)
		}
		p.graph.Store(g)
		p.mu.Unlock()
		close(stop)
		peak := <-done
		runtime.GC()
		runtime.ReadMemStats(&ms)
		t.Logf("build step: %v, sampled peak heap (live+garbage) %.1f MB, live after GC %.1f MB",
			time.Since(start).Round(time.Millisecond), float64(peak)/1e6, float64(ms.HeapAlloc)/1e6)
	}
	runtime.KeepAlive(p)
}

// dumpGraph writes every node and edge of g, one a line, sorted.
func dumpGraph(g *Graph, path string) error {
	var lines []string
	for _, n := range g.Nodes() {
		lines = append(lines, fmt.Sprintf("N %s|%s|%s|%s|%s|%s|%d|%d|%d|%d|%q|%q|%s|%s|%s",
			n.ID, n.Kind, n.Name, n.QualName, n.Path, n.Language, n.StartLine, n.EndLine,
			n.StartByte, n.EndByte, n.Signature, n.Doc, n.Hash, n.Parent, n.PathB64))
	}
	for _, e := range g.Edges() {
		lines = append(lines, fmt.Sprintf("E %s|%s|%s|%d", e.From, e.To, e.Kind, e.Line))
	}
	sort.Strings(lines)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		w.WriteString(l)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("dump %s: %w", path, err)
	}
	return f.Close()
}

// graphDigest hashes every node (all exported fields) and edge of g: set is
// the sum of the lines' hashes (equal for the same multiset in any order),
// ordered chains them in the order Nodes and Edges list them.
func graphDigest(g *Graph) (set, ordered uint64) {
	var buf []byte
	add := func() {
		h := fnv.New64a()
		h.Write(buf)
		v := h.Sum64()
		set += v
		ordered = ordered*1099511628211 ^ v
	}
	for _, n := range g.Nodes() {
		buf = fmt.Appendf(buf[:0], "N %s|%s|%s|%s|%s|%s|%d|%d|%d|%d|%q|%q|%s|%s|%s",
			n.ID, n.Kind, n.Name, n.QualName, n.Path, n.Language, n.StartLine, n.EndLine,
			n.StartByte, n.EndByte, n.Signature, n.Doc, n.Hash, n.Parent, n.PathB64)
		add()
	}
	for _, e := range g.Edges() {
		buf = fmt.Appendf(buf[:0], "E %s|%s|%s|%d", e.From, e.To, e.Kind, e.Line)
		add()
	}
	return set, ordered
}
