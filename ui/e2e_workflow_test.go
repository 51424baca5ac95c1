package ui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEndToEndNewProjectWorkflow drives the real binary under Xvfb with a
// scripted model (CODELOOM_SCRIPT): Ctrl+Shift+N opens "New project from
// requirements", the requirements are typed, Create starts the new-project
// workflow whose steps the Workflow tab colours as they run, each approval
// dialog is answered Yes with a click, and the written project opens in the
// window. Screenshots go to CODELOOM_E2E_OUT (e2e-5-*.png).
func TestEndToEndNewProjectWorkflow(t *testing.T) {
	bin, tmp, out := e2eSetup(t)
	script, _ := filepath.Abs(filepath.Join("..", "app", "workflow", "testdata", "wordcount.script"))
	project := filepath.Join(tmp, "sample")
	copyTree(t, filepath.Join("..", "assets", "sample"), project)
	home := filepath.Join(tmp, "home")
	os.MkdirAll(home, 0o755)
	dest := filepath.Join(home, "new-project") // the dialog's default folder

	app := startE2EApp(t, bin, project, tmp, out, e2eLaunch{Log: "e2e-workflow-app.log", TimeoutShot: "e2e-5-timeout.png",
		Env: []string{"HOME=" + home, "CODELOOM_SCRIPT=" + script}})
	x, shot := app.x, app.shot
	type full struct {
		AutomationState
		Extra struct {
			Workflow AutoWorkflow `json:"workflow"`
		} `json:"extra"`
	}
	read := func() (full, bool) {
		var s full
		return s, app.read(&s)
	}
	wait := func(what string, timeout time.Duration, ok func(full) bool) full {
		t.Helper()
		return waitE2E(app, what, timeout, ok, func(s full) string {
			return fmt.Sprintf("status %q, workflow %+v", s.Status, s.Extra.Workflow.States)
		})
	}
	click := func(b AutoBox) {
		t.Helper()
		x("mousemove", fmt.Sprint(int(b.X+b.W/2)), fmt.Sprint(int(b.Y+b.H/2)))
		time.Sleep(100 * time.Millisecond)
		x("click", "1")
	}

	s := wait("the graph", 90*time.Second, func(s full) bool { return !s.Indexing && s.NodeCount > 0 })
	click(AutoBox{X: s.Graph.X + 5, Y: s.Graph.Y + 5}) // focus the window
	x("key", "ctrl+shift+n")
	s = wait("the New project dialog", 20*time.Second, func(s full) bool { return s.Extra.Workflow.NewCreate.W > 0 })
	time.Sleep(1200 * time.Millisecond) // the state is rewritten twice a second: positions after layout
	s = wait("the New project dialog laid out", 20*time.Second, func(s full) bool { return s.Extra.Workflow.NewRequirements.W > 200 })
	// Type the requirements; on a loaded machine the field may not have
	// had the focus yet when the keys arrived: then click and type again.
	const requirements = "a command line tool that counts the words of a file or of standard input"
	for try := 1; ; try++ {
		click(s.Extra.Workflow.NewRequirements)
		x("type", "--delay", "10", requirements)
		deadline := time.Now().Add(10 * time.Second)
		typed := false
		for !typed && time.Now().Before(deadline) {
			got, _ := read()
			typed = got.Extra.Workflow.NewRequirementsText == requirements
			time.Sleep(150 * time.Millisecond)
		}
		if typed {
			break
		}
		got, _ := read()
		if try == 3 {
			t.Fatalf("the requirements field holds %q after typing into it %d times", got.Extra.Workflow.NewRequirementsText, try)
		}
		t.Logf("try %d: the requirements field holds %q: typing again", try, got.Extra.Workflow.NewRequirementsText)
		// Clear what landed, if anything, before the next try.
		click(s.Extra.Workflow.NewRequirements)
		x("key", "ctrl+a", "BackSpace")
	}
	shot("e2e-5-new-project-dialog.png")
	wait("the requirements accepted", 10*time.Second, func(s full) bool { return s.Extra.Workflow.NewProblem == "" })
	click(s.Extra.Workflow.NewCreate)
	s = wait("the new-project workflow to start", 20*time.Second, func(s full) bool {
		return s.Extra.Workflow.Running && s.Extra.Workflow.Workflow == "new-project"
	})
	// Answer every approval (run the generated tests, write the project) with
	// a click on Yes. The confirm dialog is centred in the window and its Yes
	// button sits 33 px right of the centre, 38 px above the dialog's bottom
	// edge; the dialog is 340 px tall with a text body, 640 px with a diff
	// (ui/approver.go), so try each (a click beside a modal dialog does nothing).
	yesDY := []int{132, 282, 112}
	answered := 0
	deadline := time.Now().Add(150 * time.Second)
	for time.Now().Before(deadline) {
		s, _ = read()
		wf := s.Extra.Workflow
		if !wf.Running && wf.Runs > 0 {
			break
		}
		if wf.Question != "" && wf.Window.W > 0 {
			if answered == 0 {
				shot("e2e-5-new-project-approval.png")
			}
			q := wf.Question
			answered++
			// The question is reported just before its dialog is drawn:
			// click, and click again while it is still asked.
			for try := 0; try < 10; try++ {
				time.Sleep(800 * time.Millisecond)
				if s, _ := read(); s.Extra.Workflow.Question != q {
					break
				}
				dy := yesDY[try%len(yesDY)]
				x("mousemove", fmt.Sprint(int(wf.Window.W/2+33)), fmt.Sprint(int(wf.Window.H/2)+dy))
				time.Sleep(100 * time.Millisecond)
				x("click", "1")
			}
			wait("the answer to "+q, 20*time.Second, func(s full) bool { return s.Extra.Workflow.Question != q })
		}
		time.Sleep(150 * time.Millisecond)
	}
	s = wait("the new project to open", 60*time.Second, func(s full) bool {
		return s.Project == dest && !s.Indexing && s.NodeCount > 0
	})
	if answered < 2 {
		t.Errorf("%d approvals answered, want the test run and the write", answered)
	}
	for id, st := range s.Extra.Workflow.States {
		if st != "done" {
			t.Errorf("step %s %s", id, st)
		}
	}
	if s.Title != "CodeLoom — new-project" {
		t.Errorf("title %q", s.Title)
	}
	for _, f := range []string{"wordcount.py", "test_wordcount.py"} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Errorf("not written: %v", err)
		}
	}
	cmd := exec.Command("python3", "-m", "unittest", "discover", "-q")
	cmd.Dir = dest
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "OK") {
		t.Errorf("the written project's tests: %v\n%s", err, b)
	}
	shot("e2e-5-new-project-opened.png")
}
