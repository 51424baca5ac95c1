package adversarial

// Issue 14, the last gaps: a huge file must be linear and bounded, and a
// run's tree must not escape an unprivileged codeloom either.

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"codeloom/runtime/runtimetest"
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

// hardenGiantExpressions is about size bytes of Python that is one function
// whose statements are arithmetic on literals: the most syntax tree per
// byte and no references, so the run's memory is mostly the parser's.
func hardenGiantExpressions(size int) string {
	var b strings.Builder
	b.WriteString("def giant(a, b):\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "    (%d + %d * 3 - [%d, 4, (5, 6)][0]) %% 7\n", i, i%1000, i%77)
	}
	b.WriteString("    return a\n")
	return b.String()
}

// TestHardenHugeSingleStatementParserBounded: the parser holds one part of
// a statement that cannot be cut between statements, not its whole tree
// (parts were doubled until the node fitted: a 50 MB file reached 5 GB).
// Measured with /usr/bin/time on 2 cores at load 25: the same text at
// 3.9 MB, under the size where a file is parsed whole, peaks at 447 MB
// (98 bytes a byte over the 63 MB the binary starts with), so a whole tree
// of this 8 MB file would be about 850 MB; cut in 1 MB parts, 12 MB of it
// peaked at 172-176 MB. The 512 MB bound is 3x the measured peak and fails
// a whole tree by 1.6x (its size does not depend on the machine's load).
// Its time bound only says "finishes": 12 MB took 10.7 s of CPU, 78-153 s
// of wall time at that load.
func TestHardenHugeSingleStatementParserBounded(t *testing.T) {
	dir := project(t, map[string]string{"giant.py": hardenGiantExpressions(8 << 20)})
	r := run(t, limits{Timeout: 300 * time.Second, MaxRSS: 512 << 20}, "index", "--no-cache", "--max-size", "67108864", dir)
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "indexed giant.py: a single top-level statement of more than") {
		t.Fatalf("want the file indexed with its caveat: %s", r)
	}
	if r.PeakRSS > 512<<20 {
		t.Fatalf("peak RSS %d MB, bound 512 MB: %s", r.PeakRSS>>20, r)
	}
	t.Logf("8 MB single function of expressions: %v, peak %d MB", r.Wall.Round(time.Millisecond), r.PeakRSS>>20)
}

// TestHardenHugeSingleStatementBounded: a 6 MB function of calls,
// attributes and comprehensions, as real code has, is indexed with its
// caveat and its references' memory stays linear. It took 630 MB when its
// whole tree was parsed; bounded at 512 MB with 1 MB parts it peaked at
// 347-396 MB here at load 20-25 (389 MB by /usr/bin/time; 517 MB with 2 MB
// parts on CI): most of it is the Go heap of its 600,000 references, which
// a parser bound does not shrink. A whole tree here would be about 750 MB
// (the same text at 3.9 MB, parsed whole, peaks at 500 MB): too close to
// any bound with a margin, so the parser's bound is proven by the case
// above. This one bounds the whole run at 1 GiB, 2.6x the largest measured
// peak, and fails a run whose memory grows 2.5x as fast with the file as
// now (the references held twice over, plus a tree).
// Its time bound only says "finishes": 7.9 s on CI, 56-130 s at load 25
// here (where its old 90 s would have failed).
func TestHardenHugeSingleStatementBounded(t *testing.T) {
	dir := project(t, map[string]string{"giant.py": hardenGiantFunction(6 << 20)})
	r := run(t, limits{Timeout: 300 * time.Second, MaxRSS: 1 << 30}, "index", "--no-cache", "--max-size", "67108864", dir)
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "indexed giant.py: a single top-level statement of more than") {
		t.Fatalf("want the file indexed with its caveat: %s", r)
	}
	if r.PeakRSS > 1<<30 {
		t.Fatalf("peak RSS %d MB, bound 1 GiB: %s", r.PeakRSS>>20, r)
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
	resetPeakRSS()
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
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	measure(t, "cpu", timeout, 0, cpu, ru.Maxrss*1024, args)
	return cpu
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
// nobody user, in its own process group, or skips saying why it cannot.
func hardenAsNobody(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := runtimetest.AsNobody(t, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// TestHardenUnprivilegedDaemonDies: as a non-root user there is no holder
// (its namespaces need root) and no cgroup; the daemon of the issue
// survived every run. Now the program runs in a user+PID namespace of its
// own, or the run says why it cannot.
func TestHardenUnprivilegedDaemonDies(t *testing.T) {
	tok := runtimetest.Token(t)
	runtimetest.KillOnCleanup(t, tok)
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
		if left := runtimetest.WaitGone(tok, time.Second); len(left) > 0 {
			t.Fatalf("run %d: the daemon %v survived an unprivileged exec: %s", i, left, out.String())
		}
	}
}

// TestHardenUnprivilegedSigkillKillsGrandchildren: SIGKILL of a non-root
// codeloom during exec leaves none of its grandchildren running.
func TestHardenUnprivilegedSigkillKillsGrandchildren(t *testing.T) {
	tok := runtimetest.Token(t)
	runtimetest.KillOnCleanup(t, tok)
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
	// Three in the tree, plus codeloom itself (its command line too).
	if n := runtimetest.WaitCount(tok, 4, 20*time.Second); n < 4 {
		t.Fatalf("tree not started (%d processes): %s", n, out.String())
	}
	_ = cmd.Process.Signal(syscall.SIGKILL) // setpriv exec'd codeloom: this is it
	<-done
	if left := runtimetest.WaitGone(tok, 5*time.Second); len(left) > 0 {
		t.Fatalf("processes %v outlived the SIGKILLed unprivileged codeloom", left)
	}
}
