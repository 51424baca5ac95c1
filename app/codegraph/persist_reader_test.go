package codegraph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// readerProject is the persist fixture plus a copy of this package's own
// Go sources (hundreds of definitions, methods, interfaces, cross-file
// calls), indexed and persisted.
func readerProject(t *testing.T) (root string, g *Graph, p *Project) {
	t.Helper()
	files := persistFixture()
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			b, err := os.ReadFile(e.Name())
			if err != nil {
				t.Fatal(err)
			}
			files["cg/"+e.Name()] = string(b)
		}
	}
	root = writeTree(t, files)
	openT(t, root, Options{}).Close()
	p = openT(t, root, Options{})
	if !p.Report().FromSnapshot {
		t.Fatalf("second open did not load the persisted graph")
	}
	return root, p.Graph(), p
}

func nodeVals(ns []*Node) []Node {
	out := make([]Node, len(ns))
	for i, n := range ns {
		out[i] = *n
	}
	return out
}

func openReaderT(t *testing.T, root string) *Reader {
	t.Helper()
	r, err := OpenReader(context.Background(), root, Options{})
	if err != nil || r == nil {
		t.Fatalf("OpenReader: %v %v", r, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// Every answer a Reader gives equals the loaded Graph's.
func TestReaderMatchesGraph(t *testing.T) {
	root, g, p := readerProject(t)
	defer p.Close()
	r := openReaderT(t, root)
	if len(g.nodes) < 500 {
		t.Fatalf("fixture too small: %d nodes", len(g.nodes))
	}
	sameResolve := func(arg string) {
		t.Helper()
		want, werr := Resolve(g, arg)
		got, gerr := r.Resolve(arg)
		if errors.Is(gerr, ErrNeedsGraph) {
			t.Errorf("Resolve(%q): needs graph", arg)
			return
		}
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Errorf("Resolve(%q): error %v, want %v", arg, gerr, werr)
			return
		}
		if werr == nil && !reflect.DeepEqual(*got, *want) {
			t.Errorf("Resolve(%q) = %+v, want %+v", arg, *got, *want)
		}
	}
	checked := 0
	for i, n := range g.nodes {
		if g.byID[n.ID] != int32(i) {
			continue
		}
		checked++
		sameResolve(n.ID)
		if i%7 == 0 {
			sameResolve(n.QualName)
			sameResolve(n.Name)
		}
		for _, c := range []struct {
			name string
			want []*Node
			f    func(string) ([]*Node, error)
		}{{"RDeps", g.RDeps(n.ID), r.RDeps}, {"Deps", g.Deps(n.ID), r.Deps}} {
			got, err := c.f(n.ID)
			if err != nil || !reflect.DeepEqual(nodeVals(got), nodeVals(c.want)) {
				t.Fatalf("%s(%s): %d nodes (err %v), want %d", c.name, n.ID, len(got), err, len(c.want))
			}
		}
		out, err1 := r.Out(n.ID)
		in, err2 := r.In(n.ID)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(out, g.Out(n.ID)) || !reflect.DeepEqual(in, g.In(n.ID)) {
			t.Fatalf("Out/In(%s) differ (%v %v)", n.ID, err1, err2)
		}
		if x, ok := r.Node(n.ID); !ok || !reflect.DeepEqual(*x, *n) {
			t.Fatalf("Node(%s) differs", n.ID)
		}
	}
	for _, arg := range []string{"nope_nothing", "Graph", "Resolve", "cg/graph.go", filepath.Join(root, "cg/graph.go"), "", "  ", "Graph.Out", "app.py"} {
		sameResolve(arg)
	}
	if _, err := r.Resolve("cg/graph.go:120"); !errors.Is(err, ErrNeedsGraph) {
		t.Errorf("path:line: %v, want ErrNeedsGraph", err)
	}
	for _, q := range []string{"parse", "Graph", "resolve", "cg/graph", "codegraph.Graph.Out", "x", "zzzzqqq", "main"} {
		for _, limit := range []int{0, 3, 20} {
			want := g.Search(q, limit)
			got, err := r.Search(q, limit)
			if err != nil || len(got) != len(want) {
				t.Fatalf("Search(%q, %d): %d hits (%v), want %d", q, limit, len(got), err, len(want))
			}
			for k := range want {
				if got[k].Score != want[k].Score || !reflect.DeepEqual(*got[k].Node, *want[k].Node) {
					t.Fatalf("Search(%q, %d) hit %d: %+v, want %+v", q, limit, k, got[k], want[k])
				}
			}
		}
	}
	want := p.GlobalRank()
	got, err := r.GlobalRank(0)
	if err != nil || len(got) != len(want) {
		t.Fatalf("GlobalRank: %d (%v), want %d", len(got), err, len(want))
	}
	for k := range want {
		if got[k].Score != want[k].Score || got[k].Node.ID != want[k].Node.ID {
			t.Fatalf("GlobalRank %d: %s %v, want %s %v", k, got[k].Node.ID, got[k].Score, want[k].Node.ID, want[k].Score)
		}
	}
	if top, _ := r.GlobalRank(5); len(top) != 5 || top[0].Node.ID != want[0].Node.ID {
		t.Errorf("GlobalRank(5) = %d", len(top))
	}
	// Answers stay valid after Close (they are copies, not views of the mapping).
	res, _ := r.Search("Graph", 5)
	r.Close()
	if len(res) == 0 || res[0].Node.ID == "" || strings.ToLower(res[0].Node.Name) == "" {
		t.Errorf("answers after Close: %+v", res)
	}
	t.Logf("%d nodes checked against the graph", checked)
}

// A Reader is only returned for a persisted graph built from exactly the
// files on disk: any edit, addition, removal or .env change makes it stale.
func TestReaderStale(t *testing.T) {
	root := writeTree(t, persistFixture())
	if r, err := OpenReader(context.Background(), root, Options{}); r != nil || err != nil {
		t.Fatalf("before any index: %v %v", r, err)
	}
	openT(t, root, Options{}).Close()
	openReaderT(t, root).Close()
	steps := []struct {
		name string
		do   func()
	}{
		{"edit keeping size", func() {
			f := filepath.Join(root, "g/b.go")
			b, _ := os.ReadFile(f)
			b = []byte(strings.Replace(string(b), "return 1", "return 2", 1))
			os.WriteFile(f, b, 0o644)
			os.Chtimes(f, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
		}},
		{"add", func() { os.WriteFile(filepath.Join(root, "new.py"), []byte("def n():\n    pass\n"), 0o644) }},
		{"remove", func() { os.Remove(filepath.Join(root, "web/y.js")) }},
		{"env", func() { os.WriteFile(filepath.Join(root, ".env"), []byte("HOME=/x\n"), 0o644) }},
	}
	for _, s := range steps {
		s.do()
		if r, err := OpenReader(context.Background(), root, Options{}); r != nil || err != nil {
			t.Fatalf("%s: stale persisted graph answered (%v %v)", s.name, r, err)
		}
		p := openT(t, root, Options{}) // rebuilds and persists the new state
		fresh := openT(t, root, Options{NoCache: true}).Graph()
		p.Close()
		r := openReaderT(t, root)
		for _, n := range fresh.nodes {
			got, err := r.RDeps(n.ID)
			if err != nil || !reflect.DeepEqual(nodeVals(got), nodeVals(fresh.RDeps(n.ID))) {
				t.Fatalf("%s: RDeps(%s) after rebuild differs (%v)", s.name, n.ID, err)
			}
		}
		r.Close()
	}
}

// A damaged, cut-off or resealed-but-inconsistent file is an error (at
// open or at the query that reads the damage), never a panic and never an
// answer different from the graph's.
func TestReaderDamaged(t *testing.T) {
	root, g, p := readerProject(t)
	p.Close()
	path := SnapshotPath(root)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	target := g.nodes[len(g.nodes)/2].ID
	wantRD := nodeVals(g.RDeps(target))
	wantS := g.Search("Graph", 10)
	// exact: the damage is one a checksum catches, so no answer may differ
	// (a resealed section is accepted: it must only never panic).
	query := func(name string, exact bool) {
		t.Helper()
		defer func() {
			if x := recover(); x != nil {
				t.Fatalf("%s: panic %v", name, x)
			}
		}()
		r, err := OpenReader(context.Background(), root, Options{})
		if err != nil || r == nil {
			if err != nil && !errors.Is(err, ErrSnapshotUnreadable) {
				t.Errorf("%s: error not marked unreadable: %v", name, err)
			}
			return
		}
		defer r.Close()
		if rd, err := r.RDeps(target); exact && err == nil && !reflect.DeepEqual(nodeVals(rd), wantRD) {
			t.Errorf("%s: wrong RDeps answered", name)
		} else if err != nil && !errors.Is(err, ErrSnapshotUnreadable) {
			t.Errorf("%s: error not marked unreadable: %v", name, err)
		}
		if ms, err := r.Search("Graph", 10); exact && err == nil && (len(ms) != len(wantS) || (len(ms) > 0 && ms[0].Node.ID != wantS[0].Node.ID)) {
			t.Errorf("%s: wrong search answered", name)
		}
		r.GlobalRank(3)
		r.Resolve("Graph")
		r.Out(target)
	}
	cases := map[string][]byte{
		"empty":     {},
		"garbage":   []byte(strings.Repeat("not a graph ", 100)),
		"truncated": data[:len(data)/2],
		"cut end":   data[:len(data)-1],
	}
	for i := 0; i < len(data); i += max(1, len(data)/61) {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x5a
		cases[fmt.Sprintf("flip %d", i)] = bad
	}
	for id := 2; id <= numSections; id++ {
		for _, fill := range []byte{0, 0xff, 0x7f} {
			cases[fmt.Sprintf("reseal %d %#x", id, fill)] = resealSection(t, data, id, fill)
		}
	}
	for name, bad := range cases {
		// Same size and mtime as the good file, so the header still matches.
		st, _ := os.Stat(path)
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, st.ModTime(), st.ModTime())
		query(name, !strings.HasPrefix(name, "reseal"))
	}
	// Cut while mapped: the reads fault, which is an error, not a crash.
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := openReaderT(t, root)
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RDeps(target); err == nil {
		t.Errorf("file cut under the mapping: no error")
	}
}

// A query beside a process rewriting the persisted graph (temp file, sync,
// rename) reads either the old or the new file, never a mix.
func TestReaderBesideWriter(t *testing.T) {
	root, g, p := readerProject(t)
	defer p.Close()
	good, err := os.ReadFile(SnapshotPath(root))
	if err != nil {
		t.Fatal(err)
	}
	// A second valid file for another state of the project: stale here.
	p.mu.Lock()
	h := p.headerLocked()
	p.mu.Unlock()
	h.stamps = append([]fileStamp(nil), h.stamps...)
	h.stamps[0].size++
	other, err := encodeSnapshot(h, g, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	target := g.nodes[len(g.nodes)/3].ID
	want := nodeVals(g.RDeps(target))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				writeFileAtomic(SnapshotPath(root), good, nil)
				return
			default:
			}
			data := good
			if i%2 == 1 {
				data = other
			}
			if err := writeFileAtomic(SnapshotPath(root), data, nil); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	answered, stale := 0, 0
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		r, err := OpenReader(context.Background(), root, Options{})
		if err != nil {
			t.Fatalf("reader beside writer: %v", err)
		}
		if r == nil {
			stale++
			continue
		}
		got, err := r.RDeps(target)
		r.Close()
		if err != nil || !reflect.DeepEqual(nodeVals(got), want) {
			t.Fatalf("reader beside writer: wrong answer (%v)", err)
		}
		answered++
	}
	close(stop)
	wg.Wait()
	if answered == 0 {
		t.Errorf("never answered (%d stale)", stale)
	}
	t.Logf("%d answered, %d stale while the file was rewritten", answered, stale)
}
