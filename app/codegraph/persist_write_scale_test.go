package codegraph

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestSnapshotEncodeScale measures what a rewrite of the persisted graph
// costs on a big corpus (a COPY, as TestUpdateScale): global PageRank and
// the encoding, each timed over CODELOOM_SNAP_ROUNDS rounds (3) on the
// graph loaded from the persisted one. With CODELOOM_SNAP_OUT set, the
// encoded file is written there, to compare two builds' bytes (the same
// graph and ranks must give the same file). Skipped unless
// CODELOOM_SCALE_CORPUS names the folder (BENCHMARKS.md, snapwrite).
func TestSnapshotEncodeScale(t *testing.T) {
	root := scaleCorpus(t)
	ctx := context.Background()
	p, err := Open(ctx, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g := p.Graph()
	p.mu.Lock()
	h := p.headerLocked()
	p.mu.Unlock()
	logf := func(what string, wall, c time.Duration) {
		t.Logf("%-40s wall %8.1f ms  CPU %8.1f ms", what, float64(wall)/1e6, float64(c)/1e6)
	}
	rounds := 3
	if v := os.Getenv("CODELOOM_SNAP_ROUNDS"); v != "" {
		if n, err := time.ParseDuration(v + "ns"); err == nil && n > 0 {
			rounds = int(n)
		}
	}
	defer cpuProfileFromEnv(t, "CODELOOM_SNAP_PROF")()
	var ranks []float64
	for r := 0; r < rounds; r++ {
		w, c := time.Now(), processCPU()
		ranks = globalRanks(g)
		logf("global PageRank", time.Since(w), processCPU()-c)
		w, c = time.Now(), processCPU()
		// As the writer does, into a file that keeps nothing.
		sink := newSnapSink(discardFile{}, nil)
		if err := encodeSnapshotTo(sink, h, g, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := writeRanks(sink, ranks, len(g.nodes), nil); err != nil {
			t.Fatal(err)
		}
		if err := sink.finish(); err != nil {
			t.Fatal(err)
		}
		logf("encode and checksum, as written", time.Since(w), processCPU()-c)
	}
	if out := os.Getenv("CODELOOM_SNAP_OUT"); out != "" {
		data, err := encodeSnapshot(h, g, nil, ranks)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// discardFile is a snapFileW that keeps nothing.
type discardFile struct{}

func (discardFile) Write(p []byte) (int, error)            { return len(p), nil }
func (discardFile) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }
