package adversarial

// Issue 14, the last gaps: a huge file must be linear and bounded, and a
// run's tree must not escape an unprivileged codeloom either.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hardenGiantFunction is about size bytes of Python that is one function:
// a single top-level statement the indexer cannot cut between statements.
func hardenGiantFunction(size int) string {
	var b strings.Builder
	b.WriteString("def giant(a, b):\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "    x%d = call_%d(a, b.attr%d, [i * %d for i in range(3)])\n    if x%d:\n        b.m%d(x%d)\n", i, i%1000, i%77, i, i, i%100, i)
	}
	b.WriteString("    return a\n")
	return b.String()
}

// TestHardenHugeSingleStatementBounded: a 6 MB file that is one function
// took 630 MB (its whole syntax tree: parts were doubled until the node
// fitted, 50 MB reached 5 GB); now it is cut inside, bounded, and the
// report says so.
func TestHardenHugeSingleStatementBounded(t *testing.T) {
	dir := project(t, map[string]string{"giant.py": hardenGiantFunction(6 << 20)})
	r := run(t, limits{Timeout: 90 * time.Second, MaxRSS: 512 << 20}, "index", "--no-cache", "--max-size", "67108864", dir)
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "indexed giant.py: a single top-level statement of more than") {
		t.Fatalf("want the file indexed with its caveat: %s", r)
	}
	if r.PeakRSS > 512<<20 {
		t.Fatalf("peak RSS %d MB, bound 512 MB: %s", r.PeakRSS>>20, r)
	}
	t.Logf("6 MB single function: %v, peak %d MB", r.Wall.Round(time.Millisecond), r.PeakRSS>>20)
}

// hardenCPU runs the binary with args (bounded like run) and returns its
// CPU time (user + system), which the load of a shared machine changes
// far less than the wall time.
func hardenCPU(t *testing.T, timeout time.Duration, args ...string) time.Duration {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &capped{b: &out}, &capped{b: &out}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(timeout, func() { killGroup(cmd.Process.Pid) })
	err := cmd.Wait()
	if !timer.Stop() {
		t.Fatalf("%v: not finished in %v (quadratic?)", args, timeout)
	}
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, clip(out.String()))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestHardenManyArgumentsLinear: the position of each argument of a call
// was found by rescanning the list from its "(": a call with 40,000
// arguments cost 2.1 s of CPU, 80,000 about 4× that. Twice the arguments
// must now cost well under 3× the CPU (2× plus the start-up).
func TestHardenManyArgumentsLinear(t *testing.T) {
	call := func(n int) string {
		return "def g(*a):\n    return a\n\ndef k(v):\n    return g(" + strings.Repeat("v, ", n) + "v)\n"
	}
	small := project(t, map[string]string{"a.py": call(40000)})
	large := project(t, map[string]string{"a.py": call(80000)})
	// Warm the page cache and the binary once.
	hardenCPU(t, 60*time.Second, "index", "--no-cache", small)
	cs := hardenCPU(t, 60*time.Second, "index", "--no-cache", small)
	cl := hardenCPU(t, 60*time.Second, "index", "--no-cache", large)
	t.Logf("40,000 arguments: %v CPU; 80,000: %v", cs, cl)
	if cl > 3*cs+300*time.Millisecond {
		t.Fatalf("80,000 arguments cost %v of CPU, 40,000 %v: superlinear", cl, cs)
	}
}

// hardenAsNobody returns a command running a copy of the binary as the
// nobody user (via setpriv), or skips saying why it cannot.
func hardenAsNobody(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv(1)")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no nobody user")
	}
	group := nobody.Gid
	if g, err := user.LookupGroup("nogroup"); err == nil {
		group = g.Gid
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	nb := filepath.Join(dir, "codeloom")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nb, data, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o1777)
	cmd := exec.Command(setpriv, append([]string{"--reuid=" + nobody.Uid, "--regid=" + group, "--clear-groups", "--", nb}, args...)...)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "HOME=/nonexistent", "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// TestHardenUnprivilegedDaemonDies: as a non-root user there is no holder
// (its namespaces need root) and no cgroup; the daemon of the issue
// survived every run. Now the program runs in a user+PID namespace of its
// own, or the run says why it cannot.
func TestHardenUnprivilegedDaemonDies(t *testing.T) {
	tok := runtimeToken(t)
	runtimeCleanup(t, tok)
	script := `sleep 0.3; setsid -f env -i sh -c 'trap "" TERM; sleep 300; : ` + tok + `'; sleep 0.3`
	for i := 0; i < 2; i++ {
		cmd := hardenAsNobody(t, "exec", "--timeout", "10s", "--", "sh", "-c", script)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &capped{b: &out}, &capped{b: &out}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(60*time.Second, func() { killGroup(cmd.Process.Pid) })
		err := cmd.Wait()
		timer.Stop()
		killGroup(cmd.Process.Pid)
		if err != nil {
			t.Fatalf("exec as nobody: %v\n%s", err, out.String())
		}
		if strings.Contains(out.String(), "no unprivileged user namespace") {
			t.Skipf("this kernel refuses unprivileged user namespaces, and exec says so: %s", out.String())
		}
		if !strings.Contains(out.String(), "PID namespace in a user namespace") {
			t.Fatalf("exec as nobody does not say how its tree is held: %s", out.String())
		}
		if left := runtimeWaitGone(tok, time.Second); len(left) > 0 {
			t.Fatalf("run %d: the daemon %v survived an unprivileged exec: %s", i, left, out.String())
		}
	}
}

// TestHardenUnprivilegedSigkillKillsGrandchildren: SIGKILL of a non-root
// codeloom during exec leaves none of its grandchildren running.
func TestHardenUnprivilegedSigkillKillsGrandchildren(t *testing.T) {
	tok := runtimeToken(t)
	runtimeCleanup(t, tok)
	script := `setsid -f env -i sh -c 'trap "" TERM; sleep 300; : ` + tok + `'; (sleep 300; : ` + tok + `) & sleep 300; : ` + tok
	cmd := hardenAsNobody(t, "exec", "--timeout", "60s", "--", "sh", "-c", script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &capped{b: &out}, &capped{b: &out}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { killGroup(cmd.Process.Pid); <-done })
	deadline := time.Now().Add(20 * time.Second)
	// Three in the tree, plus codeloom itself (its command line too).
	for time.Now().Before(deadline) && len(runtimeSurvivors(tok)) < 4 {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(runtimeSurvivors(tok)); n < 4 {
		t.Fatalf("tree not started (%d processes): %s", n, out.String())
	}
	_ = cmd.Process.Signal(syscall.SIGKILL) // setpriv exec'd codeloom: this is it
	<-done
	if left := runtimeWaitGone(tok, 5*time.Second); len(left) > 0 {
		t.Fatalf("processes %v outlived the SIGKILLed unprivileged codeloom", left)
	}
}
