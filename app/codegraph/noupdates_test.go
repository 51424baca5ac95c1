package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Options.NoUpdates releases the per-file records and the builder once the
// graph is built: the graph and the persisted graph are those of a normal
// index, the records are gone (a project that kept them fails the nil
// checks), so are the parsers and compiled queries (C memory), and an
// update afterwards still works (it reloads the records, makes a parser
// and compiles the query again) and equals a fresh index.
func TestNoUpdatesReleasesBuildState(t *testing.T) {
	root := writeTree(t, persistFixture())
	ref := openT(t, root, Options{NoCache: true}).Graph()
	p := openT(t, root, Options{NoUpdates: true})
	graphsEqual(t, "NoUpdates index", p.Graph(), ref)
	p.mu.Lock()
	files, b := p.files, p.b
	p.mu.Unlock()
	if files != nil || b != nil {
		t.Fatalf("per-file records (%d) or builder (%v) kept", len(files), b != nil)
	}
	p.idleMu.Lock()
	idle, queries := len(p.idle), len(p.queries)
	p.idleMu.Unlock()
	if idle != 0 || queries != 0 {
		t.Fatalf("%d idle parser sets and %d compiled queries kept after the parse", idle, queries)
	}
	r := openReaderT(t, root) // persisted and current
	r.Close()
	loaded := openT(t, root, Options{})
	if !loaded.Report().FromSnapshot {
		t.Fatalf("the persisted graph was not current: %+v", loaded.Report())
	}
	graphsEqual(t, "loaded", loaded.Graph(), ref)
	loaded.Close()

	f := filepath.Join(root, "new.py")
	if err := os.WriteFile(f, []byte("def n():\n    return 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := p.UpdateFiles(context.Background(), []string{"new.py"})
	if err != nil {
		t.Fatal(err)
	}
	graphsEqual(t, "update after NoUpdates", g, openT(t, root, Options{NoCache: true}).Graph())
}

// Without the cache (index --no-cache) the build state is released too, and
// an edit of an existing file, which reloads it, still gives a fresh index.
func TestNoUpdatesWithoutCache(t *testing.T) {
	root := writeTree(t, persistFixture())
	p := openT(t, root, Options{NoCache: true, NoUpdates: true})
	graphsEqual(t, "NoUpdates, no cache", p.Graph(), openT(t, root, Options{NoCache: true}).Graph())
	p.mu.Lock()
	held := p.files != nil || p.b != nil
	p.mu.Unlock()
	if held {
		t.Fatal("records or builder still held after a NoUpdates index without the cache")
	}
	f := filepath.Join(root, "pkg/consts.py")
	if err := os.WriteFile(f, []byte("LIMIT = 11\n\ndef use():\n    return LIMIT\n\ndef more():\n    use()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := p.UpdateFiles(context.Background(), []string{"pkg/consts.py"})
	if err != nil {
		t.Fatalf("update after release: %v", err)
	}
	sameGraph(t, g, openT(t, root, Options{NoCache: true}).Graph())
	byQual(t, g, "pkg.consts.more")
}
