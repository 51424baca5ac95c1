package codegraph

import (
	"context"
	"os"
	"testing"
)

// BenchmarkRebuild builds the graph of $CODEGRAPH_BENCH_DIR again from its
// parsed files with a fresh builder each time: the builder's part of a cold
// index (tables, scopes, resolution, assembly) without parsing, for profiles.
func BenchmarkRebuild(b *testing.B) {
	dir := os.Getenv("CODEGRAPH_BENCH_DIR")
	if dir == "" {
		b.Skip("CODEGRAPH_BENCH_DIR not set")
	}
	p, err := Open(context.Background(), dir, Options{NoCache: true})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	b.Logf("files %d", len(p.files))
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nb := newBuilder(p.root, p.byName)
		g, err := nb.build(p.files, p.info, map[string]string{})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.Logf("nodes %d", len(g.Nodes()))
		}
		if len(g.Nodes()) == 0 {
			b.Fatal("empty graph")
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}
