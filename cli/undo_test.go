package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// failingScript writes a script whose two patches never pass the tests.
func failingScript(t *testing.T) string {
	t.Helper()
	plan := `{"steps":[{"objective":"fix the boundary","files":["inventory/pricing.py"],"tests":[],"risks":""}]}`
	p1 := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 100:\n=======\n    if quantity > 101:\n>>>>>>> REPLACE"
	p2 := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 101:\n=======\n    if quantity > 102:\n>>>>>>> REPLACE"
	path := filepath.Join(t.TempDir(), "fail.script")
	sep := "\n" + ScriptSeparator + "\n"
	if err := os.WriteFile(path, []byte(strings.Join([]string{"edit", plan, p1, p2}, sep)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFailedTaskUnderYesIsRolledBack(t *testing.T) {
	root := taskSampleCopy(t)
	pricing := filepath.Join(root, "inventory/pricing.py")
	orig := taskReadFile(t, pricing)
	code, out, errs := taskRunCLI(t, "", "task", root, "fix the bulk discount boundary", "--yes", "--max-fix", "2", "--script", failingScript(t))
	if code != ExitFailure {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "Roll back the 2 changes this task made? → yes (automatic, --yes)") || !strings.Contains(out, "rolled back: inventory/pricing.py") {
		t.Fatalf("no automatic rollback:\n%s", out)
	}
	if taskReadFile(t, pricing) != orig {
		t.Fatal("the failed task's changes are still on disk")
	}
}

func TestKeepFailedThenRollbackByTaskID(t *testing.T) {
	root := taskSampleCopy(t)
	pricing := filepath.Join(root, "inventory/pricing.py")
	orig := taskReadFile(t, pricing)
	code, out, errs := taskRunCLI(t, "", "task", root, "fix the bulk discount boundary", "--yes", "--keep-failed", "--max-fix", "2", "--script", failingScript(t))
	if code != ExitFailure || strings.Contains(out, "Roll back") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if taskReadFile(t, pricing) == orig {
		t.Fatal("--keep-failed rolled back")
	}
	code, out, _ = taskRunCLI(t, "", "rollback", root, "--list")
	if code != ExitOK || !strings.Contains(out, "landed") {
		t.Fatalf("rollback --list: %d\n%s", code, out)
	}
	session := strings.Fields(out)[0]
	// Declined: nothing changes.
	code, out, _ = taskRunCLI(t, "n\n", "rollback", root, session)
	if code != ExitOK || !strings.Contains(out, "nothing changed") || taskReadFile(t, pricing) == orig {
		t.Fatalf("declined rollback: %d\n%s", code, out)
	}
	code, out, errs = taskRunCLI(t, "y\n", "rollback", root, session)
	if code != ExitOK || !strings.Contains(out, "Roll back the 2 changes task "+session+" made?") {
		t.Fatalf("rollback: %d\n%s\n%s", code, out, errs)
	}
	if taskReadFile(t, pricing) != orig {
		t.Fatal("rollback did not restore the file")
	}
	code, out, _ = taskRunCLI(t, "", "rollback", root, "last", "--yes")
	if code != ExitOK || !strings.Contains(out, "nothing to roll back") {
		t.Fatalf("second rollback: %d\n%s", code, out)
	}
}

func TestUndoRevertsTheLastLandedChange(t *testing.T) {
	root := taskSampleCopy(t)
	pricing := filepath.Join(root, "inventory/pricing.py")
	orig := taskReadFile(t, pricing)
	if code, out, errs := taskRunCLI(t, "", "task", root, "fix it", "--yes", "--script", sampleScript); code != ExitOK {
		t.Fatalf("task: %d\n%s\n%s", code, out, errs)
	}
	fixed := taskReadFile(t, pricing)
	// The last landed change is the debugger's fix; undo puts back the
	// coder's (wrong) patch, a second undo the original.
	code, out, errs := taskRunCLI(t, "", "undo", root, "--yes")
	if code != ExitOK || !strings.Contains(out, "restored: inventory/pricing.py") {
		t.Fatalf("undo: %d\n%s\n%s", code, out, errs)
	}
	mid := taskReadFile(t, pricing)
	if mid == fixed || mid == orig {
		t.Fatal("undo did not revert exactly the last change")
	}
	if code, out, _ := taskRunCLI(t, "", "undo", root, "--yes"); code != ExitOK || taskReadFile(t, pricing) != orig {
		t.Fatalf("second undo: %d\n%s", code, out)
	}
	if code, out, _ := taskRunCLI(t, "", "undo", root, "--yes"); code != ExitOK || !strings.Contains(out, "nothing to undo") {
		t.Fatalf("third undo: %d\n%s", code, out)
	}
}

func TestTaskCommitAndUndoInAGitRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := taskSampleCopy(t)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("config", "user.name", "Test")
	git("config", "user.email", "test@example.com")
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte(".codeloom/\n"), 0o644)
	git("add", "-A")
	git("commit", "-q", "-m", "init")
	start := git("rev-parse", "HEAD")
	os.WriteFile(filepath.Join(root, "NOTES.md"), []byte("staged by the user\n"), 0o644)
	git("add", "NOTES.md")

	code, out, errs := taskRunCLI(t, "", "task", root, "bulk_discount should give 10 % from 100 units", "--yes", "--commit", "--script", sampleScript)
	if code != ExitOK {
		t.Fatalf("task: %d\n%s\n%s", code, out, errs)
	}
	if n := git("rev-list", "--count", start+"..HEAD"); n != "2" {
		t.Fatalf("%s commits, want one per landed patch (2)", n)
	}
	if files := git("diff", "--name-only", start, "HEAD"); files != "inventory/pricing.py" {
		t.Fatalf("commits touch %q", files)
	}
	if staged := git("diff", "--cached", "--name-only"); staged != "NOTES.md" {
		t.Fatalf("staged: %q", staged)
	}
	code, out, errs = taskRunCLI(t, "", "undo", root, "--yes")
	if code != ExitOK || !strings.Contains(out, "revert commit") {
		t.Fatalf("undo: %d\n%s\n%s", code, out, errs)
	}
	if n := git("rev-list", "--count", start+"..HEAD"); n != "3" {
		t.Fatalf("%s commits after undo, want 3 (a revert commit)", n)
	}
	if staged := git("diff", "--cached", "--name-only"); staged != "NOTES.md" {
		t.Fatalf("staged after undo: %q", staged)
	}
}
