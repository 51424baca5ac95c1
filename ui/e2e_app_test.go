package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// e2eApp is the real codeloom binary running in a private Xvfb for an
// end-to-end test, with what the tests do to it: xdotool, screenshots, and
// waits on its automation file. The end-to-end tests share it.
type e2eApp struct {
	t           *testing.T
	display     string
	state       string // the automation file
	out         string // where screenshots go
	log         string // the app's log file ("" when the caller took the output)
	timeoutShot string // screenshot taken when a wait times out
	exited      chan error
}

// e2eSetup returns the binary under test, a temp dir and the output folder
// (CODELOOM_E2E_OUT, else the temp dir); it skips the test when
// CODELOOM_E2E_BIN is unset and fails when a tool is missing.
func e2eSetup(t *testing.T) (bin, tmp, out string) {
	t.Helper()
	bin = os.Getenv("CODELOOM_E2E_BIN")
	if bin == "" {
		t.Skip("set CODELOOM_E2E_BIN to the codeloom binary (scripts/e2e-gui.sh does)")
	}
	for _, tool := range []string{"Xvfb", "xdotool", "import"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required for the GUI end-to-end test (make deps installs it): %v", tool, err)
		}
	}
	bin, _ = filepath.Abs(bin)
	tmp = t.TempDir()
	out = os.Getenv("CODELOOM_E2E_OUT")
	if out == "" {
		out = tmp
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, tmp, out
}

// e2eLaunch says how to start the app.
type e2eLaunch struct {
	Log         string    // log file name in out (when Output is nil)
	Output      io.Writer // takes the app's stdout and stderr instead of a log file
	Env         []string  // added to the environment
	TimeoutShot string    // screenshot name when a wait times out
}

// startE2EApp starts a private Xvfb and `bin open project` in it, with its
// automation file, config and data under tmp; the app is killed at cleanup.
func startE2EApp(t *testing.T, bin, project, tmp, out string, opt e2eLaunch) *e2eApp {
	t.Helper()
	a := &e2eApp{t: t, display: startXvfb(t), state: filepath.Join(tmp, "state.json"), out: out,
		timeoutShot: opt.TimeoutShot, exited: make(chan error, 1)}
	app := exec.Command(bin, "open", project)
	app.Env = append(os.Environ(), "DISPLAY="+a.display, "FYNE_SCALE=1", "CODELOOM_AUTOMATION="+a.state,
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"), "XDG_DATA_HOME="+filepath.Join(tmp, "data"), "LANG=C.UTF-8")
	app.Env = append(app.Env, opt.Env...)
	if opt.Output != nil {
		app.Stdout, app.Stderr = opt.Output, opt.Output
	} else {
		a.log = filepath.Join(out, opt.Log)
		logf, err := os.Create(a.log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { logf.Close() })
		app.Stdout, app.Stderr = logf, logf
	}
	if err := app.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() { a.exited <- app.Wait() }()
	t.Cleanup(func() {
		app.Process.Kill()
		<-a.exited
	})
	return a
}

// exitErr reports whether the app has exited, with its wait error.
func (a *e2eApp) exitErr() (error, bool) {
	select {
	case err := <-a.exited:
		a.exited <- err // keep it for the next caller and the cleanup
		return err, true
	default:
		return nil, false
	}
}

// x runs xdotool on the app's display; a failure fails the test.
func (a *e2eApp) x(args ...string) {
	a.t.Helper()
	cmd := exec.Command("xdotool", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+a.display)
	if b, err := cmd.CombinedOutput(); err != nil {
		a.t.Fatalf("xdotool %v: %v: %s", args, err, b)
	}
}

// xOut runs xdotool and returns its output (errors are part of the output).
func (a *e2eApp) xOut(args ...string) string {
	cmd := exec.Command("xdotool", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+a.display)
	b, _ := cmd.CombinedOutput()
	return strings.TrimSpace(string(b))
}

// shot saves a screenshot of the display as name in out, after letting the
// window paint the state it reported.
func (a *e2eApp) shot(name string) {
	time.Sleep(700 * time.Millisecond)
	cmd := exec.Command("import", "-window", "root", filepath.Join(a.out, name))
	cmd.Env = append(os.Environ(), "DISPLAY="+a.display)
	if b, err := cmd.CombinedOutput(); err != nil {
		a.t.Errorf("screenshot %s: %v: %s", name, err, b)
	}
}

// read decodes the automation file into v; false while it is missing or
// being rewritten.
func (a *e2eApp) read(v any) bool {
	b, err := os.ReadFile(a.state)
	return err == nil && json.Unmarshal(b, v) == nil
}

// clickAt moves the pointer to (x, y) and clicks, twice for double.
func (a *e2eApp) clickAt(x, y float32, double bool) {
	a.t.Helper()
	a.x("mousemove", fmt.Sprint(int(x)), fmt.Sprint(int(y)))
	time.Sleep(100 * time.Millisecond)
	if double {
		a.x("click", "--repeat", "2", "--delay", "80", "1")
	} else {
		a.x("click", "1")
	}
}

// waitE2E polls the app's automation file (decoded as T) until ok holds,
// failing the test with describe(last state) after timeout or when the app
// exits.
func waitE2E[T any](a *e2eApp, what string, timeout time.Duration, ok func(T) bool, describe func(T) string) T {
	a.t.Helper()
	deadline := time.Now().Add(timeout)
	var last T
	for time.Now().Before(deadline) {
		if err, gone := a.exitErr(); gone {
			a.t.Fatalf("app exited while waiting for %s: %v (log: %s)", what, err, a.log)
		}
		var s T
		if a.read(&s) {
			last = s
			if ok(s) {
				return s
			}
		}
		time.Sleep(150 * time.Millisecond)
	}
	if a.timeoutShot != "" {
		a.shot(a.timeoutShot)
	}
	a.t.Fatalf("timed out waiting for %s; last state: %s", what, describe(last))
	return last
}

// describeState is the summary of an automation state a failed wait prints.
func describeState(s AutomationState) string {
	return fmt.Sprintf("title %q status %q view %q nodes %d selected %q", s.Title, s.Status, s.ViewTitle, s.NodeCount, s.Selected)
}

// waitState is waitE2E for the plain automation state.
func (a *e2eApp) waitState(what string, timeout time.Duration, ok func(AutomationState) bool) AutomationState {
	a.t.Helper()
	return waitE2E(a, what, timeout, ok, describeState)
}

// steadyState waits until the drawn nodes stop moving: two automation
// states written at least 0.6 s apart (the file is rewritten every 0.5 s)
// with the same nodes at the same places. A view that has just changed may
// still be re-laid out (a quick layout first, Graphviz's after, the view
// moved to keep the clicked node under the pointer): clicking where a node
// was in the first picture can hit another one. After timeout it returns
// the last state.
func (a *e2eApp) steadyState(timeout time.Duration) AutomationState {
	a.t.Helper()
	same := func(p, q AutomationState) bool {
		if len(p.Nodes) != len(q.Nodes) || p.ViewTitle != q.ViewTitle {
			return false
		}
		for i := range p.Nodes {
			if p.Nodes[i].ID != q.Nodes[i].ID || p.Nodes[i].X != q.Nodes[i].X || p.Nodes[i].Y != q.Nodes[i].Y {
				return false
			}
		}
		return true
	}
	var prev AutomationState
	havePrev := false
	deadline := time.Now().Add(timeout)
	for {
		var s AutomationState
		if a.read(&s) {
			if havePrev && s.Time.Sub(prev.Time) >= 600*time.Millisecond && same(prev, s) {
				return s
			}
			if !havePrev || !same(prev, s) {
				prev, havePrev = s, true
			}
		}
		if time.Now().After(deadline) {
			return prev
		}
		time.Sleep(150 * time.Millisecond)
	}
}
