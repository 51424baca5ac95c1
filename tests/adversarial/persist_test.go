package adversarial

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// persistProject is a small Python project with a call chain to query.
func persistProject(t *testing.T) string {
	return project(t, map[string]string{
		"pkg/__init__.py": "",
		"pkg/core.py":     "def base_helper():\n    return 1\n\n\ndef middle():\n    return base_helper()\n",
		"pkg/app.py":      "from .core import middle\n\n\ndef top_entry():\n    return middle()\n",
	})
}

// persistIndexed indexes dir and checks the next index is a load of the
// persisted graph.
func persistIndexed(t *testing.T, dir string) {
	t.Helper()
	r := run(t, limits{}, "index", dir)
	r.bounded(t)
	if r.Code != 0 {
		t.Fatalf("index: %s", r)
	}
	r = run(t, limits{}, "index", dir)
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "loaded the persisted graph") {
		t.Fatalf("second index of an unchanged project is not a load: %s", r)
	}
}

// A damaged or cut-off persisted graph is reported and rebuilt: the query's
// answer is the same as a fresh index's, never a panic or a wrong answer,
// and the next run loads the rewritten graph.
func TestPersistDamagedGraphRebuilt(t *testing.T) {
	dir := persistProject(t)
	persistIndexed(t, dir)
	fresh := run(t, limits{}, "query", dir, "rdeps", "pkg.core.base_helper", "--no-cache")
	fresh.bounded(t)
	if fresh.Code != 0 || !strings.Contains(fresh.Stdout, "top_entry") {
		t.Fatalf("fresh rdeps: %s", fresh)
	}
	snap := filepath.Join(dir, ".codeloom", "cache", "graph.snap")
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), data...)
	flipped[len(flipped)/2] ^= 0x40
	for name, bad := range map[string][]byte{
		"truncated": data[:len(data)*2/3],
		"flipped":   flipped,
		"empty":     nil,
	} {
		if err := os.WriteFile(snap, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, limits{}, "query", dir, "rdeps", "pkg.core.base_helper")
		r.bounded(t)
		if r.Code != 0 || r.Stdout != fresh.Stdout {
			t.Fatalf("%s graph: answer differs from a fresh index:\n%s\nwant:\n%s", name, r, fresh.Stdout)
		}
		if !strings.Contains(r.Stderr, "persisted graph") || strings.Contains(r.Stderr, "panic") {
			t.Fatalf("%s graph: damage not reported (or a panic): %s", name, r)
		}
		again := run(t, limits{}, "index", dir)
		again.bounded(t)
		if !strings.Contains(again.Stdout, "loaded the persisted graph") {
			t.Fatalf("%s graph: not rewritten: %s", name, again)
		}
	}
}

// A CLI query answers from the persisted graph while another codeloom
// process holds the project's store; after a change to a file it still
// answers correctly (rebuilt from a snapshot of the store) and persists the
// new graph without the store.
func TestPersistQueryBesideAHolder(t *testing.T) {
	dir := persistProject(t)
	persistIndexed(t, dir)
	db := filepath.Join(dir, ".codeloom", "codeloom.db")
	holdStore(t, dir, db, 90)
	r := run(t, limits{}, "index", dir)
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "loaded the persisted graph") {
		t.Fatalf("index beside a holder is not a load: %s", r)
	}
	for _, args := range [][]string{
		{"query", dir, "rdeps", "pkg.core.base_helper"},
		{"query", dir, "neighbors", "pkg.core.middle"},
		{"query", dir, "search", "top_entry"},
		{"query", dir, "rank"},
	} {
		r := run(t, limits{}, args...)
		r.bounded(t)
		if r.Code != 0 || !strings.Contains(r.Stdout, "top_entry") && !strings.Contains(r.Stdout, "middle") {
			t.Fatalf("%v beside a holder: %s", args, r)
		}
		if r.Wall > 2500*time.Millisecond && strings.Contains(r.Stderr, "locked") {
			t.Fatalf("%v waited for the store's lock: %s", args, r)
		}
	}
	// A change: the persisted graph is stale; the answer must see it.
	core := filepath.Join(dir, "pkg", "core.py")
	src, _ := os.ReadFile(core)
	if err := os.WriteFile(core, append(src, "\n\ndef late_caller():\n    return base_helper()\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, limits{}, "query", dir, "rdeps", "pkg.core.base_helper")
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "late_caller") || !strings.Contains(r.Stdout, "top_entry") {
		t.Fatalf("query after a change beside a holder: %s", r)
	}
	if !storeHeld(db) {
		t.Fatal("the holder let go; the case proved nothing")
	}
	r = run(t, limits{}, "index", dir)
	r.bounded(t)
	if !strings.Contains(r.Stdout, "loaded the persisted graph") {
		t.Fatalf("the graph rebuilt beside a holder was not persisted: %s", r)
	}
}
