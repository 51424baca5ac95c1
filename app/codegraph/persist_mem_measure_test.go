package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"codeloom/app/memory"
)

// TestMeasureIndexPhases indexes $CODELOOM_MEASURE_WRITE_DIR cold as the
// CLI does (per-file cache and persisted graph written) and reports the
// peak Go heap (live + garbage, sampled every 2 ms) of each phase: parse
// and cache, build, encoding and writing (all but the ranks), PageRank,
// the rest of the write. A measurement, not a check; skipped unless the
// variable is set. The project's .codeloom is
// removed first. CODELOOM_MEASURE_NOUPDATES=1 opens it as the CLI does
// (Options.NoUpdates).
//
//	go test -c -o /tmp/cg.test ./app/codegraph/
//	CODELOOM_MEASURE_WRITE_DIR=/tmp/corpus /usr/bin/time -v /tmp/cg.test -test.run TestMeasureIndexPhases -test.v
func TestMeasureIndexPhases(t *testing.T) {
	dir := os.Getenv("CODELOOM_MEASURE_WRITE_DIR")
	if dir == "" {
		t.Skip("CODELOOM_MEASURE_WRITE_DIR not set")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(memory.DataDir(abs)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	phase, peak := "parse+cache", uint64(0)
	start := time.Now()
	var order []string
	peaks := map[string]uint64{}
	took := map[string]time.Duration{}
	mark := func(next string) {
		mu.Lock()
		defer mu.Unlock()
		peaks[phase], took[phase] = peak, time.Since(start)
		order = append(order, phase)
		phase, peak, start = next, 0, time.Now()
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			mu.Lock() // a sample belongs to the phase it was read in
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			mu.Unlock()
		}
	}()
	next := map[string]string{"cache-saved": "build", "snapshot-start": "encode+write", "snapshot-ranking": "rank", "snapshot-ranked": "write ranks+directory+sync", "snapshot-renamed": "after"}
	hook := func(stage string) {
		if n, ok := next[stage]; ok {
			mark(n)
		}
	}
	// CODELOOM_MEASURE_NOUPDATES=1: as the CLI opens it (Options.NoUpdates).
	p, err := Open(context.Background(), abs, Options{testHook: hook, NoUpdates: os.Getenv("CODELOOM_MEASURE_NOUPDATES") != ""})
	if err != nil {
		t.Fatal(err)
	}
	mark("end")
	close(stop)
	<-done
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, ph := range order {
		t.Logf("%-12s peak heap %7.1f MB  %v", ph, float64(peaks[ph])/1e6, took[ph].Round(time.Millisecond))
	}
	t.Logf("live heap after GC, project open: %.1f MB", float64(ms.HeapAlloc)/1e6)
	g := p.Graph()
	p.Close()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("live heap after GC, graph only: %.1f MB (%d nodes)", float64(ms.HeapAlloc)/1e6, len(g.nodes))
	runtime.KeepAlive(g)
}
