package memory

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// holderEnv makes the test binary another process that holds the project's
// store and commits to it without pause, as the desktop app would.
const holderEnv = "CODELOOM_MEMORY_HOLDER"

func holdAndWrite(root string) {
	s, err := OpenProject(root)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	os.Stdout.WriteString("ready\n")
	for i := 0; ; i++ {
		// Each commit rewrites the cache and adds a record, so pages are
		// freed and reused all the time.
		if err := s.PutBlobs("graph.files", map[string][]byte{"k" + strconv.Itoa(i%40): []byte(strings.Repeat(strconv.Itoa(i), 200+i%3000))}, nil); err != nil {
			os.Exit(4)
		}
		if _, err := s.AddLesson(Lesson{Task: strconv.Itoa(i)}); err != nil {
			os.Exit(5)
		}
	}
}

func TestReaderBesideAWriterProcess(t *testing.T) {
	root := t.TempDir()
	s, err := OpenProject(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddLesson(Lesson{Task: "before"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"="+root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if sc := bufio.NewScanner(out); !sc.Scan() || sc.Text() != "ready" {
		t.Fatal("holder did not start")
	}

	// A writer cannot get in: the lock is really held.
	if _, err := openProject(root, 200*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("second writer: %v", err)
	}
	prev := 0
	for i := 0; i < 20; i++ {
		r, err := OpenProjectReader(root)
		if err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
		if !r.ReadOnly() {
			t.Fatalf("reader %d: not a snapshot although the store is held", i)
		}
		ls, err := r.Lessons(0)
		if err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
		// Consistent: records count up from "before" with no gap.
		if len(ls) < prev || ls[len(ls)-1].Task != "before" {
			t.Fatalf("reader %d: %d lessons (had %d), oldest %q", i, len(ls), prev, ls[len(ls)-1].Task)
		}
		for j, l := range ls[:len(ls)-1] {
			if want := strconv.Itoa(len(ls) - 2 - j); l.Task != want {
				t.Fatalf("reader %d: lesson %d is %q, want %q", i, j, l.Task, want)
			}
		}
		prev = len(ls)
		if err := r.ForEachBlob("graph.files", func(string, []byte) error { return nil }); err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
		if _, err := r.AddLesson(Lesson{Task: "x"}); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("reader %d: a write to the snapshot: %v", i, err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if prev < 3 {
		t.Fatalf("the writer committed only %d lessons; the test proved little", prev)
	}
	left, _ := filepath.Glob(filepath.Join(DataDir(root), "*snapshot*"))
	if len(left) != 0 {
		t.Fatalf("snapshots left behind: %v", left)
	}
}

func TestReaderAloneUsesTheStore(t *testing.T) {
	root := t.TempDir()
	r, err := OpenProjectReader(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.ReadOnly() {
		t.Fatal("a reader alone got a snapshot")
	}
	if _, err := r.AddLesson(Lesson{Task: "x"}); err != nil {
		t.Fatal(err)
	}
}

func TestGitIgnoreKeepsPolicyAndWorkflowsTrackable(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	git := func(args ...string) string {
		c := exec.Command("git", args...)
		c.Dir = root
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	s, err := OpenProject(root)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	dd := DataDir(root)
	os.MkdirAll(filepath.Join(dd, "workflows"), 0o755)
	for _, f := range []string{"policy.yaml", "workflows/ci.yaml", "codeloom.db.damaged-20260101T000000Z", "codeloom.db.snapshot-1"} {
		os.WriteFile(filepath.Join(dd, f), []byte("x: 1\n"), 0o644)
	}
	st := git("status", "--porcelain", "--untracked-files=all")
	for _, want := range []string{".codeloom/policy.yaml", ".codeloom/workflows/ci.yaml", ".codeloom/.gitignore"} {
		if !strings.Contains(st, want) {
			t.Errorf("git status lacks %s:\n%s", want, st)
		}
	}
	if strings.Contains(st, "codeloom.db") {
		t.Errorf("git status shows the store:\n%s", st)
	}
}

func TestOldGitIgnoreUpgradedOnlyWhenUntouched(t *testing.T) {
	for _, tc := range []struct{ have, want string }{
		{oldGitIgnore, GitIgnore},
		{oldGitIgnore + "extra\n", oldGitIgnore + "extra\n"},
		{"*\n", "*\n"},
	} {
		root := t.TempDir()
		os.MkdirAll(DataDir(root), 0o755)
		path := filepath.Join(DataDir(root), ".gitignore")
		os.WriteFile(path, []byte(tc.have), 0o644)
		s, err := OpenProject(root)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if got, _ := os.ReadFile(path); string(got) != tc.want {
			t.Errorf("had %q: now %q, want %q", tc.have, got, tc.want)
		}
	}
}
