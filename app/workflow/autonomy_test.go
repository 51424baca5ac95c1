package workflow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"codeloom/app/memory"
	"codeloom/app/pipeline"
	"codeloom/models"
	"codeloom/runtime"
)

// fakeCycler records requests and answers with preset outcomes.
type fakeCycler struct {
	mu       sync.Mutex
	requests []string
	fail     map[int]bool // 1-based cycle numbers that fail
	onCycle  func(n int)
}

func (f *fakeCycler) Cycle(ctx context.Context, request string) (bool, string, error) {
	f.mu.Lock()
	f.requests = append(f.requests, request)
	n := len(f.requests)
	f.mu.Unlock()
	if f.onCycle != nil {
		f.onCycle(n)
	}
	if err := ctx.Err(); err != nil {
		return false, "", err
	}
	if f.fail[n] {
		return false, "", errors.New("gates failed")
	}
	return true, "passed", nil
}

func proposals(n int) *models.Scripted {
	s := models.NewScripted()
	for i := 1; i <= n; i++ {
		s.Add("Add feature number " + string(rune('0'+i)) + ".\n\nextra text ignored")
	}
	return s
}

func TestAutonomyStopsAtCycleBudget(t *testing.T) {
	cy := &fakeCycler{}
	appr := &pipeline.ScriptedApprover{Default: true}
	st, err := memory.Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.AddLesson(memory.Lesson{Task: "count words", Failure: "split on spaces", Fix: "split()"})
	eng := proposals(5)
	a := &Autonomy{Settings: AutonomySettings{Enabled: true, MaxCycles: 2}, Engine: eng, Approver: appr, Cycler: cy, Lessons: st, Activity: st}
	rep, err := a.Run(context.Background(), "a word counter")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stop != StopCycles || len(rep.Cycles) != 2 || len(cy.requests) != 2 {
		t.Fatalf("report %+v, requests %v", rep, cy.requests)
	}
	if cy.requests[0] != "Add feature number 1" || cy.requests[1] != "Add feature number 2" {
		t.Fatalf("requests %q", cy.requests)
	}
	qs := appr.Questions()
	if len(qs) != 2 || qs[0].Kind != AskCycle || qs[0].Title != "Start the next cycle: Add feature number 1?" {
		t.Fatalf("questions %+v", qs)
	}
	// The second proposal knows the first cycle and the lessons.
	calls := eng.Calls()
	if p := calls[1].Messages[1].Content; !strings.Contains(p, "- Add feature number 1") || !strings.Contains(p, "split on spaces") || !strings.Contains(p, "a word counter") {
		t.Fatalf("proposal prompt:\n%s", p)
	}
	acts, _ := st.Activities(5)
	if len(acts) == 0 || acts[0].Module != "autonomy" || acts[0].Outcome != StopCycles {
		t.Fatalf("activity %+v", acts)
	}
}

func TestAutonomyStoppedByNo(t *testing.T) {
	cy := &fakeCycler{}
	appr := &pipeline.ScriptedApprover{Answers: map[string][]bool{AskCycle: {true, false}}}
	a := &Autonomy{Settings: AutonomySettings{Enabled: true, MaxCycles: 10}, Engine: proposals(5), Approver: appr, Cycler: cy}
	rep, err := a.Run(context.Background(), "task")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stop != StopDeclined || len(cy.requests) != 1 || appr.AskedKind(AskCycle) != 2 {
		t.Fatalf("report %+v, cycles run %d", rep, len(cy.requests))
	}
}

func TestAutonomyWallBudgetFailureAndCancel(t *testing.T) {
	// Wall budget on a fake clock: each cycle "takes" 40 minutes of a 1h budget.
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cy := &fakeCycler{onCycle: func(int) { mu.Lock(); now = now.Add(40 * time.Minute); mu.Unlock() }}
	a := &Autonomy{Settings: AutonomySettings{Enabled: true, MaxCycles: 10, MaxWall: Duration(time.Hour)}, Engine: proposals(5),
		Approver: &pipeline.ScriptedApprover{Default: true}, Cycler: cy, Now: clock}
	rep, err := a.Run(context.Background(), "task")
	if err != nil || rep.Stop != StopWall || len(rep.Cycles) != 2 {
		t.Fatalf("wall budget: %v %+v", err, rep)
	}
	// A failed cycle ends the run.
	cy = &fakeCycler{fail: map[int]bool{2: true}}
	a = &Autonomy{Settings: AutonomySettings{Enabled: true, MaxCycles: 10}, Engine: proposals(5), Approver: &pipeline.ScriptedApprover{Default: true}, Cycler: cy}
	rep, _ = a.Run(context.Background(), "task")
	if rep.Stop != StopFailed || len(rep.Cycles) != 2 || rep.Cycles[1].OK {
		t.Fatalf("failed cycle: %+v", rep)
	}
	// Ctrl-C during a cycle stops the run.
	ctx, cancel := context.WithCancel(context.Background())
	cy = &fakeCycler{onCycle: func(n int) {
		if n == 1 {
			cancel()
		}
	}}
	a = &Autonomy{Settings: AutonomySettings{Enabled: true, MaxCycles: 10}, Engine: proposals(5), Approver: &pipeline.ScriptedApprover{Default: true}, Cycler: cy}
	rep, _ = a.Run(ctx, "task")
	if rep.Stop != StopCanceled || len(cy.requests) != 1 {
		t.Fatalf("cancel: %+v", rep)
	}
	// Off by default: nothing runs.
	cy = &fakeCycler{}
	a = &Autonomy{Engine: proposals(1), Approver: &pipeline.ScriptedApprover{Default: true}, Cycler: cy}
	if rep, _ := a.Run(context.Background(), "task"); rep.Stop != StopDisabled || len(cy.requests) != 0 {
		t.Fatalf("disabled: %+v", rep)
	}
	// The model has no idea: stop.
	a = &Autonomy{Settings: AutonomySettings{Enabled: true}, Engine: models.NewScripted("NONE"), Approver: &pipeline.ScriptedApprover{Default: true}, Cycler: cy}
	if rep, _ := a.Run(context.Background(), "task"); rep.Stop != StopNoIdea {
		t.Fatalf("no idea: %+v", rep)
	}
}

func TestAutonomySettingsFile(t *testing.T) {
	root := t.TempDir()
	s, err := LoadAutonomy(root)
	if err != nil || s.Enabled || s.MaxCycles != DefaultMaxCycles || s.MaxWall.D() != DefaultMaxWall {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	if err := SaveAutonomy(root, AutonomySettings{Enabled: true, MaxCycles: 5, MaxWall: Duration(10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	s, err = LoadAutonomy(root)
	if err != nil || !s.Enabled || s.MaxCycles != 5 || s.MaxWall.D() != 10*time.Minute {
		t.Fatalf("saved: %+v %v", s, err)
	}
	os.WriteFile(filepath.Join(root, ".codeloom", AutonomyFile), []byte("enabled: yes please\n"), 0o644)
	if _, err := LoadAutonomy(root); err == nil {
		t.Fatal("bad settings accepted")
	}
	os.WriteFile(filepath.Join(root, ".codeloom", AutonomyFile), []byte("enabld: true\n"), 0o644)
	if _, err := LoadAutonomy(root); err == nil || !strings.Contains(err.Error(), "enabld") {
		t.Fatalf("typo accepted: %v", err)
	}
}

// TestRestoreSnapshot: a failed cycle's edits, deletions and new files are undone.
func TestRestoreSnapshot(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.py"), []byte("A\n"), 0o644)
	os.WriteFile(filepath.Join(root, "b.py"), []byte("B\n"), 0o644)
	snap, err := runtime.NewWorkspace(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	os.WriteFile(filepath.Join(root, "a.py"), []byte("broken\n"), 0o644)
	os.Remove(filepath.Join(root, "b.py"))
	os.WriteFile(filepath.Join(root, "new.py"), []byte("N\n"), 0o644)
	if err := RestoreSnapshot(root, snap); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(root, "a.py"))
	b, _ := os.ReadFile(filepath.Join(root, "b.py"))
	_, errN := os.Stat(filepath.Join(root, "new.py"))
	if string(a) != "A\n" || string(b) != "B\n" || !os.IsNotExist(errN) {
		t.Fatalf("a=%q b=%q new.py: %v", a, b, errN)
	}
}

// wordcountProject writes the verified word counter (as new-project builds it).
func wordcountProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	answers := scriptAnswers(t, "wordcount.script")
	for _, a := range []string{answers[3], answers[4]} {
		if msg := applyAnswer(context.Background(), root, a); msg != "" {
			t.Fatal(msg)
		}
	}
	fixed := strings.Replace(readFile(t, root, "wordcount.py"), "    if not text:\n        return 0\n    return len(text.split(\" \"))", "    return len(text.split())", 1)
	if err := os.WriteFile(filepath.Join(root, "wordcount.py"), []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func readFile(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const linesPlan = `{"steps":[{"objective":"add count_lines","files":["wordcount.py"],"tests":["test_wordcount.py"],"risks":"none"}]}`

// TestAutonomyWithPipeline runs real pipeline cycles on a real project: the
// first cycle adds a function (verified by the project's tests), the user
// says no to the second; in another run a cycle that breaks the tests is
// rolled back to the last verified state.
func TestAutonomyWithPipeline(t *testing.T) {
	needPython(t)
	root := wordcountProject(t)
	good := "wordcount.py\n<<<<<<< SEARCH\ndef main(argv=None):\n=======\ndef count_lines(text):\n    \"\"\"Return the number of lines in text.\"\"\"\n    return len(text.splitlines())\n\n\ndef main(argv=None):\n>>>>>>> REPLACE\n"
	eng := models.NewScripted("Add a count_lines function", linesPlan, good, "Add a --json flag")
	appr := &pipeline.ScriptedApprover{Default: true, Answers: map[string][]bool{AskCycle: {true, false}}}
	st, err := memory.OpenProject(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := pipeline.Config{Root: root, Engine: eng, Approver: appr, Guidance: appr, Memory: st, Kind: pipeline.KindEdit, MaxFixAttempts: 1}
	a := &Autonomy{Settings: AutonomySettings{Enabled: true, MaxCycles: 5}, Engine: eng, Approver: appr,
		Cycler: &TaskCycler{Root: root, Runner: &TaskRunner{Config: cfg}}, Lessons: st}
	rep, err := a.Run(context.Background(), "a word counter")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stop != StopDeclined || len(rep.Cycles) != 1 || !rep.Cycles[0].OK {
		t.Fatalf("report %+v", rep)
	}
	if !strings.Contains(readFile(t, root, "wordcount.py"), "def count_lines") {
		t.Fatal("the verified cycle's change is missing")
	}
	verified := readFile(t, root, "wordcount.py")

	// A cycle whose patch breaks the tests and whose fix is unusable: rolled back.
	bad := "wordcount.py\n<<<<<<< SEARCH\n    return len(text.split())\n=======\n    return len(text.split(\" \"))\n>>>>>>> REPLACE\n"
	eng2 := models.NewScripted("Simplify count_words", linesPlan, bad, "no idea, sorry", "no idea, sorry", "no idea, sorry")
	appr2 := &pipeline.ScriptedApprover{Default: true}
	cfg.Engine, cfg.Approver, cfg.Guidance = eng2, appr2, appr2
	a = &Autonomy{Settings: AutonomySettings{Enabled: true, MaxCycles: 5}, Engine: eng2, Approver: appr2,
		Cycler: &TaskCycler{Root: root, Runner: &TaskRunner{Config: cfg}}}
	rep, err = a.Run(context.Background(), "a word counter")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("failed cycle: %s / %s", rep.Cycles[0].Err, rep.Cycles[0].Summary)
	if rep.Stop != StopFailed || len(rep.Cycles) != 1 || rep.Cycles[0].OK {
		t.Fatalf("report %+v", rep)
	}
	if got := readFile(t, root, "wordcount.py"); got != verified {
		t.Fatalf("not rolled back to the last verified state:\n%s", got)
	}
}
