package codegraph

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
)

// benchDir is the corpus: $CODEGRAPH_BENCH_DIR or the Python standard library.
func benchDir(b *testing.B) string {
	d := os.Getenv("CODEGRAPH_BENCH_DIR")
	if d == "" {
		d = "/usr/lib/python3.11"
	}
	if _, err := os.Stat(d); err != nil {
		b.Skipf("corpus %s not available: %v", d, err)
	}
	return d
}

// BenchmarkIndexCold is a full index without cache: walk, parse, query,
// resolve, build.
func BenchmarkIndexCold(b *testing.B) {
	dir := benchDir(b)
	var bytes int64
	for i := 0; i < b.N; i++ {
		p, err := Open(context.Background(), dir, Options{NoCache: true})
		if err != nil {
			b.Fatal(err)
		}
		bytes = p.Graph().Stats().Bytes
		p.Close()
	}
	b.SetBytes(bytes)
}

// BenchmarkBareParse parses the same files with tree-sitter and nothing else,
// with the same number of workers: the floor a full index is compared with.
func BenchmarkBareParse(b *testing.B) {
	dir := benchDir(b)
	langs := registry()
	wr, err := walk(context.Background(), dir, DefaultMaxFileSize, langByExt(langs))
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, f := range wr.files {
		total += f.size
	}
	b.SetBytes(total)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bareParse(b, dir, wr.files, runtime.NumCPU())
	}
}

func bareParse(b *testing.B, dir string, files []walkFile, workers int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parsers := map[*language]*sitter.Parser{}
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					break
				}
				f := files[i]
				if f.lang == nil {
					continue
				}
				src, err := os.ReadFile(filepath.Join(dir, f.rel))
				if err != nil {
					continue
				}
				p := parsers[f.lang]
				if p == nil {
					p = sitter.NewParser()
					p.SetLanguage(f.lang.grammar())
					parsers[f.lang] = p
				}
				tree, err := p.ParseCtx(context.Background(), nil, src)
				if err != nil {
					b.Error(err)
					return
				}
				tree.Close()
			}
			for _, p := range parsers {
				p.Close()
			}
		}()
	}
	wg.Wait()
}

// copyCorpus copies the corpus to a temp dir so a cache can be written.
func copyCorpus(b *testing.B, dir string) string {
	dst := b.TempDir()
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
	return dst
}

// BenchmarkReopen re-opens an unchanged, already cached project.
func BenchmarkReopen(b *testing.B) {
	dir := copyCorpus(b, benchDir(b))
	p, err := Open(context.Background(), dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	p.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := Open(context.Background(), dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if r := p.Report(); r.Parsed != 0 {
			b.Fatalf("reopen parsed %d files", r.Parsed)
		}
		p.Close()
	}
}

// benchUpdate applies one changed file to an open project, alternating
// between two versions produced by edit. With fresh set, the file's kept
// syntax tree is dropped before each update, so every update is a full parse
// of the file (the first edit of a file); otherwise updates after the first
// parse incrementally from the previous tree (repeated edits of one file).
func benchUpdate(b *testing.B, fresh bool, edit func(orig []byte, i int) []byte) {
	dir := copyCorpus(b, benchDir(b))
	p, err := Open(context.Background(), dir, Options{NoCache: true})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	target := filepath.Join(dir, "argparse.py")
	orig, err := os.ReadFile(target)
	if err != nil {
		b.Skip("no argparse.py in corpus")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := os.WriteFile(target, edit(orig, i), 0o644); err != nil {
			b.Fatal(err)
		}
		if fresh {
			p.dropTrees()
		}
		b.StartTimer()
		if _, err := p.UpdateFiles(context.Background(), []string{target}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateOneFileBody edits inside a function body (the common edit):
// only that file is parsed and its references resolved again.
func BenchmarkUpdateOneFileBody(b *testing.B) {
	benchUpdate(b, false, bodyEdit)
}

// BenchmarkUpdateOneFileBodyFirst is the same edit with no kept tree: the
// file is parsed from scratch each time.
func BenchmarkUpdateOneFileBodyFirst(b *testing.B) {
	benchUpdate(b, true, bodyEdit)
}

func bodyEdit(orig []byte, i int) []byte {
	if i%2 == 0 {
		return bytes.Replace(orig, []byte("_('usage: ')"), []byte("_('Usage: ')"), 1)
	}
	return orig
}

// BenchmarkUpdateOneFileNewDef adds a definition: the file's interface
// changes, so every file's references are resolved again (no re-parse).
func BenchmarkUpdateOneFileNewDef(b *testing.B) {
	benchUpdate(b, false, func(orig []byte, i int) []byte {
		return append(append([]byte(nil), orig...), fmt.Sprintf("\ndef _bench_added_%d():\n    return len([])\n", i)...)
	})
}

// BenchmarkQueries times the graph queries on the corpus graph.
func BenchmarkQueries(b *testing.B) {
	p, err := Open(context.Background(), benchDir(b), Options{NoCache: true})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	g := p.Graph()
	target, err := Resolve(g, "argparse.ArgumentParser.parse_args")
	if err != nil {
		b.Skip(err)
	}
	g.index()
	b.Run("Rank", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			g.Rank(nil)
		}
	})
	b.Run("RankFocus", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			g.Rank([]string{target.ID})
		}
	})
	b.Run("Search", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			g.Search("prsargs", 20)
		}
	})
	b.Run("Deps", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			g.Deps(target.ID)
		}
	})
	b.Run("RDeps", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			g.RDeps(target.ID)
		}
	})
	b.Run("Slice", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := g.Slice(target.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSearch times fuzzy search as the search box calls it (a short
// limit) and as the CLI does (every match), for a common short query and a
// rarer one. $CODEGRAPH_BENCH_DIR is opened with its cache (use a copy);
// the default corpus is indexed without one.
func BenchmarkSearch(b *testing.B) {
	dir := benchDir(b)
	p, err := Open(context.Background(), dir, Options{NoCache: os.Getenv("CODEGRAPH_BENCH_DIR") == "", NoUpdates: true})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	g := p.Graph()
	for _, q := range []string{"get", "Popen", "parse_args"} {
		for _, limit := range []int{8, 0} {
			b.Run(fmt.Sprintf("%s/limit=%d", q, limit), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if len(g.Search(q, limit)) == 0 {
						b.Fatalf("no match for %q", q)
					}
				}
			})
		}
	}
}
