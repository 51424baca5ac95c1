//go:build linux

package runtime

import (
	"context"
	"testing"
	"time"

	"codeloom/runtime/runtimetest"
)

// idleHolderPid is the pid of the holder r keeps for its next run, or 0.
func idleHolderPid(r *LocalRunner) int {
	r.holders.mu.Lock()
	defer r.holders.mu.Unlock()
	if len(r.holders.idle) != 1 {
		return 0
	}
	return r.holders.idle[0].pid()
}

// TestHolderReusedAndEmptied: one runner's unconfined runs share a holder;
// a run that leaves orphans (a daemon that cleared its environment and left
// its session) has them killed with it and its holder is not reused.
func TestHolderReusedAndEmptied(t *testing.T) {
	needNamespaces(t)
	r := New()
	tok := runtimetest.Token(t)
	runtimetest.KillOnCleanup(t, tok)
	daemon := `setsid -f env -i sh -c 'trap "" TERM; sleep 300; : ` + tok + `'; (sleep 300; : ` + tok + `) & exit 0`
	tree := `sh -c 'sleep 0.01; : ` + tok + `' & wait`
	first := 0
	for i := 0; i < 6; i++ {
		script := tree
		if i == 3 {
			script = daemon
		}
		res, err := r.Run(context.Background(), Spec{Command: []string{"sh", "-c", script}, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 {
			t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
		}
		if left := runtimetest.Survivors(tok); len(left) > 0 {
			t.Fatalf("run %d: %v survived into the reused namespace", i, left)
		}
		hp := idleHolderPid(r)
		switch {
		case i == 3:
			if hp != 0 {
				t.Fatalf("run %d left orphans, yet its holder %d is kept", i, hp)
			}
			first = 0
		case hp == 0:
			t.Fatalf("run %d: no holder kept for the next run", i)
		case first == 0:
			first = hp
		case hp != first:
			t.Errorf("run %d: holder %d, want the reused %d", i, hp, first)
		}
	}
	// A confined run gets a holder of its own (its mounts are its own).
	res, err := r.Run(context.Background(), Spec{Command: []string{"true"}, Confine: true})
	if err != nil || !res.Confined {
		t.Fatalf("confined run: %v %+v", err, res)
	}
	if hp := idleHolderPid(r); hp != first {
		t.Errorf("after a confined run the idle holder is %d, want %d", hp, first)
	}
}
