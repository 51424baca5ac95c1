//go:build linux

package runtime

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"codeloom/runtime/runtimetest"
)

// Without root there is no holder (its namespaces need CAP_SYS_ADMIN): the
// program itself runs in a user+PID namespace. These tests run the test
// binary again as the nobody user (root is needed to switch), or directly
// when already unprivileged.

const asNobodyEnv = "CODELOOM_TEST_USERPID"

// asNobody runs test name of this binary as nobody with env added and
// returns the started command (not waited for) and its output buffer. It
// skips when that is impossible here.
func asNobody(t *testing.T, name string, env ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to nobody (unprivileged already: the in-process variant ran)")
	}
	cmd := runtimetest.AsNobody(t, os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(append(cmd.Env, asNobodyEnv+"=1"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// finishAsNobody waits (bounded) for asNobody's command and fails unless
// its test passed; a skip there is a skip here, with its reason.
func finishAsNobody(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("as nobody: not finished in 60 s:\n%s", out)
	}
	switch s := out.String(); {
	case strings.Contains(s, "--- SKIP"):
		t.Skipf("as nobody: %s", s)
	case !strings.Contains(s, "--- PASS"):
		t.Fatalf("as nobody:\n%s", s)
	}
}

// needUserPID skips an unprivileged run where the kernel refuses user
// namespaces (the runner then says so in its notes: checked here too).
func needUserPID(t *testing.T, res Result) {
	t.Helper()
	if slices.Contains(res.LimitNotes, userPIDNote) {
		return
	}
	for _, n := range res.LimitNotes {
		if strings.Contains(n, "no unprivileged user namespace") {
			t.Skipf("no user+PID namespace here, and the run says so: %s", n)
		}
	}
	t.Fatalf("unprivileged run neither in a user+PID namespace nor saying why not: %v", res.LimitNotes)
}

func TestUnprivilegedDaemonDoesNotSurvive(t *testing.T) {
	if os.Geteuid() == 0 && os.Getenv(asNobodyEnv) == "" {
		tok := runtimetest.Token(t)
		runtimetest.KillOnCleanup(t, tok)
		cmd, out := asNobody(t, "TestUnprivilegedDaemonDoesNotSurvive", "CODELOOM_TEST_TOKEN="+tok)
		finishAsNobody(t, cmd, out)
		if left := runtimetest.Survivors(tok); len(left) > 0 {
			t.Fatalf("daemons %v survived the runs as nobody", left)
		}
		return
	}
	tok := os.Getenv("CODELOOM_TEST_TOKEN")
	if tok == "" {
		tok = runtimetest.Token(t)
	}
	runtimetest.KillOnCleanup(t, tok)
	script := `sleep 0.2; setsid -f env -i sh -c 'trap "" TERM; sleep 300; : ` + tok + `'; echo $$`
	for i := 0; i < 3; i++ {
		res, err := New().Run(context.Background(), Spec{Command: []string{"sh", "-c", script}, Dir: "/", Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		needUserPID(t, res)
		if res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "1" {
			t.Fatalf("exit %d, pid %q (want 1, the namespace's init): %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		if left := runtimetest.Survivors(tok); len(left) > 0 {
			t.Fatalf("run %d: daemon %v survived (unprivileged)", i, left)
		}
	}
}

// TestUnprivilegedRunnerKilledTakesTreeAlong: SIGKILL of an unprivileged
// runner kills its program's daemonised grandchildren too (Pdeathsig on the
// namespace's init).
func TestUnprivilegedRunnerKilledTakesTreeAlong(t *testing.T) {
	tok := runtimetest.Token(t)
	runtimetest.KillOnCleanup(t, tok)
	// The child mode of TestRunnerKilledTakesTreeAlong, as nobody.
	cmd, out := asNobody(t, "TestRunnerKilledTakesTreeAlong", "CODELOOM_TEST_RUNNER_TOKEN="+tok)
	if n := runtimetest.WaitCount(tok, 2, 20*time.Second); n < 2 { // the shell and the daemon
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the tree did not start (%d processes):\n%s", n, out)
	}
	_ = cmd.Process.Kill() // setpriv exec'd the runner: this is it
	_ = cmd.Wait()
	if left := runtimetest.WaitGone(tok, 5*time.Second); len(left) > 0 {
		t.Fatalf("processes %v outlived the SIGKILLed unprivileged runner", left)
	}
}

// TestUnprivilegedTimeoutEndsInit: the program is its namespace's init,
// which ignores SIGTERM it has no handler for; the timeout still ends it.
func TestUnprivilegedTimeoutEndsInit(t *testing.T) {
	if os.Geteuid() == 0 && os.Getenv(asNobodyEnv) == "" {
		cmd, out := asNobody(t, "TestUnprivilegedTimeoutEndsInit")
		finishAsNobody(t, cmd, out)
		return
	}
	start := time.Now()
	res, err := New().Run(context.Background(), Spec{Command: []string{"sleep", "30"}, Dir: "/", Timeout: time.Second, Grace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	needUserPID(t, res)
	if !res.TimedOut || res.Limit != LimitTimeout || time.Since(start) > 20*time.Second {
		t.Fatalf("timed out %v, limit %q after %v", res.TimedOut, res.Limit, time.Since(start))
	}
}
