package pipeline

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"codeloom/app/memory"
	"codeloom/app/patch"
	"codeloom/models"
	"codeloom/runtime"
)

// versionsOf returns the kept whole-file contents of path.
func versionsOf(t *testing.T, st *memory.Store, path string) []string {
	t.Helper()
	vs, err := st.Versions(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		if !IsNodeVersion(v) {
			out = append(out, string(v.Content))
		}
	}
	return out
}

func TestApplyRecordsFirstThenWritesThenReports(t *testing.T) {
	f := newFixture(t)
	const path = "inventory/pricing.py"
	orig := tree(t, f.root)[path]
	eng := models.NewScripted("edit", planAnswer, directFix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	cfg := f.config(eng, ap)
	cfg.Policy = nil // every gate, as a user runs it
	var events []Event
	reported := func() bool {
		for _, e := range events {
			if e.Type == EventApplied || (e.Type == EventStepDone && e.Step == "apply") {
				return true
			}
		}
		return false
	}
	points := map[string]bool{}
	cfg.Hook = func(point string) {
		points[point] = true
		cur := tree(t, f.root)[path]
		kept := versionsOf(t, f.store, path)
		switch point {
		case "apply:recorded":
			if cur != orig {
				t.Errorf("at %s the file was already written", point)
			}
		case "apply:written":
			if cur == orig {
				t.Errorf("at %s the file was not written", point)
			}
		}
		if len(kept) != 1 || kept[0] != orig {
			t.Errorf("at %s the previous version is not in history: %d versions", point, len(kept))
		}
		if reported() {
			t.Errorf("at %s the apply was already reported", point)
		}
		landed, err := LandedChanges(f.store, "")
		if err != nil || len(landed) != 1 || landed[0].Files[0].Path != path {
			t.Errorf("at %s the landed record is missing: %+v %v", point, landed, err)
		}
	}
	cfg.OnEvent = func(e Event) {
		events = append(events, e)
		if e.Type == EventStepDone {
			// A printed step is already in the activity log.
			acts, err := f.store.Activities(0)
			if err != nil {
				t.Error(err)
			}
			found := false
			for _, a := range acts {
				if a.Action == e.Step && strings.Contains(a.Detail, "session=") {
					found = true
				}
			}
			if !found {
				t.Errorf("step %s reported before it was recorded", e.Step)
			}
		}
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Run(context.Background(), "fix the bulk discount boundary")
	if err != nil || out.Last().Status != StatusPassed {
		t.Fatalf("run: %v %+v", err, out.Last())
	}
	if !points["apply:recorded"] || !points["apply:written"] {
		t.Fatalf("hook points reached: %v", points)
	}
	// The gates (syntax check, tests, probe import) wrote no bytecode.
	filepath.WalkDir(f.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (d.Name() == "__pycache__" || strings.HasSuffix(d.Name(), ".pyc")) {
			t.Errorf("the checks wrote bytecode into the project: %s", p)
		}
		return nil
	})
}

func TestFailedTaskRollsBackInOneStep(t *testing.T) {
	f := newFixture(t)
	before := tree(t, f.root)
	wrong2 := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 101:\n=======\n    if quantity > 102:\n>>>>>>> REPLACE\n"
	eng := models.NewScripted("edit", planAnswer, wrongPatch, wrong2)
	ap := &ScriptedApprover{Default: true}
	cfg := f.config(eng, ap)
	cfg.MaxFixAttempts = 2
	p, out, _ := run(t, cfg, "fix the bulk discount boundary")
	if c := out.Last(); c.Status != StatusFailed || len(c.Changes) != 2 {
		t.Fatalf("cycle = %+v", c)
	}
	if tree(t, f.root)["inventory/pricing.py"] == before["inventory/pricing.py"] {
		t.Fatal("the failed task changed nothing; the test needs its patches on disk")
	}
	if !NeedsRollbackOffer(out) {
		t.Fatal("a failed task with changes must offer a rollback")
	}
	res, err := p.OfferRollback(context.Background(), out)
	if err != nil || res == nil {
		t.Fatalf("rollback: %+v %v", res, err)
	}
	var asked *Question
	for _, q := range ap.Questions() {
		if q.Kind == AskRollback {
			q := q
			asked = &q
		}
	}
	if asked == nil || asked.Title != "Roll back the 2 changes this task made?" {
		t.Fatalf("rollback question: %+v", asked)
	}
	sameFiles(t, before, tree(t, f.root))
	// The rolled-back content is itself kept, and nothing is left to roll back.
	kept := versionsOf(t, f.store, "inventory/pricing.py")
	if !strings.Contains(kept[len(kept)-1], "quantity > 102") && !strings.Contains(kept[0], "quantity > 102") {
		t.Fatalf("the content before the rollback was not kept: %d versions", len(kept))
	}
	u, err := PlanRollback(f.root, f.store, p.Session())
	if err != nil || u.Pending() != 0 {
		t.Fatalf("second rollback plan: %+v %v", u, err)
	}
}

func TestRollbackRefusesHandEditsUnlessForced(t *testing.T) {
	f := newFixture(t)
	before := tree(t, f.root)
	eng := models.NewScripted("edit", planAnswer, directFix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	p, out, _ := run(t, f.config(eng, ap), "fix the bulk discount boundary")
	if out.Last().Status != StatusPassed {
		t.Fatalf("cycle = %+v", out.Last())
	}
	abs := filepath.Join(f.root, "inventory", "pricing.py")
	edited := tree(t, f.root)["inventory/pricing.py"] + "# my own edit\n"
	os.WriteFile(abs, []byte(edited), 0o644)
	if _, err := RollbackTask(context.Background(), f.root, f.store, p.Session(), UndoOptions{}); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Fatalf("rollback over a hand edit: %v", err)
	}
	if got := tree(t, f.root)["inventory/pricing.py"]; got != edited {
		t.Fatal("a refused rollback wrote the file")
	}
	if _, err := RollbackTask(context.Background(), f.root, f.store, p.Session(), UndoOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, before, tree(t, f.root))
	kept := versionsOf(t, f.store, "inventory/pricing.py")
	found := false
	for _, k := range kept {
		found = found || k == edited
	}
	if !found {
		t.Fatal("the hand edit overwritten by a forced rollback is not kept")
	}
}

func TestUndoLastSkipsPatchesThatNeverLanded(t *testing.T) {
	f := newFixture(t)
	before := tree(t, f.root)
	eng := models.NewScripted("edit", planAnswer, directFix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	run(t, f.config(eng, ap), "fix the bulk discount boundary")
	// A record written just before a kill: its file never changed.
	vid, _ := f.store.AddVersion(memory.Version{Path: "inventory/models.py", Content: []byte(before["inventory/models.py"])})
	ghost := &Landed{ID: newLandedID(timeNowPlus(), "ghost"), Session: "ghost", Role: RoleCoder,
		Files: []LandedFile{{Path: "inventory/models.py", OldExists: true, OldVersion: vid, NewExists: true, NewSHA256: sha([]byte("never written"))}}}
	if err := putLanded(f.store, ghost); err != nil {
		t.Fatal(err)
	}
	u, err := PlanUndo(f.root, f.store)
	if err != nil || u.Pending() != 1 || u.Entries[0].Session == "ghost" {
		t.Fatalf("undo plan: %+v %v", u, err)
	}
	res, err := ApplyUndo(context.Background(), f.store, u, UndoOptions{})
	if err != nil || len(res.Restored) != 1 {
		t.Fatalf("undo: %+v %v", res, err)
	}
	sameFiles(t, before, tree(t, f.root))
	if u, _ := PlanUndo(f.root, f.store); u.Pending() != 0 {
		t.Fatalf("nothing should be left to undo: %+v", u.Entries)
	}
}

// A kill between recording a task's second patch and writing it leaves the
// file as the first patch wrote it: the task still rolls back.
func TestRollbackAfterAKillBetweenRecordAndWrite(t *testing.T) {
	f := newFixture(t)
	before := tree(t, f.root)
	eng := models.NewScripted("edit", planAnswer, directFix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	p, out, _ := run(t, f.config(eng, ap), "fix the bulk discount boundary")
	if out.Last().Status != StatusPassed {
		t.Fatalf("cycle = %+v", out.Last())
	}
	fixed := tree(t, f.root)["inventory/pricing.py"]
	vid, _ := f.store.AddVersion(memory.Version{Path: "inventory/pricing.py", Content: []byte(fixed)})
	ghost := &Landed{ID: newLandedID(timeNowPlus(), p.Session()), Session: p.Session(), Role: RoleDebugger,
		Files: []LandedFile{{Path: "inventory/pricing.py", OldExists: true, OldVersion: vid, NewExists: true, NewSHA256: sha([]byte("never written"))}}}
	if err := putLanded(f.store, ghost); err != nil {
		t.Fatal(err)
	}
	u, err := PlanRollback(f.root, f.store, p.Session())
	if err != nil || len(u.Conflicts()) != 0 || u.Pending() == 0 {
		t.Fatalf("rollback plan after a kill: %+v %v\n%s", u, err, u.Describe())
	}
	if _, err := RollbackTask(context.Background(), f.root, f.store, p.Session(), UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, before, tree(t, f.root))
}

func TestCommitEachLandedPatchLeavesTheIndexAlone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	f := newFixture(t)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = f.root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("config", "user.name", "Test")
	git("config", "user.email", "test@example.com")
	os.WriteFile(filepath.Join(f.root, ".gitignore"), []byte(".codeloom/\n__pycache__/\n"), 0o644)
	git("add", "-A")
	git("commit", "-q", "-m", "init")
	// The user's unrelated staged work.
	os.WriteFile(filepath.Join(f.root, "README.md"), []byte("my staged notes\n"), 0o644)
	git("add", "README.md")
	start := git("rev-parse", "HEAD")

	eng := models.NewScripted("edit", planAnswer, directFix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	cfg := f.config(eng, ap)
	cfg.Commit = true
	_, out, _ := run(t, cfg, "fix the bulk discount boundary")
	if out.Last().Status != StatusPassed {
		t.Fatalf("cycle = %+v", out.Last())
	}
	if got := git("rev-list", "--count", start+"..HEAD"); got != "1" {
		t.Fatalf("%s commits made, want 1", got)
	}
	if got := git("show", "--name-only", "--format=", "HEAD"); got != "inventory/pricing.py" {
		t.Fatalf("the commit holds %q, want only the patched file", got)
	}
	msg := git("log", "-1", "--format=%B")
	if !strings.Contains(msg, "fix the bulk discount boundary") || !strings.Contains(msg, "modify inventory/pricing.py") {
		t.Fatalf("commit message does not say what and why:\n%s", msg)
	}
	if got := git("diff", "--cached", "--name-only"); got != "README.md" {
		t.Fatalf("staged after the commit: %q, want the user's README.md", got)
	}
	landed, _ := LandedChanges(f.store, "")
	if len(landed) != 1 || landed[0].Commit != git("rev-parse", "HEAD") {
		t.Fatalf("landed record does not name the commit: %+v", landed)
	}
	// Undo makes a revert commit of that file only.
	res, err := UndoLast(context.Background(), f.root, f.store, UndoOptions{})
	if err != nil || res.Commit == "" {
		t.Fatalf("undo: %+v %v", res, err)
	}
	if got := git("show", "--name-only", "--format=", "HEAD"); got != "inventory/pricing.py" {
		t.Fatalf("the revert commit holds %q", got)
	}
	if got := git("diff", start, "HEAD", "--name-only"); got != "" {
		t.Fatalf("after undo HEAD differs from the start in %q", got)
	}
	if got := git("diff", "--cached", "--name-only"); got != "README.md" {
		t.Fatalf("staged after undo: %q", got)
	}
}

// slowRunner reports every run as ended by its timeout.
type slowRunner struct{}

func (slowRunner) Run(ctx context.Context, s runtime.Spec) (runtime.Result, error) {
	return runtime.Result{Command: s.Command, ExitCode: -1, Limit: runtime.LimitTimeout, TimedOut: true}, nil
}

func TestDryRunCompileTimeoutSaysSo(t *testing.T) {
	f := newFixture(t)
	ap := &ScriptedApprover{Default: true}
	cfg := f.config(nil, ap)
	cfg.Runner = slowRunner{}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := patch.Parse(directFix)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.dryRun(context.Background(), pt)
	if err == nil || !strings.Contains(err.Error(), "timed out") || strings.Contains(err.Error(), "does not compile") {
		t.Fatalf("dry run under a timeout: %v", err)
	}
}

func TestSyntaxGateWritesNoBytecode(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.py"), []byte("x = 1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.py"), []byte("def f(:\n"), 0o644)
	cmd := exec.Command(pySyntaxCommand(py, []string{"ok.py", "bad.py"})[0], pySyntaxCommand(py, []string{"ok.py", "bad.py"})[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bad.py") || !strings.Contains(string(out), "SyntaxError") {
		t.Fatalf("syntax check of a bad file: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "__pycache__")); err == nil {
		t.Fatal("the syntax check wrote __pycache__")
	}
}

// timeNowPlus is a time after every record the test made.
func timeNowPlus() time.Time { return time.Now().Add(time.Hour) }
