//go:build linux

package runtime

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"codeloom/runtime/runtimetest"
)

// needNamespaces skips when the runner cannot create PID and mount
// namespaces here (not root).
func needNamespaces(t *testing.T) {
	t.Helper()
	res, err := New().Run(context.Background(), Spec{Command: []string{"true"}, Confine: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Confined {
		t.Skipf("no namespaces here: %s %v", res.ConfineNote, res.LimitNotes)
	}
}

func TestDaemonClearingItsEnvironmentDoesNotSurvive(t *testing.T) {
	needNamespaces(t)
	tok := runtimetest.Token(t)
	// A new session, a cleared environment (no marker), SIGTERM ignored,
	// and its parent gone before the first scan: only the PID namespace
	// still ties it to the run.
	script := `setsid -f env -i sh -c 'trap "" TERM; sleep 300; : ` + tok + `'; exit 0`
	runtimetest.KillOnCleanup(t, tok)
	for i := 0; i < 3; i++ {
		res := run(t, Spec{Command: []string{"sh", "-c", script}})
		if res.ExitCode != 0 {
			t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
		}
		if left := runtimetest.Survivors(tok); len(left) > 0 {
			t.Fatalf("run %d: daemon %v survived", i, left)
		}
	}
}

// TestRunnerKilledTakesTreeAlong SIGKILLs a process running a Run (this
// test binary, re-executed) and checks that the program's daemonised
// grandchildren die with it.
func TestRunnerKilledTakesTreeAlong(t *testing.T) {
	if tok := os.Getenv("CODELOOM_TEST_RUNNER_TOKEN"); tok != "" {
		script := `setsid -f env -i sh -c 'trap "" TERM; sleep 300; : ` + tok + `'; trap "" TERM; sleep 300; : ` + tok
		_, _ = New().Run(context.Background(), Spec{Command: []string{"sh", "-c", script}, Timeout: time.Minute})
		os.Exit(0)
	}
	needNamespaces(t)
	tok := runtimetest.Token(t)
	runtimetest.KillOnCleanup(t, tok)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunnerKilledTakesTreeAlong$")
	cmd.Env = append(os.Environ(), "CODELOOM_TEST_RUNNER_TOKEN="+tok)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if n := runtimetest.WaitCount(tok, 2, 20*time.Second); n < 2 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the tree did not start (%d processes)", n)
	}
	_ = cmd.Process.Kill() // SIGKILL: the runner gets no chance to clean up
	_ = cmd.Wait()
	if left := runtimetest.WaitGone(tok, 5*time.Second); len(left) > 0 {
		t.Fatalf("processes %v outlived the SIGKILLed runner", left)
	}
}

func TestConfinedRunWritesOnlyItsFolder(t *testing.T) {
	needNamespaces(t)
	root := t.TempDir() // under /tmp: the private /tmp must not hide it
	dir := filepath.Join(root, "proj")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	abs := filepath.Join(home, "codeloom-confine-"+filepath.Base(root))
	hostTmp := filepath.Join(os.TempDir(), "codeloom-confine-tmp-"+filepath.Base(root))
	t.Cleanup(func() { os.Remove(abs); os.Remove(hostTmp) })
	script := `echo in > inside.txt && echo ok-inside
echo out > ../outside.txt 2>/dev/null && echo wrote-outside
echo abs > ` + abs + ` 2>/dev/null && echo wrote-abs
echo t > ` + hostTmp + ` && echo wrote-tmp
cat ` + filepath.Join(root, "proj", "inside.txt")
	res := run(t, Spec{Command: []string{"sh", "-c", script}, Dir: dir, Confine: true})
	out := string(res.Stdout)
	if !res.Confined || !strings.Contains(res.ConfineNote, dir) {
		t.Fatalf("not confined: %q", res.ConfineNote)
	}
	if !strings.Contains(out, "ok-inside") || !strings.Contains(out, "in\n") {
		t.Fatalf("could not write its own folder: %q %q", out, res.Stderr)
	}
	if strings.Contains(out, "wrote-outside") || strings.Contains(out, "wrote-abs") {
		t.Fatalf("wrote outside its folder: %q", out)
	}
	if !strings.Contains(out, "wrote-tmp") {
		t.Fatalf("no private /tmp: %q %q", out, res.Stderr)
	}
	for _, p := range []string{filepath.Join(root, "outside.txt"), abs, hostTmp} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after the confined run (%v)", p, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "inside.txt")); err != nil || string(b) != "in\n" {
		t.Fatalf("inside.txt %q %v", b, err)
	}
	// Unconfined, the same write lands (the test is not vacuous).
	res = run(t, Spec{Command: []string{"sh", "-c", "echo out > ../outside.txt"}, Dir: dir})
	if res.Confined || res.ExitCode != 0 {
		t.Fatalf("unconfined run: confined %v exit %d", res.Confined, res.ExitCode)
	}
	if _, err := os.Stat(filepath.Join(root, "outside.txt")); err != nil {
		t.Fatal(err)
	}
}

func TestConfinedSnippetAndWritable(t *testing.T) {
	needNamespaces(t)
	extra := t.TempDir()
	res := run(t, Spec{Code: "echo snippet; echo w > " + extra + "/w.txt", Language: "sh", Dir: t.TempDir(),
		Confine: true, Writable: []string{extra}})
	if !res.Confined || !strings.Contains(string(res.Stdout), "snippet") {
		t.Fatalf("confined snippet: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(extra, "w.txt")); err != nil {
		t.Fatalf("writable dir not written: %v %s", err, res.Stderr)
	}
}

// blockingReader never returns.
type blockingReader struct{ stop chan struct{} }

func (b blockingReader) Read([]byte) (int, error) { <-b.stop; return 0, io.EOF }

func TestStdinThatNeverEndsDoesNotHoldTheRun(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close() // never written nor closed during the run
	stop := make(chan struct{})
	defer close(stop)
	for _, in := range []io.Reader{r, blockingReader{stop}} {
		start := time.Now()
		res := run(t, Spec{Command: []string{"cat"}, StdinReader: in, Timeout: 500 * time.Millisecond, Grace: 200 * time.Millisecond})
		if !res.TimedOut || res.Limit != LimitTimeout {
			t.Fatalf("%T: not ended by the timeout: %+v", in, res)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Fatalf("%T: took %v", in, d)
		}
	}
	// A stream that does end is passed through.
	res := run(t, Spec{Command: []string{"cat"}, StdinReader: strings.NewReader("streamed")})
	if string(res.Stdout) != "streamed" {
		t.Fatalf("stdout %q", res.Stdout)
	}
}

func TestStaleCgroupCleanupRemovesOnlyOurs(t *testing.T) {
	base := t.TempDir() // plain directories stand in for cgroups
	uid := os.Geteuid()
	dead := 1 << 30 // no such pid
	mine := filepath.Join(base, cgroupName(uid, dead, "0123456789abcdef01234567"))
	live := filepath.Join(base, cgroupName(uid, os.Getpid(), "0123456789abcdef01234567"))
	otherUser := filepath.Join(base, cgroupName(uid+1, dead, "0123456789abcdef01234567"))
	foreign := filepath.Join(base, "codeloom-something-else")
	oldStyle := filepath.Join(base, "codeloom-0123456789abcdef01234567")
	for _, d := range []string{mine, live, otherUser, foreign, oldStyle} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleCgroups(base, uid)
	if _, err := os.Stat(mine); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("our stale cgroup kept: %v", err)
	}
	for _, d := range []string{live, otherUser, foreign, oldStyle} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(d), err)
		}
	}
}

// TestForkBombAsUnprivilegedUser runs the fork-bomb case of this test
// binary as the nobody user (RLIMIT_NPROC, no cgroup, no namespaces): a
// tree held at its process limit must be reported as that limit, not as
// the timeout it also reaches.
func TestForkBombAsUnprivilegedUser(t *testing.T) {
	if os.Getenv("CODELOOM_TEST_AS_NOBODY") != "" {
		if os.Geteuid() == 0 {
			t.Fatal("still root")
		}
		// The exponential bomb: its processes die and respawn, so the tree
		// hovers below the limit while every fork is refused.
		res, err := New().Run(context.Background(), Spec{Command: []string{"bash", "-c", "bomb() { bomb | bomb & }; bomb; sleep 15"},
			Limits: Limits{Procs: 30}, Timeout: 4 * time.Second, Dir: "/"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Limit != LimitProcs {
			t.Fatalf("limit %q (timed out %v), notes %v", res.Limit, res.TimedOut, res.LimitNotes)
		}
		return
	}
	cmd := runtimetest.AsNobody(t, os.Args[0], "-test.run=^TestForkBombAsUnprivilegedUser$", "-test.v")
	cmd.Env = append(cmd.Env, "CODELOOM_TEST_AS_NOBODY=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS")) {
		t.Fatalf("as nobody:\n%s", out)
	}
}

func TestRuntimeImportsNothingOfApp(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "codeloom/app") {
			t.Errorf("runtime depends on %s", p)
		}
	}
}

func TestConfinedRunJoinsItsPidsCgroup(t *testing.T) {
	needNamespaces(t)
	res := run(t, Spec{Command: []string{"sh", "-c", "while :; do sleep 30 & done"}, Limits: Limits{Procs: 20},
		Timeout: 20 * time.Second, Confine: true, Dir: t.TempDir()})
	if res.Limit != LimitProcs || !res.Confined {
		t.Fatalf("limit %q confined %v notes %v stderr %s", res.Limit, res.Confined, res.LimitNotes, res.Stderr)
	}
}
