//go:build unix

package codegraph

import (
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRemoveStaleTemps: a temporary snapshot nobody holds the lock of is
// removed; a live writer's, a FIFO and a symbolic link of the same name are
// left alone, and so is the file a link points to.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "graph.snap.tmp-111")
	if err := os.WriteFile(stale, []byte("half a snapshot"), 0o600); err != nil {
		t.Fatal(err)
	}
	live, err := createLockedTemp(dir, snapTmpPattern)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	fifo := filepath.Join(dir, "graph.snap.tmp-fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("not ours"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "graph.snap.tmp-link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "graph.snap")
	if err := os.WriteFile(other, []byte("the snapshot"), 0o600); err != nil {
		t.Fatal(err)
	}

	n, err := removeStaleTemps(slog.Default(), dir, snapTmpPattern)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("removed %d files, want 1", n)
	}
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale temporary file is still there (%v)", err)
	}
	for _, p := range []string{live.Name(), fifo, link, target, other} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
	// Once its writer is gone (its lock released), the file goes too.
	live.Close()
	if n, err := removeStaleTemps(slog.Default(), dir, snapTmpPattern); err != nil || n != 1 {
		t.Errorf("after the writer closed: removed %d (%v), want 1", n, err)
	}
}

// TestWriteAtomicLeavesNoTemp: a snapshot write leaves only the snapshot,
// and a failed one removes its temporary file.
func TestWriteAtomicLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, snapFile)
	if err := writeAtomic(path, nil, func(f *os.File) error { _, err := f.WriteString("x"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(path, nil, func(*os.File) error { return os.ErrInvalid }); err == nil {
		t.Fatal("a failed fill was not reported")
	}
	left, _ := filepath.Glob(filepath.Join(dir, snapTmpPattern))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "x" {
		t.Errorf("snapshot %q, %v", b, err)
	}
}
