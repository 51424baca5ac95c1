package ui

import (
	"context"
	"os"
	"testing"

	"codeloom/app/codegraph"
)

// BenchmarkSuggest times the search box's suggestions (cgGraph.Search) on
// the graph of a real project: $CODELOOM_BENCH_DIR (a copy: its cache is
// used and written), else /usr/lib/python3.11 indexed without a cache
// (skipped when neither exists).
func BenchmarkSuggest(b *testing.B) {
	dir, noCache := os.Getenv("CODELOOM_BENCH_DIR"), false
	if dir == "" {
		dir, noCache = "/usr/lib/python3.11", true
	}
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("no corpus: %v", err)
	}
	p, err := codegraph.Open(context.Background(), dir, codegraph.Options{NoCache: noCache, NoUpdates: true})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	g := cgGraph{p.Graph()}
	for _, q := range []string{"Popen", "get", "storjson", "parse_args"} {
		b.Run(q, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(g.Search(q, maxSuggestions)) == 0 && q != "storjson" {
					b.Fatalf("no suggestion for %q", q)
				}
			}
		})
	}
}
