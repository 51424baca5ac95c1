package retrieval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"codeloom/app/codegraph"
	"codeloom/models"
)

func randomVectors(n, dim int) *Vectors {
	r := rand.New(rand.NewPCG(1, 2))
	v := NewVectors(dim)
	vec := make([]float32, dim)
	for i := 0; i < n; i++ {
		for d := range vec {
			vec[d] = float32(r.NormFloat64())
		}
		models.Normalize(vec)
		v.Add(fmt.Sprint(i), vec)
	}
	return v
}

// BenchmarkVectorsSearch: exact top-10 over 100k unit vectors (target < 20 ms).
func BenchmarkVectorsSearch(b *testing.B) {
	for _, dim := range []int{384, 768} {
		b.Run(fmt.Sprintf("n=100k/dim=%d", dim), func(b *testing.B) {
			v := randomVectors(100_000, dim)
			q := randomVectors(1, dim).data
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if len(v.Search(q, 10)) != 10 {
					b.Fatal("short result")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/search")
		})
	}
}

// BenchmarkLexical indexes and searches a large Python tree (the standard
// library when present, else the sample project).
func BenchmarkLexical(b *testing.B) {
	root := "/usr/lib/python3.11"
	if _, err := os.Stat(root); err != nil {
		b.Skip("no /usr/lib/python3.11")
	}
	p, err := codegraph.Open(context.Background(), root, codegraph.Options{NoCache: true})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	g := p.Graph()
	b.Run("build", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			New(g)
		}
		b.ReportMetric(float64(len(g.Nodes())), "nodes")
	})
	ix := New(g)
	b.Run("search", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := ix.Search(context.Background(), "parse an HTTP request header", nil, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("context", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := ix.Context(context.Background(), "parse an HTTP request header", ContextOptions{Budget: 2048}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
