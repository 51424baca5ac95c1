package codegraph

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// persistFixture mixes languages, globals, .env reads, imports and Go types
// whose children come from several files.
func persistFixture() map[string]string {
	files := map[string]string{}
	for k, v := range pyFixture {
		files[k] = v
	}
	files["pkg/consts.py"] = "LIMIT = 10\nNAME = 'x'\n\ndef use():\n    return LIMIT\n"
	files["go.mod"] = "module example.com/m\n\ngo 1.22\n"
	files["g/a.go"] = "package g\n\nimport \"fmt\"\n\ntype T struct{}\n\nfunc (t *T) A() { fmt.Println(t.B()) }\n"
	files["g/b.go"] = "package g\n\nfunc (t *T) B() int { return 1 }\n\ntype I interface{ B() int }\n\nfunc Use(i I) int { return i.B() }\n"
	files["web/x.js"] = "import { y } from './y.js';\nexport function x() { return y(); }\n"
	files["web/y.js"] = "export function y() { return process.env.HOME; }\n"
	return files
}

// graphsEqual compares every part of two graphs that queries read.
func graphsEqual(t *testing.T, what string, a, b *Graph) {
	t.Helper()
	nodeVals := func(ns []*Node) []Node {
		out := make([]Node, len(ns))
		for i, n := range ns {
			out[i] = *n
		}
		return out
	}
	if !reflect.DeepEqual(nodeVals(a.nodes), nodeVals(b.nodes)) {
		t.Errorf("%s: node lists differ (%d vs %d nodes)", what, len(a.nodes), len(b.nodes))
	}
	sameEdgeStore(t, what, a, b)    // update_overlay_test.go; does not compact either graph
	a, b = flatCopy(a), flatCopy(b) // an update's lookup maps as plain maps (the graphs are not changed)
	listVals := func(m map[string][]*Node) map[string][]Node {
		out := map[string][]Node{}
		for k, v := range m {
			out[k] = nodeVals(v)
		}
		return out
	}
	if !reflect.DeepEqual(listVals(a.children), listVals(b.children)) {
		t.Errorf("%s: children differ", what)
	}
	if !reflect.DeepEqual(listVals(a.byFile), listVals(b.byFile)) {
		t.Errorf("%s: byFile differs", what)
	}
	fn := func(g *Graph) map[string]Node {
		out := map[string]Node{}
		for k, v := range g.fileNode {
			out[k] = *v
		}
		return out
	}
	ids := func(g *Graph) []string {
		return sortedKeys(g.byID)
	}
	if !reflect.DeepEqual(ids(a), ids(b)) {
		t.Errorf("%s: byID differs", what)
	}
	if !reflect.DeepEqual(fn(a), fn(b)) {
		t.Errorf("%s: fileNode differs", what)
	}
	for _, c := range []struct {
		name string
		x, y any
	}{
		{"envNames", a.envNames, b.envNames}, {"envVals", a.envVals, b.envVals},
		{"imports", a.imports, b.imports}, {"globals", a.globals, b.globals}, {"stats", a.stats, b.stats},
	} {
		if !reflect.DeepEqual(c.x, c.y) {
			t.Errorf("%s: %s differ:\n%v\n%v", what, c.name, c.x, c.y)
		}
	}
	if a.root != b.root {
		t.Errorf("%s: root %q vs %q", what, a.root, b.root)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	root := writeTree(t, persistFixture())
	p := openT(t, root, Options{NoCache: true})
	g := p.Graph()
	if len(g.globals) == 0 || len(g.envNames) == 0 || len(g.imports) == 0 {
		t.Fatalf("fixture lacks globals/env/imports: %d %d %d", len(g.globals), len(g.envNames), len(g.imports))
	}
	h := &snapHeader{version: "v", stamps: []fileStamp{{rel: "a.py", size: 3, modTime: 5, lang: "python"}}, env: fileStamp{rel: ".env", size: 1}}
	probs := []Problem{{Path: "x", Reason: "r", Skipped: true}}
	ranks := globalRanks(g)
	data, err := encodeSnapshot(h, g, probs, ranks)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := parseSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := snapshotHeader(secs)
	if err != nil || !sameHeader(h, h2) {
		t.Fatalf("header: %v %+v", err, h2)
	}
	snap, err := decodeSnapshot(root, secs)
	if err != nil {
		t.Fatal(err)
	}
	graphsEqual(t, "decoded", snap.graph, g)
	// The edge index built from integer endpoints equals Graph's own.
	g.index()
	snap.graph.index()
	if !reflect.DeepEqual(snap.graph.adj, g.adj) {
		t.Errorf("edge index differs from Graph.index's")
	}
	for _, n := range g.nodes[:min(len(g.nodes), 40)] {
		if !reflect.DeepEqual(snap.graph.Out(n.ID), g.Out(n.ID)) || !reflect.DeepEqual(snap.graph.RDeps(n.ID), g.RDeps(n.ID)) {
			t.Errorf("Out/RDeps of %s differ", n.ID)
		}
	}
	if !reflect.DeepEqual(snap.problems, probs) || !reflect.DeepEqual(snap.ranks, ranks) {
		t.Errorf("problems/ranks differ")
	}
	// Every truncation and a flipped byte anywhere are detected, never a panic.
	full := func(b []byte) error {
		secs, err := parseSnapshot(b)
		if err != nil {
			return err
		}
		if _, err := snapshotHeader(secs); err != nil {
			return err
		}
		_, err = decodeSnapshot(root, secs)
		return err
	}
	for _, cut := range []int{0, 1, 7, 8, len(data) / 3, len(data) / 2, len(data) - 5, len(data) - 1} {
		if err := full(data[:cut]); err == nil {
			t.Errorf("truncated to %d bytes: accepted", cut)
		}
	}
	for i := 0; i < len(data); i += max(1, len(data)/97) {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x5a
		if isPadding(data, i) {
			continue // alignment padding between sections is not read
		}
		if err := full(bad); err == nil {
			t.Errorf("byte %d flipped: accepted", i)
		}
	}
	// Sections that pass their checksums but are inconsistent are an error
	// too (a section rewritten with a matching checksum), never a panic.
	for id := 1; id <= numSections; id++ {
		for _, fill := range []byte{0x00, 0xff, 0x7f} {
			bad := resealSection(t, data, id, fill)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("section %d filled with %#x: panic %v", id, fill, r)
					}
				}()
				full(bad) // error or a different graph; never a panic
			}()
		}
	}
}

// isPadding reports whether byte i of a snapshot is alignment padding
// between sections.
func isPadding(data []byte, i int) bool {
	secs, err := parseSnapshot(data)
	if err != nil {
		return false
	}
	dirEnd := len(snapMagic) + 4 + numSections*dirEntrySize + 4
	if i < dirEnd {
		return false
	}
	for id := 1; id <= numSections; id++ {
		if i >= secs.off[id] && i < secs.off[id]+secs.n[id] {
			return false
		}
	}
	return true
}

// resealSection returns a copy of data whose section id is overwritten
// with fill (every other byte, so lengths keep) and whose directory carries
// the matching checksums: damage no checksum catches.
func resealSection(t *testing.T, data []byte, id int, fill byte) []byte {
	t.Helper()
	bad := append([]byte(nil), data...)
	secs, err := parseSnapshot(bad)
	if err != nil {
		t.Fatal(err)
	}
	b := bad[secs.off[id] : secs.off[id]+secs.n[id]]
	for i := 0; i < len(b); i += 2 {
		b[i] = fill
	}
	e := len(snapMagic) + 4 + (id-1)*dirEntrySize
	binary.LittleEndian.PutUint32(bad[e+4:], crc32.Checksum(b, castagnoli))
	dirEnd := len(snapMagic) + 4 + numSections*dirEntrySize
	binary.LittleEndian.PutUint32(bad[dirEnd:], crc32.Checksum(bad[:dirEnd], castagnoli))
	return bad
}

func TestSnapshotReopenIsALoad(t *testing.T) {
	root := writeTree(t, persistFixture())
	p1 := openT(t, root, Options{})
	if r := p1.Report(); r.FromSnapshot || r.CacheErr != "" {
		t.Fatalf("first open: %+v", r)
	}
	g1 := p1.Graph()
	p1.Close()
	if _, err := os.Stat(SnapshotPath(root)); err != nil {
		t.Fatalf("no persisted graph: %v", err)
	}
	p2 := openT(t, root, Options{})
	r2 := p2.Report()
	if !r2.FromSnapshot || r2.Parsed != 0 || r2.Cached != r2.Stats.Files || r2.CacheErr != "" {
		t.Fatalf("reopen: %+v", r2)
	}
	if p2.b != nil || p2.files != nil {
		t.Error("reopen of an unchanged project built a builder or loaded file records")
	}
	graphsEqual(t, "reopened", p2.Graph(), g1)
	if !reflect.DeepEqual(p2.Report().Problems, p1.Report().Problems) {
		t.Errorf("problems differ: %+v vs %+v", p2.Report().Problems, p1.Report().Problems)
	}
	// Persisted global ranks equal a computed ranking.
	want := p2.Graph().Rank(nil)
	got := p2.GlobalRank()
	if len(got) != len(want) {
		t.Fatalf("rank lengths %d vs %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Node.ID != want[i].Node.ID || got[i].Score != want[i].Score {
			t.Fatalf("rank %d: %s %g vs %s %g", i, got[i].Node.ID, got[i].Score, want[i].Node.ID, want[i].Score)
		}
	}
	// Queries work on the loaded graph.
	wantEdge(t, p2.Graph(), "pkg.util.make", "pkg.models.Base.save", EdgeCalls)
	if s, err := p2.Graph().Slice(byQual(t, p2.Graph(), "pkg.util.env").ID); err != nil || s.Env["API_URL"] != "http://example.test" {
		t.Errorf("slice on loaded graph: %v %+v", err, s)
	}

	// An update after a load builds the builder lazily, then keeps the
	// persisted graph current (written at Close at the latest).
	util := filepath.Join(root, "pkg", "util.py")
	src, _ := os.ReadFile(util)
	os.WriteFile(util, append(src, []byte("\ndef more():\n    return helper()\n")...), 0o644)
	g, err := p2.UpdateFiles(context.Background(), []string{util})
	if err != nil {
		t.Fatal(err)
	}
	if p2.b == nil || p2.loaded {
		t.Error("update did not materialise the builder")
	}
	wantEdge(t, g, "pkg.util.more", "pkg.util.helper", EdgeCalls)
	p2.Close()
	fresh := openT(t, root, Options{NoCache: true}).Graph()
	p3 := openT(t, root, Options{})
	if !p3.Report().FromSnapshot {
		t.Fatalf("open after an update and close was not a load: %+v", p3.Report())
	}
	graphsEqual(t, "after update", p3.Graph(), fresh)

	// A change behind the project's back (no update) makes the snapshot stale:
	// the next open rebuilds (parsing only that file) and persists again.
	os.WriteFile(util, src, 0o644)
	p4 := openT(t, root, Options{})
	if r := p4.Report(); r.FromSnapshot || r.Parsed != 1 {
		t.Errorf("open after an outside change: %+v", r)
	}
	fresh = openT(t, root, Options{NoCache: true}).Graph()
	graphsEqual(t, "after outside change", p4.Graph(), fresh)
	p4.Close()
	if p5 := openT(t, root, Options{}); !p5.Report().FromSnapshot {
		t.Error("the rebuilt graph was not persisted")
	}
	// .env changes are seen too.
	os.WriteFile(filepath.Join(root, ".env"), []byte("API_URL=http://other.test\n"), 0o644)
	p6 := openT(t, root, Options{})
	if p6.Report().FromSnapshot {
		t.Error(".env change not detected")
	}
	if s, _ := p6.Graph().Slice(byQual(t, p6.Graph(), "pkg.util.env").ID); s == nil || s.Env["API_URL"] != "http://other.test" {
		t.Errorf("slice env after .env change: %+v", s)
	}
}

func TestSnapshotDamagedIsRebuilt(t *testing.T) {
	root := writeTree(t, persistFixture())
	openT(t, root, Options{}).Close()
	fresh := openT(t, root, Options{NoCache: true}).Graph()
	path := SnapshotPath(root)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"truncated": data[:len(data)/2],
		"empty":     {},
		"flipped":   append(append(append([]byte(nil), data[:len(data)/3]...), data[len(data)/3]^1), data[len(data)/3+1:]...),
		"garbage":   []byte(strings.Repeat("not a graph ", 100)),
	} {
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		p := openT(t, root, Options{})
		r := p.Report()
		if r.FromSnapshot || !strings.Contains(r.CacheErr, "persisted graph") {
			t.Errorf("%s: not reported: %+v", name, r)
		}
		graphsEqual(t, name, p.Graph(), fresh)
		p.Close()
		p2 := openT(t, root, Options{})
		if !p2.Report().FromSnapshot {
			t.Errorf("%s: not rewritten", name)
		}
		graphsEqual(t, name+" rewritten", p2.Graph(), fresh)
		p2.Close()
	}
}

// persistEdgeSet is a graph's edges as sorted strings, for comparing across processes.
func persistEdgeSet(g *Graph) []string {
	out := make([]string, g.numEdges())
	for i, e := range g.Edges() {
		out[i] = e.From + " " + string(e.Kind) + " " + e.To
	}
	sort.Strings(out)
	return out
}
