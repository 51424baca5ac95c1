package ui

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEndToEndGUI drives the real binary in a real window under Xvfb with
// xdotool: it opens a copy of the sample project, waits for the graph,
// expands a file, clicks a function, checks the code pane shows that
// function's code, edits it (a new function), saves with Ctrl+S and checks
// the file, the version history and the graph (the new function appears).
//
// It runs only when CODELOOM_E2E_BIN names the codeloom binary
// (scripts/e2e-gui.sh sets it). Screenshots go to CODELOOM_E2E_OUT (default:
// the test's temp dir).
func TestEndToEndGUI(t *testing.T) {
	bin, tmp, out := e2eSetup(t)
	project := filepath.Join(tmp, "sample")
	copyTree(t, filepath.Join("..", "assets", "sample"), project)
	home := filepath.Join(tmp, "home") // where the save dialog starts
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	app := startE2EApp(t, bin, project, tmp, out, e2eLaunch{Log: "e2e-app.log", TimeoutShot: "e2e-timeout.png", Env: []string{"HOME=" + home}})
	x, shot, wait := app.x, app.shot, app.waitState
	click := app.clickAt
	find := func(s AutomationState, label string) (AutoNode, bool) {
		for _, n := range s.Nodes {
			if n.Label == label {
				return n, true
			}
		}
		return AutoNode{}, false
	}

	// 1. The window opens on the project and draws the overview.
	s := wait("the graph", 90*time.Second, func(s AutomationState) bool { return !s.Indexing && s.NodeCount > 0 })
	if want := "CodeLoom — sample"; s.Title != want {
		t.Errorf("window title %q, want %q", s.Title, want)
	}
	file, ok := find(s, "pricing.py")
	if !ok {
		t.Fatalf("pricing.py not drawn; nodes: %+v", s.Nodes)
	}
	shot("e2e-1-overview.png")

	// 2. Double-click the file: it expands to show its functions.
	click(file.X, file.Y, true)
	s = wait("pricing.py expanded", 30*time.Second, func(s AutomationState) bool { _, ok := find(s, "bulk_discount()"); return ok })
	fn, _ := find(s, "bulk_discount()")
	time.Sleep(500 * time.Millisecond) // let the double-click timer lapse

	// 3. Click the function: it is selected and its code fills the code pane.
	click(fn.X, fn.Y, false)
	s = wait("bulk_discount selected", 20*time.Second, func(s AutomationState) bool { return s.Selected == fn.ID && s.CodeNode == fn.ID })
	if !strings.HasPrefix(strings.TrimSpace(s.Code), "def bulk_discount(") {
		t.Errorf("code pane shows %q, want the code of bulk_discount", s.Code)
	}
	if s.CodePath != "inventory/pricing.py" {
		t.Errorf("code pane path %q", s.CodePath)
	}
	disk, err := os.ReadFile(filepath.Join(project, "inventory", "pricing.py"))
	if err != nil || !strings.Contains(string(disk), s.Code) {
		t.Errorf("the code pane's text is not the file's code (err %v)", err)
	}
	shot("e2e-2-selected.png")

	// 4. Edit: insert a new function above bulk_discount and save with Ctrl+S.
	nodesBefore := s.NodeCount
	click(s.EditBtn.X+s.EditBtn.W/2, s.EditBtn.Y+s.EditBtn.H/2, false)
	s = wait("the editor", 10*time.Second, func(s AutomationState) bool { return s.Editing })
	time.Sleep(300 * time.Millisecond)
	for _, line := range []string{"def added_by_e2e():", "    return bulk_discount(100)", "", ""} {
		if line != "" {
			x("type", "--delay", "15", line)
		}
		x("key", "Return")
		if strings.HasPrefix(line, "    ") {
			x("key", "Home") // the editor keeps no indent, but be safe about auto-indent
		}
	}
	s = wait("the edit", 10*time.Second, func(s AutomationState) bool { return s.Dirty })
	shot("e2e-3-editing.png")
	x("key", "ctrl+s")
	s = wait("save and re-index", 30*time.Second, func(s AutomationState) bool {
		_, ok := find(s, "added_by_e2e()")
		return !s.Dirty && ok && s.Versions >= 1
	})
	disk, err = os.ReadFile(filepath.Join(project, "inventory", "pricing.py"))
	if err != nil || !strings.Contains(string(disk), "def added_by_e2e():\n    return bulk_discount(100)") {
		t.Errorf("saved file lacks the edit (err %v):\n%s", err, disk)
	}
	if s.NodeCount != nodesBefore+1 {
		t.Errorf("graph has %d nodes after adding a function, want %d", s.NodeCount, nodesBefore+1)
	}
	if _, err := exec.Command("python3", "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())", filepath.Join(project, "inventory", "pricing.py")).CombinedOutput(); err != nil {
		t.Errorf("saved file is not valid Python: %v", err)
	}
	shot("e2e-4-saved.png")

	// 5. Export → PNG… through the real save dialog writes what the screen
	// shows: the export is compared with a screenshot of the graph.
	checkPNGExport(t, app, s, home)
}

// startXvfb starts a private X server and returns its DISPLAY.
func startXvfb(t *testing.T) string {
	t.Helper()
	// Xvfb picks a free display itself and writes its number to fd 3; it
	// also clears lock files that dead servers left behind.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1400x900x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Fatalf("start Xvfb: %v", err)
	}
	w.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		// SIGTERM lets Xvfb remove its lock file and socket; SIGKILL would not.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	number := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		number <- strings.TrimSpace(line)
	}()
	select {
	case n := <-number:
		if n == "" {
			t.Fatal("Xvfb exited at start without a display")
		}
		return ":" + n
	case <-time.After(15 * time.Second):
		t.Fatal("Xvfb did not come up within 15 s")
	}
	return ""
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && (d.Name() == ".codeloom" || d.Name() == "__pycache__") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// TestEndToEndNativeFolderDialog proves the sqweek/dialog GTK folder chooser
// under Xvfb after Fyne's GL window is up (the hazard of sqweek/dialog
// issues 51 and 58): with CODELOOM_NATIVE_DIALOGS=1, Open Folder… shows the
// GTK dialog, the process does not crash and the Fyne window keeps running
// (its automation file keeps being rewritten) while the dialog is open.
func TestEndToEndNativeFolderDialog(t *testing.T) {
	bin, tmp, out := e2eSetup(t)
	project := filepath.Join(tmp, "sample")
	copyTree(t, filepath.Join("..", "assets", "sample"), project)
	var log strings.Builder
	app := startE2EApp(t, bin, project, tmp, out, e2eLaunch{Output: &log, Env: []string{"CODELOOM_NATIVE_DIALOGS=1"}})
	read := func() (AutomationState, bool) {
		var s AutomationState
		return s, app.read(&s)
	}
	s := app.waitState("the graph", 90*time.Second, func(s AutomationState) bool { return s.NodeCount > 0 })
	xdo := app.xOut
	xdo("mousemove", fmt.Sprint(int(s.OpenBtn.X+s.OpenBtn.W/2)), fmt.Sprint(int(s.OpenBtn.Y+s.OpenBtn.H/2)))
	xdo("click", "1")
	found := false
	for i := 0; i < 100 && !found; i++ {
		if err, gone := app.exitErr(); gone {
			t.Fatalf("app died after opening the native dialog: %v\n%s", err, log.String())
		}
		found = xdo("search", "--name", "Open project folder|Open Folder") != ""
		time.Sleep(100 * time.Millisecond)
	}
	if !found {
		t.Fatalf("no native folder dialog appeared; log:\n%s", log.String())
	}
	before, _ := read()
	time.Sleep(2 * time.Second)
	after, ok := read()
	if err, gone := app.exitErr(); gone {
		t.Fatalf("app died with the native dialog open: %v\n%s", err, log.String())
	}
	if !ok || !after.Time.After(before.Time) {
		t.Errorf("Fyne window stopped updating while the native dialog was open")
	}
}
