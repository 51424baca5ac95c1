package codegraph

import (
	"runtime/debug"
	"testing"
)

// tightenGC lowers the GC target for a build and restores the caller's
// setting, but leaves a setting alone that is already tighter, or that
// something else changed meanwhile.
func TestTightenGCRestores(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	restore := tightenGC()
	if got := debug.SetGCPercent(buildGCPercent); got != buildGCPercent {
		t.Errorf("during the build GOGC is %d, want %d", got, buildGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after the build GOGC is %d, want 100 again", got)
	}
	// Nested builds (two projects): the inner leaves the outer's setting.
	outer := tightenGC()
	inner := tightenGC()
	inner()
	if got := debug.SetGCPercent(buildGCPercent); got != buildGCPercent {
		t.Errorf("inner restore changed GOGC to %d during the outer build", got)
	}
	outer()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after both builds GOGC is %d, want 100", got)
	}
	// Changed by the user during the build: kept.
	restore = tightenGC()
	debug.SetGCPercent(300)
	restore()
	if got := debug.SetGCPercent(100); got != 300 {
		t.Errorf("a setting made during the build became %d, want 300 kept", got)
	}
	// Already tighter: untouched.
	debug.SetGCPercent(10)
	restore = tightenGC()
	if got := debug.SetGCPercent(10); got != 10 {
		t.Errorf("a tighter setting became %d during the build", got)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 10 {
		t.Errorf("a tighter setting became %d after the build", got)
	}
}
