package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"codeloom/app/memory"
	"codeloom/app/pipeline"
	"codeloom/models"
)

// scriptAnswers reads a testdata script (answers separated by the same
// "----- answer -----" lines `codeloom task --script` uses).
func scriptAnswers(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(data), "\n----- answer -----\n")
	for i := range parts {
		parts[i] = strings.Trim(parts[i], "\n") + "\n"
	}
	return parts
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
}

func TestBuiltinsValidate(t *testing.T) {
	for _, name := range BuiltinNames() {
		w, err := Builtin(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := Validate(w, TypeBuild, TypeWrite, TypeTask); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := Builtin("nope"); err == nil || !strings.Contains(err.Error(), "new-project") {
		t.Fatalf("unknown builtin: %v", err)
	}
}

// TestNewProjectEndToEnd builds a small Python program from requirements
// with a scripted model: the coder's first version has a bug the tester's
// tests catch for real, the debugger fixes it, the tests pass for real, and
// after approval the project is written with its history.
func TestNewProjectEndToEnd(t *testing.T) {
	needPython(t)
	eng := models.NewScripted(scriptAnswers(t, "wordcount.script")...)
	dest := filepath.Join(t.TempDir(), "wordcount")
	appr := &pipeline.ScriptedApprover{Default: true}
	var mu sync.Mutex
	var events []Event
	sum, err := NewProject(context.Background(), NewProjectConfig{
		Requirements: "A command line tool that counts the words of a text file or of standard input.",
		Dest:         dest, Engine: eng, Approver: appr, Model: "script",
		OnEvent: func(ev Event) { mu.Lock(); events = append(events, ev); mu.Unlock() },
	})
	if err != nil {
		t.Fatalf("new project: %v\n%s", err, sum.Text())
	}
	if !sum.Written || sum.Entry != "wordcount.py" || len(sum.DebugLog) != 1 || !sum.DebugLog[0].Passed {
		t.Fatalf("summary:\n%s", sum.Text())
	}
	if sum.Tests.Passed != 4 || sum.Tests.Failed+sum.Tests.Errors != 0 {
		t.Fatalf("tests: %+v", sum.Tests)
	}
	if !strings.Contains(sum.DebugLog[0].Failure, "test_whitespace") {
		t.Fatalf("the debugger was not shown the failing test: %q", sum.DebugLog[0].Failure)
	}
	if eng.Remaining() != 0 {
		t.Fatalf("%d scripted answers unused", eng.Remaining())
	}
	// The debugger got the failing output and the files.
	calls := eng.Calls()
	dbg := calls[len(calls)-1].Messages[1].Content
	if !strings.Contains(dbg, "FILE: wordcount.py") || !strings.Contains(dbg, "FAIL") {
		t.Fatalf("debugger prompt lacks the code or the failure:\n%s", dbg)
	}
	// Every role's prompt starts from the requirements.
	for i, c := range calls[:5] {
		if !strings.Contains(c.Messages[1].Content, "counts the words") {
			t.Fatalf("prompt %d lacks the requirements", i)
		}
	}
	// The written project really works, outside CodeLoom.
	for _, f := range []string{"wordcount.py", "test_wordcount.py"} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("python3", "-m", "unittest", "-q")
	cmd.Dir = dest
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tests of the written project fail: %v\n%s", err, out)
	}
	cmd = exec.Command("python3", "wordcount.py")
	cmd.Dir = dest
	cmd.Stdin = strings.NewReader("one  two\nthree\n")
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "3" {
		t.Fatalf("program output %q, %v", out, err)
	}
	// Approvals: run the tests, then write.
	if appr.AskedKind(pipeline.AskRun) != 1 || appr.AskedKind(AskWrite) != 1 {
		t.Fatalf("questions asked: %+v", appr.Questions())
	}
	// History is in the new project's store.
	st, err := memory.OpenProject(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acts, _ := st.Activities(100)
	runs, _ := st.Runs(10)
	exs, _ := st.Exchanges("", 20)
	blob, _ := st.GetBlob("workflow", "new-project")
	var saved ProjectSummary
	if err := json.Unmarshal(blob, &saved); err != nil || len(saved.Files) != 2 {
		t.Fatalf("summary blob: %v %s", err, blob)
	}
	lessons, _ := st.Lessons(5)
	if len(lessons) != 1 || lessons[0].DiffSummary != "modify wordcount.py +1 -3" || !strings.Contains(lessons[0].Failure, "test_whitespace") || sum.LessonID != lessons[0].ID {
		t.Fatalf("lesson: %+v (summary id %q)", lessons, sum.LessonID)
	}
	if len(acts) < 8 || len(runs) != 2 || len(exs) != 6 {
		t.Fatalf("history: %d activities, %d runs, %d exchanges", len(acts), len(runs), len(exs))
	}
	// The GUI sees every step go pending → running → done.
	tr := NewTracker("new-project")
	for _, ev := range events {
		tr.Observe(ev)
	}
	for id, st := range tr.States() {
		if st != StateDone {
			t.Errorf("step %s ended %s", id, st)
		}
	}
}

func TestNewProjectRefusals(t *testing.T) {
	needPython(t)
	ctx := context.Background()
	// A non-empty destination is refused before anything runs.
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine"), 0o644)
	eng := models.NewScripted(scriptAnswers(t, "wordcount.script")...)
	_, err := NewProject(ctx, NewProjectConfig{Requirements: "x", Dest: full, Engine: eng, Approver: &pipeline.ScriptedApprover{Default: true}})
	if err == nil || !strings.Contains(err.Error(), "not empty") || len(eng.Calls()) != 0 {
		t.Fatalf("non-empty dest: %v (%d model calls)", err, len(eng.Calls()))
	}
	// "No" to the write: nothing is written, the tests still passed.
	dest := filepath.Join(t.TempDir(), "p")
	appr := &pipeline.ScriptedApprover{Default: true, Answers: map[string][]bool{AskWrite: {false}}}
	sum, err := NewProject(ctx, NewProjectConfig{Requirements: "count words", Dest: dest,
		Engine: models.NewScripted(scriptAnswers(t, "wordcount.script")...), Approver: appr})
	if !errors.Is(err, ErrDeclined) || sum.Written || !sum.Tests.OK {
		t.Fatalf("declined write: %v written=%v tests=%+v", err, sum.Written, sum.Tests)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("declined write created %s", dest)
	}
	// A debugger that never fixes it: bounded, then the step fails and nothing is written.
	answers := scriptAnswers(t, "wordcount.script")
	bad := answers[:5]
	for i := 0; i < 2; i++ {
		bad = append(bad, "I think it is fine.\n")
	}
	dest = filepath.Join(t.TempDir(), "q")
	sum, err = NewProject(ctx, NewProjectConfig{Requirements: "count words", Dest: dest, MaxFix: 2,
		Engine: models.NewScripted(bad...), Approver: &pipeline.ScriptedApprover{Default: true}})
	if err == nil || !strings.Contains(err.Error(), "after 2 debugger attempt") || sum.Written {
		t.Fatalf("unfixable: %v\n%s", err, sum.Text())
	}
	if len(sum.DebugLog) != 2 || !strings.Contains(sum.DebugLog[1].Changes, "unusable") {
		t.Fatalf("debug log: %+v", sum.DebugLog)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatal("a failing project was written")
	}
	// A coder answer that escapes the folder is refused; nothing outside is written.
	esc := append([]string(nil), answers[:3]...)
	esc = append(esc, "FILE: ../escape.py\n```python\nprint('x')\n```\n", "FILE: test_x.py\n```python\nimport unittest\n```\n")
	dest = filepath.Join(t.TempDir(), "r")
	_, err = NewProject(ctx, NewProjectConfig{Requirements: "count words", Dest: dest, MaxFix: -1,
		Engine: models.NewScripted(esc...), Approver: &pipeline.ScriptedApprover{Default: true}})
	if err == nil || !strings.Contains(err.Error(), "escape.py") {
		t.Fatalf("escaping path: %v", err)
	}
}

func TestSummaryText(t *testing.T) {
	s := &ProjectSummary{Dest: "/x", Written: true, Files: []string{"a.py"}, Entry: "a.py",
		Tests:    TestSummary{Framework: "unittest", Passed: 2},
		DebugLog: []DebugEntry{{Attempt: 1, Changes: "applied", Passed: true}}, Plan: "do it"}
	txt := s.Text()
	for _, want := range []string{"written to /x", "entry point: a.py", "unittest: 2 passed", "1. applied → tests pass", "  do it"} {
		if !strings.Contains(txt, want) {
			t.Errorf("summary lacks %q:\n%s", want, txt)
		}
	}
}

// TestNewProjectHangingTests: generated code that never ends is stopped by
// the test time limit, reported, and nothing is written.
func TestNewProjectHangingTests(t *testing.T) {
	needPython(t)
	answers := scriptAnswers(t, "wordcount.script")[:3]
	answers = append(answers,
		"FILE: spin.py\n```python\ndef spin():\n    while True:\n        pass\n```\n",
		"FILE: test_spin.py\n```python\nimport unittest\nfrom spin import spin\n\nclass T(unittest.TestCase):\n    def test_spin(self):\n        spin()\n```\n")
	dest := filepath.Join(t.TempDir(), "spin")
	sum, err := NewProject(context.Background(), NewProjectConfig{Requirements: "spin", Dest: dest, MaxFix: -1, TestTimeout: 2 * time.Second,
		Engine: models.NewScripted(answers...), Approver: &pipeline.ScriptedApprover{Default: true}})
	if err == nil || sum.Written {
		t.Fatalf("hanging tests passed? %v", err)
	}
	if !strings.Contains(sum.Tests.Line(), "limit") && !strings.Contains(sum.Tests.Line(), "stopped") {
		t.Fatalf("tests: %s", sum.Tests.Line())
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatal("written")
	}
}
