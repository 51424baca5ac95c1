package patch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// applyAnswer parses and applies answer to root.
func applyAnswer(t *testing.T, root, answer string) (*Changeset, error) {
	t.Helper()
	p, err := Parse(answer)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return Apply(context.Background(), root, p, Options{})
}

const crlfPy = "def total(items):\r\n    return sum(i.qty for i in items[1:])\r\n\r\ndef name():\r\n    return 'x'\r\n"

func TestCRLFFilePatchedByLFAndCRLFReplace(t *testing.T) {
	want := "def total(items):\r\n    return sum(i.qty for i in items)\r\n\r\ndef name():\r\n    return 'x'\r\n"
	for name, nl := range map[string]string{"lf": "\n", "crlf": "\r\n"} {
		t.Run(name, func(t *testing.T) {
			root := writeTree(t, map[string]string{"stock.py": crlfPy})
			ans := strings.Join([]string{"stock.py", "<<<<<<< SEARCH", "    return sum(i.qty for i in items[1:])",
				"=======", "    return sum(i.qty for i in items)", ">>>>>>> REPLACE", ""}, nl)
			if _, err := applyAnswer(t, root, ans); err != nil {
				t.Fatalf("apply: %v", err)
			}
			if got := snapshot(t, root)["stock.py"]; got != want {
				t.Fatalf("got %q, want %q (CRLF kept)", got, want)
			}
		})
	}
}

func TestCRLFFilePatchedByUnifiedDiff(t *testing.T) {
	want := "def total(items):\r\n    return sum(i.qty for i in items)\r\n    # fixed\r\n\r\ndef name():\r\n    return 'x'\r\n"
	diff := "--- a/stock.py\n+++ b/stock.py\n@@ -1,3 +1,4 @@\n def total(items):\n-    return sum(i.qty for i in items[1:])\n+    return sum(i.qty for i in items)\n+    # fixed\n \n"
	for name, d := range map[string]string{"lf": diff, "crlf": strings.ReplaceAll(diff, "\n", "\r\n")} {
		t.Run(name, func(t *testing.T) {
			root := writeTree(t, map[string]string{"stock.py": crlfPy})
			if _, err := applyAnswer(t, root, d); err != nil {
				t.Fatalf("apply: %v", err)
			}
			if got := snapshot(t, root)["stock.py"]; got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
}

func TestMixedLineEndingsKeepEachLine(t *testing.T) {
	// Mostly LF with one CRLF line: untouched lines keep their bytes, the
	// added line gets the dominant LF.
	root := writeTree(t, map[string]string{"a.py": "a = 1\r\nb = 2\nc = 3\nd = 4\n"})
	ans := "a.py\n<<<<<<< SEARCH\nc = 3\n=======\nc = 30\n>>>>>>> REPLACE\n"
	if _, err := applyAnswer(t, root, ans); err != nil {
		t.Fatal(err)
	}
	if got, want := snapshot(t, root)["a.py"], "a = 1\r\nb = 2\nc = 30\nd = 4\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestReplaceAtUnterminatedEnd(t *testing.T) {
	root := writeTree(t, map[string]string{"a.py": "x = 1\r\ny = 2"})
	ans := "a.py\n<<<<<<< SEARCH\ny = 2\n=======\ny = 3\n>>>>>>> REPLACE\n"
	if _, err := applyAnswer(t, root, ans); err != nil {
		t.Fatal(err)
	}
	if got, want := snapshot(t, root)["a.py"], "x = 1\r\ny = 3"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestConfineRefusesSymlinkIntoGitOrCodeloom(t *testing.T) {
	root := writeTree(t, map[string]string{".git/config": "[core]\n", ".codeloom/policy.yaml": "max_reasks: 1\n", "a.py": "x = 1\n"})
	for link, target := range map[string]string{"gitmeta": ".git", "meta": ".codeloom", "cfg": ".git/config", "GM": ".GIT"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"gitmeta/config", "gitmeta/hooks/pre-commit", "meta/policy.yaml", "cfg"} {
		if _, _, err := Confine(root, rel); err == nil {
			t.Errorf("Confine(%q) accepted a path that resolves into a protected folder", rel)
		}
	}
	before := snapshot(t, root)
	ans := "FILE: gitmeta/config\n```\n[core]\n\tfsmonitor = touch /tmp/pwned\n```\n"
	if _, err := applyAnswer(t, root, ans); err == nil {
		t.Fatal("a patch wrote through a symlink into .git")
	}
	sameTree(t, before, snapshot(t, root))
	if _, _, err := Confine(root, "a.py"); err != nil {
		t.Fatalf("ordinary file refused: %v", err)
	}
}

func TestReadRegularNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadRegular(fifo, 1<<20); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Fatalf("FIFO: %v, want ErrNotRegular", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadRegular blocked on a FIFO")
	}
	if _, err := ReadRegular("/dev/zero", 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("/dev/zero: %v, want ErrNotRegular", err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, 2048), 0o644)
	if _, err := ReadRegular(big, 1024); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("big: %v, want ErrTooLarge", err)
	}
	if b, err := ReadRegular(big, 4096); err != nil || len(b) != 2048 {
		t.Fatalf("regular: %d bytes, %v", len(b), err)
	}
}

func TestPatchOnFIFOFailsWithoutHanging(t *testing.T) {
	root := writeTree(t, map[string]string{"a.py": "x = 1\n"})
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.py"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	os.Symlink("/dev/zero", filepath.Join(root, "zero.py"))
	ans := "pipe.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
	done := make(chan error, 1)
	go func() { _, err := applyAnswer(t, root, ans); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("patch on a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("patching a FIFO hung")
	}
}

func TestParseRefusesHugeAnswer(t *testing.T) {
	ans := "FILE: big.txt\n```\n" + strings.Repeat("x\n", MaxAnswerBytes/2+10) + "```\n"
	_, err := Parse(ans)
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("Parse of a %d-byte answer: %v", len(ans), err)
	}
}

func TestWriteRefusesFileChangedSincePrepare(t *testing.T) {
	root := writeTree(t, map[string]string{"a.py": "x = 1\n"})
	p, _ := Parse("a.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n")
	cs, err := Prepare(root, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "a.py"), []byte("x = 5\n"), 0o644)
	err = Write(context.Background(), cs)
	var ce *ConflictError
	if !errors.As(err, &ce) || !ce.Applying {
		t.Fatalf("Write after a concurrent change: %v", err)
	}
	if got := snapshot(t, root)["a.py"]; got != "x = 5\n" {
		t.Fatalf("file overwritten: %q", got)
	}
}

func TestCleanStaleDryRunsRemovesOnlyDeadOwners(t *testing.T) {
	tmp := t.TempDir()
	// A PID that is certainly dead: a child that has exited and been reaped.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := cmd.Process.Pid
	mk := func(name string) string {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := mk(DryRunDirPrefix + itoa(dead) + "-123")
	mine := mk(DryRunDirPrefix + itoa(os.Getpid()) + "-456")
	alive := mk(DryRunDirPrefix + "1-789") // init is alive
	unknown := mk(DryRunDirPrefix + "abc")
	other := mk("something-else")
	removed, err := CleanStaleDryRuns(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != stale {
		t.Fatalf("removed %v, want only %s", removed, stale)
	}
	for _, p := range []string{mine, alive, unknown, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale folder still there: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
