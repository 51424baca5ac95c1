package workflow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"codeloom/app/memory"
	"codeloom/app/pipeline"
	"codeloom/models"
	"codeloom/runtime"
)

// TestRealConcurrencyThroughRuntime proves that two independent run steps
// run at the same time: each is a real `sleep 0.3` subprocess through the
// runtime, and their recorded start/end intervals overlap. A third step that
// depends on both starts only after both ended.
func TestRealConcurrencyThroughRuntime(t *testing.T) {
	root := t.TempDir()
	st, err := memory.Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := mustParse(t, `
id: par
steps:
  - {id: one, type: run, command: "sleep 0.3; echo one"}
  - {id: two, type: run, command: ["sh", "-c", "sleep 0.3; echo two"]}
  - {id: join, type: run, command: ["echo", "{{.one}}+{{.two}}"]}
`)
	runner := runtime.New(runtime.WithRecorder(st))
	ex := &Executor{Workers: 2, Activity: st}
	ex.Handlers = StandardHandlers(ex, root, nil, runner, nil, nil)
	rep, err := ex.Run(context.Background(), w, nil)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := rep.Step("one")
	two, _ := rep.Step("two")
	join, _ := rep.Step("join")
	if !(one.Start.Before(two.End) && two.Start.Before(one.End)) {
		t.Fatalf("independent steps did not overlap: one %v–%v, two %v–%v", one.Start, one.End, two.Start, two.End)
	}
	if join.Start.Before(one.End) || join.Start.Before(two.End) {
		t.Fatalf("join started before its dependencies ended")
	}
	if join.Output != "one+two" {
		t.Fatalf("join output %q", join.Output)
	}
	runs, err := st.Runs(10)
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs recorded: %d (%v), want 3", len(runs), err)
	}
	// The subprocesses themselves overlapped, by the runtime's own records.
	procs := map[string]memory.RunRecord{}
	for _, r := range runs {
		procs[strings.TrimPrefix(r.Origin, "workflow:par/")] = r
	}
	p1, p2 := procs["one"], procs["two"]
	if p1.Wall < 300*time.Millisecond || p2.Wall < 300*time.Millisecond {
		t.Fatalf("runs too short: %s %s", p1.Wall, p2.Wall)
	}
	if !(p1.Start.Before(p2.Start.Add(p2.Wall)) && p2.Start.Before(p1.Start.Add(p1.Wall))) {
		t.Fatalf("processes did not overlap: one %v+%s, two %v+%s", p1.Start, p1.Wall, p2.Start, p2.Wall)
	}
}

func TestRunStepFailureAndTimeout(t *testing.T) {
	root := t.TempDir()
	ex := &Executor{}
	ex.Handlers = StandardHandlers(ex, root, nil, runtime.New(), nil, nil)
	w := mustParse(t, `
id: f
steps:
  - {id: bad, type: run, command: "echo oops >&2; exit 3"}
`)
	_, err := ex.Run(context.Background(), w, nil)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "oops") {
		t.Fatalf("got %v", err)
	}
	w = mustParse(t, `
id: t
steps:
  - {id: slow, type: run, command: "sleep 5", timeout: 200ms}
`)
	rep, err := ex.Run(context.Background(), w, nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
	if d := rep.Steps[0].Duration; d.Seconds() > 4 {
		t.Fatalf("the timed out process was not killed (step took %s)", d)
	}
	w = mustParse(t, `
id: d
steps:
  - {id: esc, type: run, command: "pwd", dir: "../.."}
`)
	if _, err := ex.Run(context.Background(), w, nil); err == nil || !strings.Contains(err.Error(), "dir") {
		t.Fatalf("dir escaping the project accepted: %v", err)
	}
}

func TestLLMApproveAndSubWorkflow(t *testing.T) {
	root := t.TempDir()
	eng := models.NewScripted("a poem about {{go}}")
	sub := mustParse(t, `
id: sub
inputs: [{name: topic}]
outputs: [{name: poem, value: "{{.write}}"}]
steps:
  - {id: write, type: llm, role: coder, prompt: "write about {{.topic}}"}
`)
	top := mustParse(t, `
id: top
steps:
  - {id: ok, type: approve, question: "Go on?"}
  - {id: call, type: workflow, workflow: sub, with: {topic: "go"}, depends_on: [ok]}
  - {id: no, type: approve, question: "Really?", depends_on: [call]}
`)
	appr := &pipeline.ScriptedApprover{Answers: map[string][]bool{AskStep: {true, false}}}
	ex := &Executor{}
	ex.Handlers = StandardHandlers(ex, root, eng, nil, appr, func(ref string) (*Workflow, error) {
		if ref == "sub" {
			return sub, nil
		}
		return nil, errors.New("no such workflow " + ref)
	})
	rep, err := ex.Run(context.Background(), top, nil)
	if !errors.Is(err, ErrDeclined) {
		t.Fatalf("want ErrDeclined from the second approval, got %v", err)
	}
	if r, _ := rep.Step("call"); r.State != StateDone || r.Output != "a poem about {{go}}" {
		t.Fatalf("call: %+v", r)
	}
	calls := eng.Calls()
	if len(calls) != 1 || calls[0].Messages[0].Role != models.RoleSystem || calls[0].Messages[1].Content != "write about go" {
		t.Fatalf("model calls: %+v", calls)
	}
	// A workflow that calls itself is stopped at MaxDepth.
	self := mustParse(t, "id: self\nsteps:\n  - {id: again, type: workflow, workflow: self}\n")
	ex.Handlers[TypeWorkflow] = &WorkflowHandler{Exec: ex, Resolve: func(string) (*Workflow, error) { return self, nil }}
	if _, err := ex.Run(context.Background(), self, nil); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("recursion not stopped: %v", err)
	}
}

func TestPatchStep(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := mustParse(t, "id: p\ninputs: [{name: edit}]\nsteps:\n  - {id: apply, type: patch, patch: \"{{.edit}}\"}\n")
	edit := "a.txt\n<<<<<<< SEARCH\nhello\n=======\nbye\n>>>>>>> REPLACE\n"
	// Declined: nothing changes.
	ex := &Executor{}
	ex.Handlers = StandardHandlers(ex, root, nil, nil, &pipeline.ScriptedApprover{Answers: map[string][]bool{pipeline.AskApply: {false}}}, nil)
	if _, err := ex.Run(context.Background(), w, map[string]string{"edit": edit}); !errors.Is(err, ErrDeclined) {
		t.Fatalf("want declined, got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "hello\n" {
		t.Fatalf("declined patch changed the file: %q", b)
	}
	// Escaping the root: refused, nothing written.
	ex.Handlers = StandardHandlers(ex, root, nil, nil, &pipeline.ScriptedApprover{Default: true}, nil)
	bad := "FILE: ../evil.txt\n```\nx\n```\n"
	if _, err := ex.Run(context.Background(), w, map[string]string{"edit": bad}); err == nil {
		t.Fatal("patch outside the root accepted")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(root), "evil.txt")); err == nil {
		t.Fatal("file written outside the root")
	}
	// Approved: applied.
	ex.Handlers = StandardHandlers(ex, root, nil, nil, &pipeline.ScriptedApprover{Default: true}, nil)
	if _, err := ex.Run(context.Background(), w, map[string]string{"edit": edit}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "bye\n" {
		t.Fatalf("patch not applied: %q", b)
	}
}

func TestTailKeepsWholeCharacters(t *testing.T) {
	s := strings.Repeat("é", 10) // 2 bytes each
	got := tail(s, 5)            // 5 bytes would start inside an é
	if !utf8.ValidString(got) || got != "…éé" {
		t.Errorf("tail = %q, want %q", got, "…éé")
	}
	if got := tail("  short \n", 100); got != "short" {
		t.Errorf("tail of a short text = %q", got)
	}
}

func TestClipKeepsWholeCharacters(t *testing.T) {
	s := strings.Repeat("é", 10)
	if got := clip(s, 5); got != "éé…" {
		t.Errorf("clip = %q, want %q", got, "éé…")
	}
	if got := clip("short", 10); got != "short" {
		t.Errorf("clip of a short text = %q", got)
	}
}

func TestDescribeShowsRunFolder(t *testing.T) {
	w, err := Parse([]byte("id: w\nsteps:\n  - {id: a, type: run, command: \"ls\", dir: /tmp}\n  - {id: b, type: run, command: \"pwd\"}\n"), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := Describe(w)
	if !strings.Contains(d, "ls  (in /tmp)") || strings.Count(d, "(in ") != 1 {
		t.Errorf("Describe does not show the run folder once:\n%s", d)
	}
}

func TestLoadRefusesOversizedFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.yaml")
	big := "id: w\nsteps:\n  - {id: a, type: run, command: \"true\"}\n#" + strings.Repeat("x", maxFileSize) + "\n"
	if err := os.WriteFile(p, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized file: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil { // endless input stops at the limit
		if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("/dev/zero: %v", err)
		}
	}
	if err := os.WriteFile(p, []byte(big[:60]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err != nil {
		t.Errorf("small file: %v", err)
	}
}
