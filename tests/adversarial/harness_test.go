// Package adversarial drives the real codeloom binary with hostile input:
// special files, damaged stores, runaway programs, escaping patches. Every
// case is bounded in time and memory (see run) and works in its own temporary
// folder, so the suite is safe on a shared machine.
//
// The binary is built once per run (or taken from CODELOOM_ADV_BIN).
package adversarial

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bin is the codeloom binary under test, set by TestMain.
var bin string

func TestMain(m *testing.M) {
	os.Exit(mainWithBinary(m))
}

func mainWithBinary(m *testing.M) int {
	if b := os.Getenv("CODELOOM_ADV_BIN"); b != "" {
		bin = b
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "codeloom-adv-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "adversarial: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "codeloom")
	build := exec.Command("go", "build", "-o", bin, "codeloom")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "adversarial: build codeloom:", err)
		return 1
	}
	return m.Run()
}

// result is what one bounded run of the binary produced.
type result struct {
	Stdout, Stderr string
	Code           int           // exit status; -1 when a signal ended it
	TimedOut       bool          // the harness killed it at its time limit
	OverMemory     bool          // the harness killed it over its memory limit
	PeakRSS        int64         // bytes, from the kernel's accounting
	Wall           time.Duration // from start to exit
}

// limits bound one run; zero fields take the defaults.
type limits struct {
	Timeout time.Duration // default 60 s
	MaxRSS  int64         // bytes; default 1 GiB
	Dir     string        // working folder
	Env     []string      // added to the environment
	Stdin   string
}

// run starts the binary with args under lim and waits for it. The process and
// everything it started run in their own process group, which is killed at the
// time or memory limit, so a hang or a runaway fails the case instead of the
// suite.
func run(t *testing.T, lim limits, args ...string) result {
	t.Helper()
	if lim.Timeout == 0 {
		lim.Timeout = 60 * time.Second
	}
	if lim.MaxRSS == 0 {
		lim.MaxRSS = 1 << 30
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = lim.Dir
	cmd.Env = append(os.Environ(), lim.Env...)
	cmd.Stdin = strings.NewReader(lim.Stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &capped{b: &stdout}, &capped{b: &stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	resetPeakRSS()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	res := result{}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), lim.Timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var waitErr error
	var sampled int64 // the largest group RSS seen
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case <-ctx.Done():
			res.TimedOut = true
			killGroup(cmd.Process.Pid)
		case <-tick.C:
			rss := groupRSS(cmd.Process.Pid)
			sampled = max(sampled, rss)
			if rss > lim.MaxRSS {
				res.OverMemory = true
				killGroup(cmd.Process.Pid)
			}
		}
	}
	killGroup(cmd.Process.Pid) // leftovers of a finished run
	res.Wall = time.Since(start)
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	res.Code = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.PeakRSS = ru.Maxrss * 1024
	}
	res.PeakRSS = max(res.PeakRSS, sampled)
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		t.Fatalf("wait %s: %v", bin, waitErr)
	}
	measure(t, "run", lim.Timeout, lim.MaxRSS, res.Wall, res.PeakRSS, args)
	return res
}

// measureEnv names a file to which every bounded run appends one line of
// what it used against its bounds (CODELOOM_ADV_MEASURE=/path): how the
// margins of the suite's bounds were measured (see BENCHMARKS.md).
const measureEnv = "CODELOOM_ADV_MEASURE"

// measure appends one run's figures to the measureEnv file, if one is set:
// tab-separated test, kind, time bound, time used, memory bound, peak, args.
func measure(t *testing.T, kind string, timeout time.Duration, maxRSS int64, used time.Duration, peak int64, args []string) {
	path := os.Getenv(measureEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Logf("%s: %v", measureEnv, err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s\t%s\t%.3f\t%.3f\t%d\t%d\t%q\n", t.Name(), kind, timeout.Seconds(), used.Seconds(), maxRSS>>20, peak>>20, strings.Join(args, " "))
}

// String describes a result for failure messages.
func (r result) String() string {
	return fmt.Sprintf("exit %d (timed out %v, over memory %v, peak %d MB, %v)\nstdout:\n%s\nstderr:\n%s",
		r.Code, r.TimedOut, r.OverMemory, r.PeakRSS>>20, r.Wall.Round(time.Millisecond), clip(r.Stdout), clip(r.Stderr))
}

// bounded fails the test unless the run ended on its own within its limits.
func (r result) bounded(t *testing.T) {
	t.Helper()
	if r.TimedOut || r.OverMemory {
		t.Fatalf("not bounded: %s", r)
	}
	if strings.Contains(r.Stderr, "goroutine ") && strings.Contains(r.Stderr, "panic") {
		t.Fatalf("panicked: %s", r)
	}
}

// resetPeakRSS makes the next child's peak RSS its own. Go starts a child
// with vfork, sharing this process's memory until the exec, and the kernel
// carries that memory's high-water mark into the child's ru_maxrss: every
// run reported at least this test process's own peak (127 MB for a 63 MB
// `codeloom version`, 410 MB after the huge-patch case built its 100 MB
// script). Returning freed memory to the OS and resetting the high-water
// mark (clear_refs 5, Linux 4.0+) leaves only this process's live memory in
// the figure, a few MB.
func resetPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // best effort: older kernels keep the old figure
}

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// groupRSS sums the resident memory of the process group pgid.
func groupRSS(pgid int) int64 {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err != nil || g != pgid {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "statm"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			total += pages * int64(os.Getpagesize())
		}
	}
	return total
}

// capped keeps the first 4 MiB written to it.
type capped struct{ b *bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := 4<<20 - c.b.Len(); room > 0 {
		if len(p) > room {
			c.b.Write(p[:room])
		} else {
			c.b.Write(p)
		}
	}
	return len(p), nil
}

func clip(s string) string {
	if len(s) > 4000 {
		return s[:2000] + "\n…\n" + s[len(s)-2000:]
	}
	return s
}

// project writes files (slash paths → contents) into a fresh folder.
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestHarnessBoundsAHang proves the harness itself: a run that would hang is
// killed at its limit and reported, not waited for.
func TestHarnessBoundsAHang(t *testing.T) {
	r := run(t, limits{Timeout: 3 * time.Second}, "exec", "--", "sleep", "30")
	if !r.TimedOut && r.Code != 124 {
		t.Fatalf("sleep 30 under a 3 s harness limit: %s", r)
	}
	if r.Wall > 20*time.Second {
		t.Fatalf("the harness waited %v for a 3 s limit", r.Wall)
	}
}
