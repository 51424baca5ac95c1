package codegraph

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// gitT runs git in dir, failing the test on error.
func gitT(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// gitRepoT builds a real git repository exercising every exclude source.
func gitRepoT(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := writeTree(t, map[string]string{
		"main.py":             "def main():\n    return 1\n",
		"secret.py":           "def secret():\n    return 1\n", // .git/info/exclude
		"local.py":            "def local():\n    return 1\n",  // core.excludesFile
		"gen/keep_me.py":      "def keep():\n    return 1\n",   // re-included by !gen/keep_me.py
		"gen/other.py":        "def other():\n    return 1\n",  // ignored by gen/*
		"build/tool.py":       "def tool():\n    return 1\n",   // tracked: never skipped
		"dist/out.py":         "def out():\n    return 1\n",    // untracked, not ignored: skipped by name
		"node_modules/m/x.js": "function x() {}\n",             // untracked dependency folder
		"ignored_dir/y.py":    "def y():\n    return 1\n",
		".gitignore":          "gen/*\n!gen/keep_me.py\nignored_dir/\n",
		"excludes.txt":        "local.py\n",
	})
	gitT(t, root, "init", "-q")
	gitT(t, root, "config", "core.excludesFile", filepath.Join(root, "excludes.txt"))
	if err := os.WriteFile(filepath.Join(root, ".git", "info", "exclude"), []byte("secret.py\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, root, "add", "main.py", ".gitignore", "build/tool.py")
	gitT(t, root, "commit", "-q", "-m", "init")
	return root
}

func indexedFiles(g *Graph) []string {
	var out []string
	for _, n := range g.Nodes() {
		if n.Kind == KindFile {
			out = append(out, n.Path)
		}
	}
	sort.Strings(out)
	return out
}

// TestGitFileSet: in a git work tree the file set is git's
// (ls-files -co --exclude-standard), plus skipping untracked dependency and
// build folders.
func TestGitFileSet(t *testing.T) {
	root := gitRepoT(t)
	p := openT(t, root, Options{NoCache: true})
	got := strings.Join(indexedFiles(p.Graph()), " ")
	want := "build/tool.py gen/keep_me.py main.py"
	if got != want {
		t.Errorf("indexed %q, want %q", got, want)
	}
	// An update keeps git's view: the tracked file under build/ is re-read,
	// the excluded one stays out.
	if err := os.WriteFile(filepath.Join(root, "build", "tool.py"), []byte("def tool2():\n    return 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := p.UpdateFiles(context.Background(), []string{"build/tool.py", "secret.py", "gen/other.py"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range g.NodesInFile("build/tool.py") {
		found = found || n.Name == "tool2"
	}
	if !found {
		t.Errorf("update of tracked build/tool.py not indexed")
	}
	if got := strings.Join(indexedFiles(g), " "); got != want {
		t.Errorf("after update indexed %q, want %q", got, want)
	}
}

// TestGitMissingFallsBack: without a git binary the folder is walked with
// the .gitignore rules, as outside git.
func TestGitMissingFallsBack(t *testing.T) {
	root := gitRepoT(t)
	t.Setenv("PATH", t.TempDir()) // no git on it
	p := openT(t, root, Options{NoCache: true})
	got := " " + strings.Join(indexedFiles(p.Graph()), " ") + " "
	// .gitignore as before (info/exclude and core.excludesFile are git's
	// own, unknown to the fallback; build/ and dist/ skipped by name).
	for _, f := range []string{"main.py", "secret.py", "local.py"} {
		if !strings.Contains(got, " "+f+" ") {
			t.Errorf("%s not indexed by the fallback walk: %q", f, got)
		}
	}
	for _, f := range []string{"gen/other.py", "ignored_dir/y.py", "build/tool.py", "dist/out.py"} {
		if strings.Contains(got, " "+f+" ") {
			t.Errorf("%s indexed by the fallback walk: %q", f, got)
		}
	}
}

func TestParseLsFiles(t *testing.T) {
	es, listed := parseLsFiles([]byte("H a.py\x00? new\nline.py\x00S sub/\x00M c.py\x00M c.py\x00"), nil)
	if listed != 5 {
		t.Errorf("listed %d records, want 5", listed)
	}
	if len(es) != 4 || es[0].rel != "a.py" || !es[0].tracked || es[1].rel != "new\nline.py" || es[1].tracked ||
		!es[2].dir || es[2].rel != "sub" || es[3].rel != "c.py" {
		t.Errorf("parsed %+v", es)
	}
}
