package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// In a git work tree every change to git's file set or to a listed file
// makes the persisted graph stale for a reader (edit keeping the size, add,
// remove, rename, a file newly ignored by .gitignore, .git/info/exclude or
// core.excludesFile, an ignored file force-added, a tracked file deleted),
// and a change git does not list (an ignored file added, a non-source file
// edited) leaves it current. After each stale step the rebuilt graph equals
// a fresh index and is current again.
func TestGitReaderStale(t *testing.T) {
	root := gitRepoT(t)
	w := func(rel, body string) func() error {
		return func() error {
			f := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				return err
			}
			return os.WriteFile(f, []byte(body), 0o644)
		}
	}
	appendTo := func(rel, line string) func() error {
		return func() error {
			f, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(rel)), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString(line)
			return err
		}
	}
	steps := []struct {
		name  string
		do    func() error
		stale bool
	}{
		{"edit a tracked file keeping its size", func() error {
			f := filepath.Join(root, "main.py")
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if err := os.WriteFile(f, []byte(strings.Replace(string(b), "return 1", "return 2", 1)), 0o644); err != nil {
				return err
			}
			later := time.Now().Add(time.Hour)
			return os.Chtimes(f, later, later)
		}, true},
		{"edit an untracked file", appendTo("gen/keep_me.py", "# more\n"), true},
		{"add an untracked file", w("pkg/new.py", "def new():\n    return 1\n"), true},
		{"add an ignored file", w("gen/skip.py", "def skip():\n    return 1\n"), false},
		{"add a file git lists but the index skips (untracked, dist/)", w("dist/more.py", "X = 1\n"), false},
		{"edit a file that is not source", w("notes.txt", "hello\n"), false},
		{"rename", func() error {
			return os.Rename(filepath.Join(root, "pkg", "new.py"), filepath.Join(root, "pkg", "renamed.py"))
		}, true},
		{"remove an untracked file", func() error { return os.Remove(filepath.Join(root, "pkg", "renamed.py")) }, true},
		{".gitignore ignores a listed file", appendTo(".gitignore", "gen/keep_me.py\n"), true},
		{".git/info/exclude stops ignoring a file", w(".git/info/exclude", "# nothing\n"), true},
		{"core.excludesFile stops ignoring a file", w("excludes.txt", "# nothing\n"), true},
		{"force-add an ignored file", func() error {
			gitT(t, root, "add", "-f", "gen/other.py")
			return nil
		}, true},
		{"force-add a file of an ignored folder", func() error {
			gitT(t, root, "add", "-f", "ignored_dir/y.py")
			return nil
		}, true},
		{"delete a tracked file from the work tree", func() error { return os.Remove(filepath.Join(root, "build", "tool.py")) }, true},
	}
	openT(t, root, Options{}).Close()
	openReaderT(t, root).Close()
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		stale := s.stale
		r, err := OpenReader(context.Background(), root, Options{})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := r == nil; got != stale {
			t.Fatalf("%s: stale = %v, want %v", s.name, got, stale)
		}
		if r != nil {
			r.Close()
			continue
		}
		p := openT(t, root, Options{}) // rebuilds and persists the new state
		fresh := openT(t, root, Options{NoCache: true}).Graph()
		if got, want := indexedFiles(p.Graph()), indexedFiles(fresh); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: rebuilt files %q, fresh %q", s.name, got, want)
		}
		p.Close()
		r = openReaderT(t, root)
		for _, n := range fresh.nodes {
			got, err := r.RDeps(n.ID)
			if err != nil || !reflect.DeepEqual(nodeVals(got), nodeVals(fresh.RDeps(n.ID))) {
				t.Fatalf("%s: RDeps(%s) after rebuild differs (%v)", s.name, n.ID, err)
			}
		}
		r.Close()
	}
}

// The walk keeps only what it may index out of git's listing (gitKeep);
// fromGit on that part finds exactly what it finds on the whole listing:
// files, problems, Python package folders, Go modules.
func TestGitKeepChangesNothing(t *testing.T) {
	root := gitRepoT(t)
	for rel, body := range map[string]string{
		"pkg/__init__.py": "", "pkg/data.json": "{}\n", "pkg/README": "x\n", "go.mod": "module m\n",
		"pkg/go.mod": "module m/pkg\n", "pkg/requirements.txt": "x\n", "Makefile": "all:\n", "noext": "x\n",
		"a/b/c.go": "package b\n", "a/b/c.txt": "x\n", "web/app.js": "function a() {}\n",
	} {
		f := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, root, "add", "pkg", "a")
	if err := os.Symlink("main.py", filepath.Join(root, "link.py")); err != nil {
		t.Fatal(err)
	}
	out, err := gitLsFiles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	byExt := langByExt(registry())
	run := func(keep bool) *walkResult {
		w := &walker{root: root, maxSize: DefaultMaxFileSize, byExt: byExt, visited: map[dirID]bool{},
			res: &walkResult{info: &projectInfo{goModules: map[string]string{}, dirs: map[string]bool{}, initDirs: map[string]bool{}}}}
		var es []gitEntry
		if keep {
			es, _ = parseLsFiles(out, w.gitKeep)
		} else {
			es, _ = parseLsFiles(out, nil)
		}
		if err := w.fromGit(context.Background(), es); err != nil {
			t.Fatal(err)
		}
		return w.res
	}
	all, kept := run(false), run(true)
	if !reflect.DeepEqual(all, kept) {
		t.Errorf("walk of the kept entries differs:\n%+v\n%+v", kept, all)
	}
	if len(all.files) < 8 || len(all.info.initDirs) == 0 || len(all.info.goModules) < 2 {
		t.Errorf("fixture not exercised: %d files, init dirs %v, modules %v", len(all.files), all.info.initDirs, all.info.goModules)
	}
	es, listed := parseLsFiles(out, (&walker{byExt: byExt}).gitKeep)
	if len(es) >= listed {
		t.Errorf("gitKeep kept %d of %d entries: it drops nothing", len(es), listed)
	}
}
