package codegraph

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// BenchmarkExtractCorpus extracts every Python file under
// $CODELOOM_MEASURE_DIR once per iteration (parse, query and the Go side
// of extraction, one worker): profile it with -cpuprofile to see where
// extraction's CPU goes (BENCHMARKS.md, cost5).
func BenchmarkExtractCorpus(b *testing.B) {
	dir := os.Getenv("CODELOOM_MEASURE_DIR")
	if dir == "" {
		b.Skip("CODELOOM_MEASURE_DIR not set")
	}
	l := newPython()
	var srcs [][]byte
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".codeloom" {
			return filepath.SkipDir
		}
		if !d.IsDir() && filepath.Ext(p) == ".py" {
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			srcs = append(srcs, src)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	sort.Slice(srcs, func(i, j int) bool { return len(srcs[i]) < len(srcs[j]) })
	e, err := newExtractor(l)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, src := range srcs {
			fd := &fileData{Path: "x.py", Lang: l.name}
			if err := e.extract(context.Background(), src, fd, nil, true); err != nil {
				b.Fatal(err)
			}
		}
	}
}
