package codegraph

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// rankScoresRef is PageRank as rankScores computed it before its arcs were
// made from the edge rows (a map lookup per edge end, a slice of arcs per
// node): the reference the new form must match bit for bit.
func rankScoresRef(g *Graph, focus []string) []float64 {
	n := len(g.nodes)
	idx := g.byID
	type arc struct {
		to int
		w  float64
	}
	outs := make([][]arc, n)
	outW := make([]float64, n)
	add := func(from, to int, w float64) {
		outs[from] = append(outs[from], arc{to, w})
		outW[from] += w
	}
	for _, e := range g.Edges() {
		f, ok1 := idx[e.From]
		t, ok2 := idx[e.To]
		if !ok1 || !ok2 {
			continue
		}
		if e.Kind == EdgeContains {
			add(int(t), int(f), 0.3)
			continue
		}
		if w := rankWeights[e.Kind]; w > 0 {
			add(int(f), int(t), w)
		}
	}
	tele := make([]float64, n)
	var focusN int
	for _, id := range focus {
		if i, ok := idx[id]; ok {
			tele[i] = 1
			focusN++
		}
	}
	if focusN == 0 {
		for i := range tele {
			tele[i] = 1 / float64(n)
		}
	} else {
		for i := range tele {
			tele[i] /= float64(focusN)
		}
	}
	const d = 0.85
	pr := append([]float64(nil), tele...)
	next := make([]float64, n)
	for iter := 0; iter < 100; iter++ {
		dangling := 0.0
		for i := range next {
			next[i] = 0
		}
		for i, as := range outs {
			if outW[i] == 0 {
				dangling += pr[i]
				continue
			}
			share := pr[i] / outW[i]
			for _, a := range as {
				next[a.to] += d * share * a.w
			}
		}
		diff := 0.0
		for i := range next {
			next[i] += (1-d)*tele[i] + d*dangling*tele[i]
			diff += math.Abs(next[i] - pr[i])
		}
		pr, next = next, pr
		if diff < 1e-9 {
			break
		}
	}
	return pr
}

// TestRankScoresMatchReference: the ranks from the edge rows equal the
// map-based computation bit for bit — on a built graph, with focus nodes,
// on an update's overlay graph, and with edges whose ends are not nodes
// (skipped by both) — so persisted ranks did not change.
func TestRankScoresMatchReference(t *testing.T) {
	root := writeTree(t, persistFixture())
	p := openT(t, root, Options{NoCache: true})
	g := p.Graph()
	check := func(what string, g *Graph, focus []string) {
		t.Helper()
		got, want := g.rankScores(focus), rankScoresRef(g, focus)
		if !sameFloats(got, want) {
			t.Errorf("%s: ranks differ from the reference", what)
		}
	}
	check("built", g, nil)
	check("focus", g, []string{g.nodes[1].ID, g.nodes[len(g.nodes)-1].ID, "no such node"})
	// Edges to and from IDs that are not nodes, of every kind that ranks.
	fg := g.flatGraph()
	edges := slices.Clone(fg.edges)
	for _, k := range []EdgeKind{EdgeCalls, EdgeContains, EdgeImports, EdgeInherits} {
		edges = append(edges, Edge{From: fg.nodes[2].ID, To: "ghost:" + string(k), Kind: k},
			Edge{From: "ghost:" + string(k), To: fg.nodes[3].ID, Kind: k})
	}
	odd := &Graph{root: fg.root, nodes: fg.nodes, byID: fg.byID, edges: edges}
	check("edges with ends that are not nodes", odd, nil)
	// An update's overlay graph (a call added to a body).
	path := filepath.Join(root, "pkg", "util.py")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(src, "\n\ndef extra():\n    return helper()\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	g2, err := p.UpdateFiles(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	check("after an update", g2, nil)
	if sameArcs(g.rankArcs(), g2.rankArcs()) {
		t.Errorf("a new definition with a call left the arcs the same")
	}
}

// TestSnapshotWriteReusesRanks: an edit that changes no reference (a
// comment shifting every line) is persisted with the last ranks, not
// recomputed; an edit adding a call recomputes them; in both cases the
// persisted ranks are bit for bit a fresh index's.
func TestSnapshotWriteReusesRanks(t *testing.T) {
	root := writeTree(t, persistFixture())
	openT(t, root, Options{}).Close()
	// The hook is called by the writer, which may be the background timer
	// (a slow test) or the explicit flush below: either is a write of the
	// edited state and reuses or not alike.
	var mu sync.Mutex
	var seen []string
	p := openT(t, root, Options{testHook: func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }})
	var stages []string
	if !p.Report().FromSnapshot {
		t.Fatal("not loaded from the persisted graph")
	}
	ctx := context.Background()
	edit := func(rel string, f func(string) string) {
		t.Helper()
		mu.Lock()
		seen = nil
		mu.Unlock()
		full := rewriteFile(t, root, rel, f)
		if _, err := p.UpdateFiles(ctx, []string{full}); err != nil {
			t.Fatal(err)
		}
		p.flushSnapshot()
		mu.Lock()
		stages = slices.Clone(seen)
		mu.Unlock()
	}
	persisted := func(what string) {
		t.Helper()
		snap := currentSnapshot(t, p, what)
		q := openT(t, root, Options{NoCache: true})
		if want := globalRanks(q.Graph()); !sameFloats(snap.ranks, want) {
			t.Errorf("%s: persisted ranks differ from a fresh index's", what)
		}
	}
	comment := func(s string) string { return "# a comment\n" + s }
	edit("pkg/util.py", comment) // the first write after a load computes
	if contains(stages, "snapshot-ranks-reused") {
		t.Errorf("first write after a load reused ranks it does not have")
	}
	persisted("first edit")
	edit("pkg/util.py", comment)
	if !contains(stages, "snapshot-ranks-reused") {
		t.Errorf("a comment edit recomputed the ranks (stages %v)", stages)
	}
	persisted("comment edit")
	edit("pkg/util.py", func(s string) string { return s + "\n\ndef more():\n    return helper()\n" })
	if contains(stages, "snapshot-ranks-reused") {
		t.Errorf("an edit adding a call reused the ranks")
	}
	persisted("call added")
}

// TestSnapDelaySpacing: the rewrite waits snapDelay after an update, or
// longer while the last write is recent: snapSpacing times its duration
// after it ended, at most snapMaxDelay.
func TestSnapDelaySpacing(t *testing.T) {
	now := time.Now()
	p := &Project{}
	if d := p.snapDelayLocked(now); d != snapDelay {
		t.Errorf("no write yet: %v, want %v", d, snapDelay)
	}
	for _, c := range []struct {
		ago, cost, want time.Duration
	}{
		{0, 100 * time.Millisecond, snapDelay},
		{0, 2 * time.Second, 6 * time.Second},
		{4 * time.Second, 2 * time.Second, 2 * time.Second},
		{time.Minute, 2 * time.Second, snapDelay},
		{0, time.Minute, snapMaxDelay},
	} {
		p.snapEnd, p.snapCost = now.Add(-c.ago), c.cost
		if d := p.snapDelayLocked(now); d != c.want {
			t.Errorf("write of %v ended %v ago: delay %v, want %v", c.cost, c.ago, d, c.want)
		}
	}
	// A real write records its end and duration.
	root := writeTree(t, persistFixture())
	q := openT(t, root, Options{})
	q.mu.Lock()
	end, cost := q.snapEnd, q.snapCost
	q.mu.Unlock()
	if end.IsZero() || cost <= 0 {
		t.Errorf("index's write not recorded: end %v cost %v", end, cost)
	}
}

// TestIncrementalRewritesEqualFresh: the rewrites after edits continue the
// last write's string table and copy unchanged node records (encCache);
// after each edit — lines shifted, a call added, a definition added (nodes
// move), a file deleted, and past the unused-string limit (a fresh table)
// — the persisted graph decodes to a fresh index's graph, with its ranks,
// and a Reader answers as the fresh graph does.
func TestIncrementalRewritesEqualFresh(t *testing.T) {
	root, _, p := readerProject(t)
	defer p.Close()
	ctx := context.Background()
	edit := func(rel string, f func(string) string) {
		t.Helper()
		full := filepath.Join(root, filepath.FromSlash(rel))
		var err error
		if f == nil {
			err = os.Remove(full)
		} else {
			var src []byte
			if src, err = os.ReadFile(full); err == nil {
				err = os.WriteFile(full, []byte(f(string(src))), 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.UpdateFiles(ctx, []string{full}); err != nil {
			t.Fatal(err)
		}
		// Before the rewrite a reader must see the persisted graph as
		// stale (the writer is held off meanwhile; when the background
		// timer already wrote this state, there is nothing to check).
		p.snapWriteMu.Lock()
		p.mu.Lock()
		pending := p.snapGen != p.snapDone
		p.mu.Unlock()
		if pending {
			if r, err := OpenReader(ctx, root, Options{}); r != nil || err != nil {
				if r != nil {
					r.Close()
				}
				t.Errorf("%s: a reader opened the persisted graph before the rewrite (err %v)", rel, err)
			}
		}
		p.snapWriteMu.Unlock()
		p.flushSnapshot()
	}
	check := func(what string) {
		t.Helper()
		snap := currentSnapshot(t, p, what)
		q := openT(t, root, Options{NoCache: true})
		fresh := q.Graph()
		graphsEqual(t, what+": decoded", snap.graph, fresh)
		if !sameFloats(snap.ranks, globalRanks(fresh)) {
			t.Errorf("%s: persisted ranks differ from a fresh index's", what)
		}
		r := openReaderT(t, root)
		for i, n := range fresh.nodes {
			if i%5 != 0 || fresh.byID[n.ID] != int32(i) {
				continue
			}
			x, ok := r.Node(n.ID)
			out, err1 := r.Out(n.ID)
			in, err2 := r.In(n.ID)
			if !ok || !reflect.DeepEqual(*x, *n) || err1 != nil || err2 != nil ||
				!reflect.DeepEqual(out, fresh.Out(n.ID)) || !reflect.DeepEqual(in, fresh.In(n.ID)) {
				t.Fatalf("%s: reader's node %s or its edges differ", what, n.ID)
			}
		}
		for _, s := range []string{"Graph", "helper", "pkg/util"} {
			want := fresh.Search(s, 10)
			got, err := r.Search(s, 10)
			if err != nil || len(got) != len(want) {
				t.Fatalf("%s: Search(%q): %d hits (%v), want %d", what, s, len(got), err, len(want))
			}
			for k := range want {
				if got[k].Score != want[k].Score || got[k].Node.ID != want[k].Node.ID {
					t.Fatalf("%s: Search(%q) hit %d differs", what, s, k)
				}
			}
		}
		want := fresh.Rank(nil)
		got, err := r.GlobalRank(0)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%s: GlobalRank: %d (%v), want %d", what, len(got), err, len(want))
		}
		for k := range want {
			if got[k].Score != want[k].Score || got[k].Node.ID != want[k].Node.ID {
				t.Fatalf("%s: GlobalRank %d: %s, want %s", what, k, got[k].Node.ID, want[k].Node.ID)
			}
		}
		r.Close()
	}
	state := func() (fresh bool, reused, unused int, kept bool) {
		p.snapWriteMu.Lock()
		defer p.snapWriteMu.Unlock()
		if p.enc == nil {
			t.Fatal("no encoder state kept after a rewrite after edits")
		}
		return p.enc.fresh, p.enc.reused, p.enc.unused, p.enc.st != nil
	}
	comment := func(s string) string { return "// shifted\n" + s }
	edit("cg/graph.go", comment)
	check("lines shifted")
	if fresh, _, _, kept := state(); !fresh || !kept {
		t.Errorf("first rewrite: fresh %v kept %v, want a fresh table kept", fresh, kept)
	}
	edit("pkg/util.py", func(s string) string { return strings.Replace(s, "return", "helper()\n    return", 1) })
	check("call added")
	if fresh, reused, _, _ := state(); fresh || reused == 0 {
		t.Errorf("second rewrite: fresh %v, %d records copied; want the table continued", fresh, reused)
	}
	edit("cg/graph.go", func(s string) string { return strings.Replace(s, "// shifted\n", "", 1) })
	check("lines shifted back")
	if _, reused, unused, _ := state(); reused == 0 || unused == 0 {
		t.Errorf("third rewrite: %d copied, %d unused strings; want both (the old positions' strings unused)", reused, unused)
	}
	edit("cg/rank.go", func(s string) string { return s + "\nfunc addedForTest() int { return 1 }\n" })
	check("definition added")
	edit("pkg/consts.py", nil)
	check("file deleted")
	// Past the unused-string limit: the write drops its table, the next
	// starts afresh.
	p.snapWriteMu.Lock()
	p.enc.minGarbage, p.enc.unusedDiv = 0, 1<<30
	p.snapWriteMu.Unlock()
	edit("cg/graph.go", comment)
	check("limit passed")
	if _, _, unused, kept := state(); kept || unused == 0 {
		t.Errorf("past the limit: kept %v with %d unused, want dropped", kept, unused)
	}
	edit("cg/graph.go", comment)
	check("after the limit")
	if fresh, _, _, _ := state(); !fresh {
		t.Errorf("write after the limit did not start a fresh table")
	}
	// Idle: the writer's state is released encKeep after the last write;
	// the next rewrite starts afresh and is still right.
	p.snapWriteMu.Lock()
	p.encKeep = 20 * time.Millisecond
	p.snapWriteMu.Unlock()
	edit("cg/graph.go", comment)
	released := false
	for i := 0; i < 500 && !released; i++ {
		time.Sleep(10 * time.Millisecond)
		p.snapWriteMu.Lock()
		released = p.enc == nil && p.rankArcsLast == nil && p.rankArcsRanks == nil
		p.snapWriteMu.Unlock()
	}
	if !released {
		t.Errorf("writer state not released after an idle period")
	}
	p.snapWriteMu.Lock()
	p.encKeep = time.Hour
	p.snapWriteMu.Unlock()
	edit("cg/graph.go", comment)
	check("after a release")
	if fresh, _, _, _ := state(); !fresh {
		t.Errorf("write after a release did not start a fresh table")
	}
}

// currentSnapshot loads p's persisted graph, failing the test unless it
// stands for p's current state.
func currentSnapshot(t *testing.T, p *Project, what string) *snapshot {
	t.Helper()
	p.mu.Lock()
	h := p.headerLocked()
	p.mu.Unlock()
	snap, err := p.loadSnapshot(h)
	if err != nil || snap == nil {
		t.Fatalf("%s: persisted graph not current: %v", what, err)
	}
	return snap
}

// writeFileAtomic writes data to path through a synced temporary file in
// the same folder and a rename (writeAtomic). hook (tests) is told
// "snapshot-half-written" once half of the bytes are written (the file is
// then incomplete), then "snapshot-synced" and "snapshot-renamed".
func writeFileAtomic(path string, data []byte, hook func(string)) error {
	return writeAtomic(path, hook, func(f *os.File) error {
		half := len(data) / 2
		if _, err := f.Write(data[:half]); err != nil {
			return err
		}
		if hook != nil {
			hook("snapshot-half-written")
		}
		_, err := f.Write(data[half:])
		return err
	})
}
