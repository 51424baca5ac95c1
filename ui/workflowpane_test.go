package ui

import (
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/workflow"
	"codeloom/models"
)

// drawnFill returns the fill of the rectangle drawn for node id of g (the
// node box whose area holds the node's centre).
func drawnFill(t *testing.T, p *workflowPane, id string) color.Color {
	t.Helper()
	c, ok := p.graph.NodeCenter(id)
	if !ok {
		t.Fatalf("node %s not drawn", id)
	}
	var found color.Color
	for _, o := range test.WidgetRenderer(p.graph).Objects() {
		r, ok := o.(*canvas.Rectangle)
		if !ok || !r.Visible() {
			continue
		}
		pos, sz := r.Position(), r.Size()
		if sz.Width < p.graph.Size().Width && c.X >= pos.X && c.X <= pos.X+sz.Width && c.Y >= pos.Y && c.Y <= pos.Y+sz.Height {
			found = r.FillColor
		}
	}
	if found == nil {
		t.Fatalf("no box drawn under node %s", id)
	}
	return found
}

// answerDialogs taps "Yes" on every confirm dialog until done reports true.
func answerDialogs(t *testing.T, w *Workbench, limit time.Duration, done func() bool) int {
	t.Helper()
	n := 0
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && !done() {
		runQueued()
		if yes := findButton(w.win.Canvas().Overlays().Top(), "Yes"); yes != nil {
			n++
			test.Tap(yes)
		}
		time.Sleep(30 * time.Millisecond)
	}
	if !done() {
		t.Fatalf("timed out after %d answers; workflow log:\n%s", n, w.panes.wf.log.Text)
	}
	return n
}

func writeProjectWorkflow(t *testing.T, project, name, text string) {
	t.Helper()
	dir := filepath.Join(project, ".codeloom", "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWorkflowTabRunsStepsAndColoursThemDone(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	writeProjectWorkflow(t, project, "two", `id: two
description: two run steps, the second after the first
inputs:
  - name: word
steps:
  - id: first
    type: run
    command: ["echo", "{{.word}}"]
  - id: second
    type: run
    command: ["sh", "-c", "echo got {{.first}}; pwd"]
`)
	p := w.panes.wf
	p.graph.Synchronous = true
	w.panes.tabs.Select(w.panes.wfTab)
	p.Select("two")
	if p.picker.Selected != "two"+projectSuffix {
		t.Fatalf("picker %q, options %v", p.picker.Selected, p.picker.Options)
	}
	if v := p.graph.View(); v == nil || len(v.Nodes) != 2 || len(v.Edges) != 1 || v.Edges[0].From != "first" {
		t.Fatalf("view %+v", v)
	}
	pendingFill, _ := StepColors(workflow.StatePending)
	if got := drawnFill(t, p, "first"); got != pendingFill {
		t.Errorf("pending step drawn %v", got)
	}
	// A required input left empty is refused before anything runs.
	test.Tap(p.runBtn)
	if !findLabel(w.win.Canvas().Overlays().Top(), "word") || p.running {
		t.Fatalf("missing input not reported (running %v)", p.running)
	}
	w.win.Canvas().Overlays().Top().(interface{ Hide() }).Hide()
	entry := p.form.Items[0].Widget.(*widget.Entry) // the row drawn for the input
	if p.inputs["word"] != entry || p.form.Items[0].Text != "word *" || len(p.form.Items) != 1 || p.formBox.Objects[0] != p.form {
		t.Fatal("the form does not show the workflow's input")
	}
	entry.SetText("loom")
	runs := p.runs
	test.Tap(p.runBtn)
	if n := answerDialogs(t, w, 30*time.Second, func() bool { return p.runs > runs }); n != 1 {
		t.Errorf("%d approvals, want 1 (run the workflow)", n)
	}
	doneFill, _ := StepColors(workflow.StateDone)
	for _, id := range []string{"first", "second"} {
		if st := p.States()[id]; st != workflow.StateDone {
			t.Errorf("step %s %s; log:\n%s", id, st, p.log.Text)
		}
		if got := drawnFill(t, p, id); got != doneFill {
			t.Errorf("step %s drawn %v, want the done colour %v", id, got, doneFill)
		}
	}
	if !strings.Contains(p.log.Text, "got loom") || !strings.Contains(p.log.Text, project) {
		t.Errorf("log lacks the second step's output (run in the project):\n%s", p.log.Text)
	}
	if p.runBtn.Disabled() || !p.stopBtn.Disabled() {
		t.Error("buttons not reset after the run")
	}
	// The run is recorded in the project's memory.
	acts, _ := w.store.Activities(20)
	found := false
	for _, a := range acts {
		found = found || strings.Contains(a.Action+a.Detail, "second")
	}
	if !found {
		t.Errorf("no activity for step second in %+v", acts)
	}
}

func TestWorkflowTabFailureAndStop(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	writeProjectWorkflow(t, project, "bad", `id: bad
steps:
  - id: boom
    type: run
    command: ["sh", "-c", "echo broken >&2; exit 3"]
  - id: after
    type: run
    command: ["echo", "never"]
    depends_on: [boom]
`)
	writeProjectWorkflow(t, project, "slow", `id: slow
steps:
  - id: wait
    type: run
    command: ["sleep", "30"]
`)
	p := w.panes.wf
	p.graph.Synchronous = true
	w.panes.tabs.Select(w.panes.wfTab)
	p.Select("bad")
	runs := p.runs
	test.Tap(p.runBtn)
	answerDialogs(t, w, 30*time.Second, func() bool { return p.runs > runs })
	st := p.States()
	if st["boom"] != workflow.StateFailed || st["after"] != workflow.StateSkipped {
		t.Errorf("states %v; log:\n%s", st, p.log.Text)
	}
	failFill, _ := StepColors(workflow.StateFailed)
	if got := drawnFill(t, p, "boom"); got != failFill {
		t.Errorf("failed step drawn %v", got)
	}
	// Stop cancels a running step.
	p.Select("slow")
	runs = p.runs
	test.Tap(p.runBtn)
	answerDialogs(t, w, 10*time.Second, func() bool { return p.States()["wait"] == workflow.StateRunning })
	start := time.Now()
	test.Tap(p.stopBtn)
	waitFor(t, "the stopped run", func() bool { return p.runs > runs })
	if time.Since(start) > 20*time.Second || p.States()["wait"] == workflow.StateDone {
		t.Errorf("stop did not end the step: %v", p.States())
	}
}

func TestWorkflowNeedsProjectAndModel(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	p := w.panes.wf
	p.Select("hello")
	test.Tap(p.runBtn)
	if !findLabel(w.win.Canvas().Overlays().Top(), "open one") || p.running {
		t.Fatal("running without a project not refused with a message")
	}
	w.win.Canvas().Overlays().Top().(interface{ Hide() }).Hide()
	openSample(t, w, project)
	writeProjectWorkflow(t, project, "ask", `id: ask
steps:
  - id: q
    type: llm
    prompt: say hi
`)
	p.Select("ask")
	test.Tap(p.runBtn)
	if !findLabel(w.win.Canvas().Overlays().Top(), "need a model") || p.running {
		t.Fatal("an llm step without a model not refused with a message")
	}
}

func TestNewProjectWithoutModelSaysSo(t *testing.T) {
	w, _ := newTestWorkbench(t, Options{})
	w.NewProjectDialog()
	if !findLabel(w.win.Canvas().Overlays().Top(), "needs a model") {
		t.Fatal("no 'needs a model' dialog")
	}
	if w.newProject != nil {
		t.Error("the requirements dialog opened without a model")
	}
}

// TestNewProjectFromRequirements drives File → New project from
// requirements with a scripted model (the word count project of
// app/workflow's tests, whose first version has a bug the debugger fixes):
// the project is written after the approvals and opened in the window.
func TestNewProjectFromRequirements(t *testing.T) {
	eng := models.NewScripted(readScript(t, filepath.Join("..", "app", "workflow", "testdata", "wordcount.script"))...)
	w, _ := newTestWorkbench(t, Options{Engine: eng})
	p := w.panes.wf
	p.graph.Synchronous = true
	dest := filepath.Join(t.TempDir(), "wordcount")
	// A folder that is not empty is refused in the dialog.
	busy := t.TempDir()
	os.WriteFile(filepath.Join(busy, "keep.txt"), []byte("mine"), 0o644)
	w.NewProjectDialog()
	f := w.newProject
	if f == nil {
		t.Fatal("no dialog")
	}
	f.req.SetText("a command line tool that counts the words of a file or standard input")
	f.folder.SetText(busy)
	test.Tap(f.create)
	if !strings.Contains(f.problem.Text, "not empty") || p.running {
		t.Fatalf("non-empty folder accepted: %q", f.problem.Text)
	}
	f.folder.SetText(dest)
	test.Tap(f.create)
	if !p.running || w.panes.tabs.Selected() != w.panes.wfTab {
		t.Fatal("the workflow tab does not show the new project running")
	}
	if v := p.graph.View(); v == nil || len(v.Nodes) < 5 {
		t.Fatalf("new-project graph %+v", v)
	}
	n := answerDialogs(t, w, 150*time.Second, func() bool { return !p.running })
	if n < 2 {
		t.Errorf("%d approvals; want at least the test run and the write", n)
	}
	for id, st := range p.States() {
		if st != workflow.StateDone {
			t.Errorf("step %s %s", id, st)
		}
	}
	for _, f := range []string{"wordcount.py", "test_wordcount.py"} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Errorf("not written: %v", err)
		}
	}
	waitFor(t, "the new project to open", func() bool {
		return w.project != nil && w.project.Root() == dest && w.graph.CurrentLayout() != nil
	})
	if got := w.win.Title(); got != "CodeLoom — wordcount" {
		t.Errorf("title %q", got)
	}
	if _, ok := w.snap.Node(nodeIDByName(t, w, "count_words")); !ok {
		t.Error("count_words not in the opened graph")
	}
	if !strings.Contains(p.log.Text, "new project written to "+dest) {
		t.Errorf("log lacks the summary:\n%s", tail(p.log.Text, 2000))
	}
}
