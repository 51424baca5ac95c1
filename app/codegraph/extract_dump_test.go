package codegraph

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// TestDumpExtraction writes what extraction yields for every source file
// under $CODELOOM_MEASURE_DIR (definitions, the references kept, imports,
// environment reads, globals) to the file $CODELOOM_EXTRACT_DUMP, one file
// after another in path order. Two builds extracted the same when their dumps
// are equal: a rewrite of a language's query that should not change what it
// finds is checked this way (see BENCHMARKS.md, tscost).
func TestDumpExtraction(t *testing.T) {
	dir, out := os.Getenv("CODELOOM_MEASURE_DIR"), os.Getenv("CODELOOM_EXTRACT_DUMP")
	if dir == "" || out == "" {
		t.Skip("CODELOOM_MEASURE_DIR or CODELOOM_EXTRACT_DUMP not set")
	}
	byExt := langByExt(registry())
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".codeloom" {
			return filepath.SkipDir
		}
		if !d.IsDir() && byExt[filepath.Ext(p)] != nil {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	exs := map[*language]*extractor{}
	defer func() {
		for _, e := range exs {
			e.Close()
		}
	}()
	nrefs := 0
	for _, p := range paths {
		l := byExt[filepath.Ext(p)]
		e := exs[l]
		if e == nil {
			if e, err = newExtractor(l); err != nil {
				t.Fatal(err)
			}
			exs[l] = e
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		fd := &fileData{Path: filepath.ToSlash(rel), Lang: l.name}
		if err := e.extract(context.Background(), src, fd, nil, false); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "file %s lines %d syntax %v badutf8 %v caveat %q default %q\n", fd.Path, fd.Lines, fd.Syntax, fd.BadUTF8, fd.Caveat, fd.Default)
		for _, d := range fd.Defs {
			fmt.Fprintf(w, "def %+v\n", d)
		}
		for _, r := range fd.Refs.Unpack() {
			fmt.Fprintf(w, "ref %+v\n", r)
		}
		nrefs += fd.Refs.Len()
		for _, im := range fd.Imports {
			fmt.Fprintf(w, "import %+v\n", im)
		}
		for _, ev := range fd.Env {
			fmt.Fprintf(w, "env %+v\n", ev)
		}
		for _, g := range fd.Globals {
			fmt.Fprintf(w, "global %+v\n", g)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files, %d references kept", len(paths), nrefs)
}
