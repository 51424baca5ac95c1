package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"syscall"
	"testing"
	"time"
)

// walkT walks root with the registered languages.
func walkT(t *testing.T, root string) *walkResult {
	t.Helper()
	wr, err := walk(context.Background(), root, DefaultMaxFileSize, langByExt(registry()))
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	return wr
}

// walkSummary is what a walk found: each file with its size and mtime as
// os.Lstat reports them, and each problem, both sorted.
func walkSummary(wr *walkResult) (files []string, stamps map[string][2]int64, problems []string) {
	stamps = map[string][2]int64{}
	for _, f := range wr.files {
		files = append(files, f.rel)
		stamps[f.rel] = [2]int64{f.size, f.modTime}
	}
	for _, p := range wr.problems {
		problems = append(problems, p.Path+": "+p.Reason)
	}
	sort.Strings(files)
	sort.Strings(problems)
	return files, stamps, problems
}

// The walk reads directory entries' types from the directory and stats only
// the files it indexes: what it finds is exactly what a path-based walk
// (os.Lstat on each) would, symlinked directories and loops are reported
// and never followed, FIFOs are reported without blocking, and ignored or
// skipped folders are not entered.
func TestWalkDirExact(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a.py":                   "def a():\n    pass\n",
		"pkg/__init__.py":        "",
		"pkg/sub/deep/m.py":      "X = 1\n",
		"pkg/readme.txt":         "not source\n",
		"web/app.js":             "export const a = 1;\n",
		"package.json":           "{}\n",
		"gen/out.py":             "Y = 2\n",
		".gitignore":             "gen/\n*.tmp.py\n",
		"x.tmp.py":               "Z = 3\n",
		"node_modules/dep/i.js":  "module.exports = 1;\n",
		".venv/pyvenv.cfg":       "home = /usr\n",
		".venv/lib/site.py":      "S = 1\n",
		"target/t.go":            "package t\n",
		"docs/notes/outside.txt": "x\n",
	})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("..", filepath.Join(root, "pkg", "up")))               // a directory loop if followed
	must(os.Symlink("pkg/sub", filepath.Join(root, "linked")))             // a symlinked directory inside
	must(os.Symlink(t.TempDir(), filepath.Join(root, "away")))             // one outside
	must(os.Symlink("self", filepath.Join(root, "self")))                  // a symlink loop
	must(syscall.Mkfifo(filepath.Join(root, "pipe.py"), 0o644))            // never opened
	must(os.Symlink("pkg/sub/deep/m.py", filepath.Join(root, "alias.py"))) // a file symlink inside

	done := make(chan *walkResult, 1)
	go func() { done <- walkT(t, root) }()
	var wr *walkResult
	select {
	case wr = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("walk did not finish within 60 s (blocked on a FIFO or a loop?)")
	}
	files, stamps, problems := walkSummary(wr)
	wantFiles := []string{"a.py", "package.json", "pkg/__init__.py", "pkg/sub/deep/m.py", "web/app.js"}
	if !reflect.DeepEqual(files, wantFiles) {
		t.Errorf("files = %q, want %q", files, wantFiles)
	}
	for rel, st := range stamps {
		info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if want := [2]int64{info.Size(), info.ModTime().UnixNano()}; st != want {
			t.Errorf("%s: size, mtime = %v, os.Lstat says %v", rel, st, want)
		}
	}
	wantProblems := []string{
		"alias.py: symlink inside the project (target indexed at its own path)",
		"away: symlink points outside the project (not followed)",
		"pipe.py: not a regular file: a named pipe (FIFO)",
		"self: symlink loop",
	}
	if !reflect.DeepEqual(problems, wantProblems) {
		t.Errorf("problems = %q, want %q", problems, wantProblems)
	}
	if !wr.info.initDirs["pkg"] || wr.info.dirs["gen"] {
		t.Errorf("init dirs %v, dirs %v", wr.info.initDirs, wr.info.dirs)
	}
}

// A directory reached twice (the same device and inode: a bind mount of a
// parent, which no symlink check sees) is walked once. Simulated by
// marking the root's sub-directory as visited before the walk reaches it.
func TestWalkDirLoopGuard(t *testing.T) {
	root := writeTree(t, map[string]string{"a/x.py": "X = 1\n", "b/y.py": "Y = 1\n"})
	l := readDir(filepath.Join(root, "a"), false, func(string) bool { return true })
	if l.err != nil || l.id == (dirID{}) {
		t.Fatalf("readDir: %v %+v", l.err, l.id)
	}
	w := &walker{root: root, maxSize: DefaultMaxFileSize, byExt: langByExt(registry()), visited: map[dirID]bool{l.id: true},
		res: &walkResult{info: &projectInfo{goModules: map[string]string{}, dirs: map[string]bool{}, initDirs: map[string]bool{}}}}
	if err := w.dir(context.Background(), "", nil); err != nil {
		t.Fatal(err)
	}
	files, _, problems := walkSummary(w.res)
	if !reflect.DeepEqual(files, []string{"b/y.py"}) || !reflect.DeepEqual(problems, []string{"a: directory loop (already walked)"}) {
		t.Errorf("files %q problems %q", files, problems)
	}
}

// The root may itself be a symlink (it is followed); a directory below it
// is never followed even when readDir is asked to open a symlink.
func TestReadDirFollowsOnlyTheRoot(t *testing.T) {
	root := writeTree(t, map[string]string{"real/x.py": "X = 1\n"})
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(root, "real"), link); err != nil {
		t.Fatal(err)
	}
	files, _, _ := walkSummary(walkT(t, link))
	if !reflect.DeepEqual(files, []string{"x.py"}) {
		t.Errorf("walk through a symlinked root: %q", files)
	}
	if l := readDir(link, false, func(string) bool { return true }); l.err == nil {
		t.Errorf("a symlinked directory below the root was opened: %+v", l)
	}
}

// Every change to what the walk sees makes the persisted graph stale for a
// reader: a rename, a file added in a new folder, a folder replaced by a
// symlink to it, a .gitignore that now ignores a file, and one that stops
// ignoring a folder.
func TestReaderStaleWalkChanges(t *testing.T) {
	root := writeTree(t, persistFixture())
	steps := []struct {
		name string
		do   func() error
	}{
		{"rename", func() error { return os.Rename(filepath.Join(root, "web/y.js"), filepath.Join(root, "web/z.js")) }},
		{"add in a new folder", func() error {
			if err := os.MkdirAll(filepath.Join(root, "n/m"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(root, "n/m/q.py"), []byte("Q = 1\n"), 0o644)
		}},
		{"folder replaced by a symlink", func() error {
			if err := os.Rename(filepath.Join(root, "n"), filepath.Join(root, "n2")); err != nil {
				return err
			}
			return os.Symlink("n2", filepath.Join(root, "n"))
		}},
		{"ignore a file", func() error { return os.WriteFile(filepath.Join(root, ".gitignore"), []byte("web/x.js\n"), 0o644) }},
		{"ignore file removed", func() error { return os.Remove(filepath.Join(root, ".gitignore")) }},
	}
	openT(t, root, Options{}).Close()
	openReaderT(t, root).Close()
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if r, err := OpenReader(context.Background(), root, Options{}); r != nil || err != nil {
			t.Fatalf("%s: stale persisted graph answered (%v %v)", s.name, r, err)
		}
		openT(t, root, Options{}).Close() // rebuilds and persists the new state
		openReaderT(t, root).Close()      // which is current again
	}
}

// A folder the walk is told to enter that is a symlink (git lists a
// symlinked submodule as a folder; or a folder was swapped for a link
// during the walk) is reported as a symlink, not followed.
func TestWalkDirSymlinkedFolderNotFollowed(t *testing.T) {
	root := writeTree(t, map[string]string{"real/x.py": "X = 1\n"})
	if err := os.Symlink("real", filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop", filepath.Join(root, "loop")); err != nil {
		t.Fatal(err)
	}
	w := &walker{root: root, maxSize: DefaultMaxFileSize, byExt: langByExt(registry()), visited: map[dirID]bool{},
		res: &walkResult{info: &projectInfo{goModules: map[string]string{}, dirs: map[string]bool{}, initDirs: map[string]bool{}}}}
	for _, rel := range []string{"sub", "loop"} {
		if err := w.dir(context.Background(), rel, nil); err != nil {
			t.Fatal(err)
		}
	}
	files, _, problems := walkSummary(w.res)
	// A link inside the project is listed only when its name looks like
	// source (walker.symlink); what matters is that sub/x.py is not indexed.
	want := []string{"loop: symlink loop"}
	if len(files) != 0 || !reflect.DeepEqual(problems, want) {
		t.Errorf("files %q problems %q, want none and %q", files, problems, want)
	}
}
