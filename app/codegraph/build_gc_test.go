package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// A project opened with ReleaseAfterIndex builds and persists the same
// graph, holds neither records nor builder afterwards, and an update then
// reloads them and gives the graph a fresh index gives.
func TestReleaseAfterIndex(t *testing.T) {
	for _, noCache := range []bool{false, true} {
		root := writeTree(t, persistFixture())
		fresh := openT(t, root, Options{NoCache: true}).Graph()
		p := openT(t, root, Options{NoCache: noCache, ReleaseAfterIndex: true})
		graphsEqual(t, "released", p.Graph(), fresh)
		p.mu.Lock()
		held := p.files != nil || p.b != nil
		p.mu.Unlock()
		if held {
			t.Fatalf("noCache=%v: records or builder still held after the index", noCache)
		}
		if !noCache {
			r := openReaderT(t, root) // the snapshot was written
			r.Close()
		}
		f := filepath.Join(root, "pkg/consts.py")
		if err := os.WriteFile(f, []byte("LIMIT = 11\n\ndef use():\n    return LIMIT\n\ndef more():\n    use()\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := p.UpdateFiles(context.Background(), []string{"pkg/consts.py"})
		if err != nil {
			t.Fatalf("noCache=%v: update after release: %v", noCache, err)
		}
		sameGraph(t, g, openT(t, root, Options{NoCache: true}).Graph())
		byQual(t, g, "pkg.consts.more")
	}
}

// tightenGC lowers the GC target for a build and restores the caller's
// setting, but leaves a setting alone that is already tighter, or that
// something else changed meanwhile.
func TestTightenGCRestores(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	restore := tightenGC()
	if got := debug.SetGCPercent(buildGCPercent); got != buildGCPercent {
		t.Errorf("during the build GOGC is %d, want %d", got, buildGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after the build GOGC is %d, want 100 again", got)
	}
	// Nested builds (two projects): the inner leaves the outer's setting.
	outer := tightenGC()
	inner := tightenGC()
	inner()
	if got := debug.SetGCPercent(buildGCPercent); got != buildGCPercent {
		t.Errorf("inner restore changed GOGC to %d during the outer build", got)
	}
	outer()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after both builds GOGC is %d, want 100", got)
	}
	// Changed by the user during the build: kept.
	restore = tightenGC()
	debug.SetGCPercent(300)
	restore()
	if got := debug.SetGCPercent(100); got != 300 {
		t.Errorf("a setting made during the build became %d, want 300 kept", got)
	}
	// Already tighter: untouched.
	debug.SetGCPercent(10)
	restore = tightenGC()
	if got := debug.SetGCPercent(10); got != 10 {
		t.Errorf("a tighter setting became %d during the build", got)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 10 {
		t.Errorf("a tighter setting became %d after the build", got)
	}
}
