package adversarial

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"codeloom/runtime/runtimetest"
)

// Issue 14, runtime items: what `codeloom exec` runs must not escape it.

// runtimeStart starts the binary in its own process group (killed at the
// end of the case) and returns it with a channel closed when it exits.
func runtimeStart(t *testing.T, stdin io.Reader, args ...string) (*exec.Cmd, <-chan struct{}, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = stdin
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &capped{b: &out}, &capped{b: &out}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		killGroup(cmd.Process.Pid)
		<-done
	})
	return cmd, done, &out
}

func TestRuntimeDaemonClearingItsEnvironmentDies(t *testing.T) {
	tok := runtimetest.Token(t)
	runtimetest.KillOnCleanup(t, tok)
	// As in the issue, with the escape between two samples: the daemon's
	// parent exits at once, it has a session and group of its own and no
	// environment marker; the token rides in the shell's command line.
	script := `sleep 0.3; setsid -f env -i sh -c 'trap "" TERM; sleep 300; : ` + tok + `'; sleep 0.3`
	for i := 0; i < 5; i++ {
		r := run(t, limits{Timeout: 30 * time.Second}, "exec", "--timeout", "10s", "--", "sh", "-c", script)
		r.bounded(t)
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r)
		}
		if left := runtimetest.WaitGone(tok, time.Second); len(left) > 0 {
			t.Fatalf("run %d: the daemon %v survived exec (no --procs): %s", i, left, r)
		}
	}
}

func TestRuntimeSigkillOfCodeloomKillsGrandchildren(t *testing.T) {
	tok := runtimetest.Token(t)
	runtimetest.KillOnCleanup(t, tok)
	script := `setsid -f env -i sh -c 'trap "" TERM; sleep 300; : ` + tok + `'; (sleep 300; : ` + tok + `) & sleep 300; : ` + tok
	cmd, done, out := runtimeStart(t, nil, "exec", "--timeout", "60s", "--", "sh", "-c", script)
	// Three in the tree, plus codeloom itself (its command line too).
	if n := runtimetest.WaitCount(tok, 4, 20*time.Second); n < 4 {
		t.Fatalf("tree not started (%d processes): %s", n, out)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL) // codeloom only, not its group
	<-done
	if left := runtimetest.WaitGone(tok, 5*time.Second); len(left) > 0 {
		t.Fatalf("processes %v outlived the SIGKILLed codeloom", left)
	}
}

func TestRuntimeExecConfinesTheFilesystem(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proj")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(os.TempDir(), "codeloom-adv-abs-"+filepath.Base(root))
	home, _ := os.UserHomeDir()
	homeFile := filepath.Join(home, "codeloom-adv-home-"+filepath.Base(root))
	t.Cleanup(func() { os.Remove(abs); os.Remove(homeFile) })
	script := `echo in > inside.txt; echo out > ../outside.txt; echo abs > ` + homeFile + `; echo tmp > ` + abs + `; exit 0`
	r := run(t, limits{Timeout: 30 * time.Second}, "exec", "--json", "--dir", dir, "--", "sh", "-c", script)
	r.bounded(t)
	var j struct {
		Confined    bool   `json:"confined"`
		ConfineNote string `json:"confine_note"`
		Stderr      string `json:"stderr"`
		ExitCode    int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &j); err != nil {
		t.Fatalf("json: %v: %s", err, r)
	}
	if !j.Confined {
		t.Fatalf("exec not confined (%q): %s", j.ConfineNote, r)
	}
	for _, p := range []string{filepath.Join(root, "outside.txt"), homeFile, abs} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s written by a confined program (%v)", p, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "inside.txt")); err != nil || string(b) != "in\n" {
		t.Errorf("its own folder not writable: %q %v", b, err)
	}
	// Reported: the program sees the refusal, the summary says confined.
	if strings.Count(j.Stderr, "Read-only file system") < 2 {
		t.Errorf("refused writes not reported to the program: %q", j.Stderr)
	}
	r = run(t, limits{Timeout: 30 * time.Second}, "exec", "--dir", dir, "--", "true")
	if !strings.Contains(r.Stderr, "filesystem confined") {
		t.Errorf("text summary does not say confined: %s", r)
	}
	// --confine=false restores the old behaviour (the case is not vacuous).
	r = run(t, limits{Timeout: 30 * time.Second}, "exec", "--confine=false", "--dir", dir, "--", "sh", "-c", "echo out > ../outside.txt")
	if _, err := os.Stat(filepath.Join(root, "outside.txt")); err != nil || r.Code != 0 {
		t.Errorf("unconfined write failed: %v %s", err, r)
	}
}

// TestRuntimeForkBombAsUnprivilegedUser runs codeloom as the nobody user:
// no cgroup, no namespaces, the process limit is RLIMIT_NPROC.
func TestRuntimeForkBombAsUnprivilegedUser(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	// With a temp folder of its own: /tmp/go-graphviz may belong to root
	// (a separate issue-14 item, not this case's subject).
	cmd := runtimetest.AsNobody(t, bin, "exec", "--procs", "30", "--timeout", "4s", "--", "bash", "-c", "bomb() { bomb | bomb & }; bomb; sleep 15")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &capped{b: &out}, &capped{b: &out}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		killGroup(cmd.Process.Pid)
		<-done
		t.Fatalf("not bounded: %s", out.String())
	}
	killGroup(cmd.Process.Pid)
	if code := cmd.ProcessState.ExitCode(); code != 126 {
		t.Fatalf("fork bomb as nobody: exit %d, want 126 (process limit): %s", code, out.String())
	}
}

// TestRuntimeStaleCgroupCleanupSparesOthers leaves another program's empty
// codeloom-* cgroup (and an old-looking one) where exec's cleanup runs.
func TestRuntimeStaleCgroupCleanupSparesOthers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a pids cgroup")
	}
	// Where exec makes its run cgroups: below this process's own pids
	// cgroup (v1) or its own cgroup (v2), as codeloom will be there too.
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skip(err)
	}
	base := ""
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && strings.Contains(","+f[1]+",", ",pids,") {
			base = filepath.Join("/sys/fs/cgroup/pids", f[2])
		}
	}
	if base == "" {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if f := strings.SplitN(line, ":", 3); len(f) == 3 && f[0] == "0" && f[1] == "" {
				base = filepath.Join("/sys/fs/cgroup", f[2])
			}
		}
	}
	if _, err := os.Stat(filepath.Join(base, "cgroup.procs")); err != nil {
		t.Skipf("no pids cgroup found (%q): %v", base, err)
	}
	tok := runtimetest.Token(t)
	other := filepath.Join(base, "codeloom-"+tok)
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Skipf("cannot make a cgroup here: %v", err)
	}
	t.Cleanup(func() { os.Remove(other) })
	// Old enough for the cleanup to consider it (where times can be set).
	old := time.Now().Add(-time.Hour)
	_ = os.Chtimes(other, old, old)
	r := run(t, limits{Timeout: 30 * time.Second}, "exec", "--procs", "10", "--", "true")
	r.bounded(t)
	if r.Code != 0 {
		t.Fatalf("exec: %s", r)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("another program's cgroup %s was removed: %v", other, err)
	}
}

func TestRuntimeStdinThatNeverClosesEndsAtTimeout(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close() // held open: the stdin never ends
	start := time.Now()
	cmd, done, out := runtimeStart(t, pr, "exec", "--stdin", "-", "--timeout", "2s", "--", "cat")
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("exec --stdin - ran past --timeout 2s (%v): %s", time.Since(start), out)
	}
	if code := cmd.ProcessState.ExitCode(); code != 124 {
		t.Fatalf("exit %d, want 124: %s", code, out)
	}

	// SIGTERM ends it too (sent once the program runs, so codeloom is
	// past its start-up and listens for it).
	tok := runtimetest.Token(t)
	runtimetest.KillOnCleanup(t, tok)
	cmd, done, out = runtimeStart(t, pr, "exec", "--stdin", "-", "--timeout", "60s", "--", "sh", "-c", "cat; : "+tok)
	deadline := time.Now().Add(20 * time.Second)
	started := func() bool { // codeloom's own command line has the token too
		for _, pid := range runtimetest.Survivors(tok) {
			if pid != cmd.Process.Pid {
				return true
			}
		}
		return false
	}
	for !started() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("exec --stdin - ignored SIGTERM: %s", out)
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("after SIGTERM: exit %d, want 130: %s", code, out)
	}
}

func TestRuntimeKnowsNothingOfTheStore(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "codeloom/runtime").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "codeloom/app") {
			t.Errorf("runtime depends on %s", p)
		}
	}
}
