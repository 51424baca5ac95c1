package codegraph

import (
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Helpers of the measurements on a big corpus (TestPersistScale,
// TestUpdateScale).

// scaleCorpus returns $CODELOOM_SCALE_CORPUS, the copy of a big corpus the
// scale measurements use (they write .codeloom/ into it and edit a file),
// or skips the test when it is not set.
func scaleCorpus(t *testing.T) string {
	t.Helper()
	root := os.Getenv("CODELOOM_SCALE_CORPUS")
	if root == "" {
		t.Skip("set CODELOOM_SCALE_CORPUS to a copy of a big corpus")
	}
	return root
}

// processCPU returns the CPU time (user + sys) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// scaleTarget returns the first of cands (slash paths under root) that
// exists, its full path and its content; target is "" when none does.
func scaleTarget(t *testing.T, root string, cands ...string) (target, full string, orig []byte) {
	t.Helper()
	for _, cand := range cands {
		if _, err := os.Stat(filepath.Join(root, cand)); err == nil {
			target = cand
			break
		}
	}
	if target == "" {
		return "", "", nil
	}
	full = filepath.Join(root, filepath.FromSlash(target))
	orig, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	return target, full, orig
}

// commentEdited returns orig with a comment line appended (in the comment
// syntax of target, Go or Python), one of 7 versions chosen by i.
func commentEdited(orig []byte, target string, i int) []byte {
	comment := "#"
	if strings.HasSuffix(target, ".go") {
		comment = "//"
	}
	return append(append([]byte(nil), orig...), []byte("\n"+comment+" edit "+strings.Repeat("x", i%7)+"\n")...)
}

// cpuProfileFromEnv starts a CPU profile into the file named by the
// environment variable env, if set, and returns what stops it (nothing
// when env is unset or another CPU profile is running).
func cpuProfileFromEnv(t *testing.T, env string) (stop func()) {
	prof := os.Getenv(env)
	if prof == "" {
		return func() {}
	}
	f, err := os.Create(prof)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil { // another profile runs
		f.Close()
		t.Logf("%s: no profile: %v", env, err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
