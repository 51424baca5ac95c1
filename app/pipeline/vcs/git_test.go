package vcs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository with one commit holding files.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "config", "user.name", "Test")
	git(t, dir, "config", "user.email", "test@example.com")
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "init")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestCommitPathsLeavesOtherStagedChangesAlone(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c = 1\n"})
	// The user's own work: b.py staged, c.py modified but not staged.
	os.WriteFile(filepath.Join(dir, "b.py"), []byte("b = 2  # user's staged work\n"), 0o644)
	git(t, dir, "add", "b.py")
	os.WriteFile(filepath.Join(dir, "c.py"), []byte("c = 2  # user's unstaged work\n"), 0o644)
	// The landed patch: a.py modified, new.py created.
	os.WriteFile(filepath.Join(dir, "a.py"), []byte("a = 2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.py"), []byte("n = 1\n"), 0o644)

	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := r.CommitPaths(context.Background(), []string{"a.py", "new.py"}, "codeloom: fix a\n\nWhy: because")
	if err != nil {
		t.Fatal(err)
	}
	if hash == "" {
		t.Fatal("no commit made")
	}
	files := strings.Fields(git(t, dir, "show", "--name-only", "--format=", "HEAD"))
	if strings.Join(files, ",") != "a.py,new.py" {
		t.Fatalf("commit holds %v, want only a.py and new.py", files)
	}
	if msg := git(t, dir, "log", "-1", "--format=%B"); !strings.Contains(msg, "Why: because") {
		t.Fatalf("message %q", msg)
	}
	if got := strings.TrimSpace(git(t, dir, "diff", "--cached", "--name-only")); got != "b.py" {
		t.Fatalf("staged after commit: %q, want the user's b.py still staged", got)
	}
	if got := strings.TrimSpace(git(t, dir, "diff", "--name-only")); got != "c.py" {
		t.Fatalf("unstaged after commit: %q, want the user's c.py", got)
	}
	if got := git(t, dir, "show", ":b.py"); got != "b = 2  # user's staged work\n" {
		t.Fatalf("staged b.py content changed: %q", got)
	}
	// A deletion is committed as one.
	os.Remove(filepath.Join(dir, "new.py"))
	if _, err := r.CommitPaths(context.Background(), []string{"new.py"}, "codeloom: remove new"); err != nil {
		t.Fatal(err)
	}
	if out := git(t, dir, "ls-files", "new.py"); out != "" {
		t.Fatalf("new.py still tracked: %q", out)
	}
	// Nothing to commit: no commit.
	if h, err := r.CommitPaths(context.Background(), []string{"a.py"}, "noop"); err != nil || h != "" {
		t.Fatalf("no-op commit: %q %v", h, err)
	}
}

func TestCommitPathsOnUnbornBranchAndNotARepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	if _, err := Open(context.Background(), dir); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("plain folder: %v", err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "config", "user.name", "Test")
	git(t, dir, "config", "user.email", "test@example.com")
	os.WriteFile(filepath.Join(dir, "a.py"), []byte("a\n"), 0o644)
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.CommitPaths(context.Background(), []string{"a.py"}, "first")
	if err != nil || h == "" {
		t.Fatalf("first commit: %q %v", h, err)
	}
	if head, _ := r.Head(context.Background()); head != h {
		t.Fatalf("HEAD %s, want %s", head, h)
	}
}
