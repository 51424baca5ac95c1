package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBuildHintEqualsFullDiff checks the builder's hint (the paths an
// update changed since the last build, builder.diffFiles) through the
// updates that make it differ from "the files of this update": a file
// touched with the same content (no build, its entry replaced), then
// another file's edit; a file deleted and another added in one update (the
// same number of files); a file whose name is not UTF-8, then an edit; a
// new __init__.py (every file named again). After
// each, the hinted comparison must equal the full one (checkHint panics
// otherwise), the hint must be used (not the full comparison), and the
// graph must equal a fresh index's.
func TestBuildHintEqualsFullDiff(t *testing.T) {
	files := map[string]string{}
	for k, v := range pyFixture {
		files["py/"+k] = v
	}
	root := writeTree(t, files)
	p := openT(t, root, Options{NoCache: true})
	ctx := context.Background()
	var first string
	for k := range files {
		if strings.HasSuffix(k, ".py") && !strings.HasSuffix(k, "__init__.py") {
			first = k
			break
		}
	}
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	update := func(what string, wantHinted bool, rels ...string) {
		t.Helper()
		before := p.b.hinted
		var paths []string
		for _, r := range rels {
			paths = append(paths, abs(r))
		}
		g, err := p.UpdateFiles(ctx, paths)
		if err != nil {
			t.Fatal(err)
		}
		if hinted := p.b.hinted > before; hinted != wantHinted {
			t.Errorf("%s: hinted comparison %v, want %v", what, hinted, wantHinted)
		}
		graphsEqual(t, what, g, openT(t, root, Options{NoCache: true}).Graph())
	}
	// Same content, a later mtime: the entry is replaced, nothing is built.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(abs(first), later, later); err != nil {
		t.Fatal(err)
	}
	update("touched", false, first) // no build
	if !p.unbuilt[first] {
		t.Fatalf("%s's replaced entry is not in the next build's hint", first)
	}
	other := "py/pkg/util.py"
	if _, ok := files[other]; !ok {
		t.Fatalf("no %s in the fixture", other)
	}
	rewriteFile(t, root, other, func(s string) string { return s + "\n# edited\n" })
	update("edit after a touch", true, other)
	if p.unbuilt != nil {
		t.Errorf("hint not consumed: %v", p.unbuilt)
	}
	if p.b.fbs[first].fd != p.files[first] {
		t.Errorf("%s: the builder kept the entry the touch replaced", first)
	}
	// One file goes, another comes, in one update.
	if err := os.Remove(abs(other)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs("py/pkg/added.py"), []byte("def added():\n    return 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	update("delete and add", true, other, "py/pkg/added.py")
	// A file whose name is not UTF-8: its nodes get the raw path
	// (markRawPathsLocked checks the hinted paths only while every path
	// was UTF-8), and every later build marks them.
	if !p.rawNone {
		t.Error("rawNone unset for a project whose paths are all UTF-8")
	}
	bad := "py/pkg/bad\xff.py"
	if err := os.WriteFile(abs(bad), []byte("def bad():\n    return 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	update("a non-UTF-8 name", true, bad)
	rewriteFile(t, root, "py/pkg/added.py", func(s string) string { return s + "\n# edited\n" })
	update("edit after it", true, "py/pkg/added.py")
	if p.rawNone {
		t.Error("rawNone set with a non-UTF-8 path in the project")
	}
	// A new package marker names modules again: the full comparison.
	if err := os.MkdirAll(abs("py/newpkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs("py/newpkg/__init__.py"), []byte(""), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs("py/newpkg/mod.py"), []byte("from pkg.added import added\n\nx = added()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	update("new package", false, "py/newpkg/__init__.py", "py/newpkg/mod.py")
}

// TestGCDue: the end of PrepareUpdates collects only when the heap is past
// half of its way to the collector's goal (collectIfDue), with the figures
// measured on go/src (collect) and pyenv (do not).
func TestGCDue(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live, goal, heap uint64
		want             bool
	}{
		{347 * mb, 694 * mb, 606 * mb, true},     // go/src after PrepareUpdates
		{1198 * mb, 2396 * mb, 1425 * mb, false}, // pyenv after PrepareUpdates
		{100 * mb, 200 * mb, 150 * mb, false},    // exactly half way
		{100 * mb, 200 * mb, 90 * mb, false},     // below the live heap
		{100 * mb, 100 * mb, 150 * mb, false},    // no goal above live (collection off)
	} {
		if got := gcDue(c.live, c.goal, c.heap); got != c.want {
			t.Errorf("gcDue(%d, %d, %d MB) = %v, want %v", c.live/mb, c.goal/mb, c.heap/mb, got, c.want)
		}
	}
}
