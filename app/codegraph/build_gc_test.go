package codegraph

import (
	"runtime"
	"runtime/debug"
	"testing"
	"weak"
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

// loosenGCIfSmall raises the default target for a small project's index
// and restores it; a large project, or a target of the caller's own, is
// left alone.
func TestLoosenGCIfSmall(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	restore := loosenGCIfSmall(smallIndexBytes)
	if got := debug.SetGCPercent(smallGCPercent); got != smallGCPercent {
		t.Errorf("during a small index GOGC is %d, want %d", got, smallGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after a small index GOGC is %d, want 100 again", got)
	}
	restore = loosenGCIfSmall(smallIndexBytes + 1)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("during a large index GOGC is %d, want 100 kept", got)
	}
	restore()
	debug.SetGCPercent(50) // the caller's own
	restore = loosenGCIfSmall(1 << 10)
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("a caller's GOGC 50 became %d during a small index", got)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 50 {
		t.Errorf("a caller's GOGC 50 became %d after a small index", got)
	}
}

// A dropped builder is garbage at the next collection. Its scratch pools
// (class walks, decoded references, flow memo tables) are registered with
// the runtime until two collections after their last use; when they were
// fields of the builder, that registration kept the builder and every
// file's tables alive past Project.releaseBuildStateLocked's collection,
// under the snapshot's encoding. Also checks that the build used a pool,
// so the test still exercises what it guards.
func TestDroppedBuilderCollectedAtOnce(t *testing.T) {
	root := writeTree(t, persistFixture())
	p := openT(t, root, Options{NoCache: true})
	p.mu.Lock()
	b := p.b
	p.b = nil
	p.mu.Unlock()
	if b == nil || b.buildPools == nil {
		t.Fatal("no builder after the index")
	}
	if b.walks.Get() == nil && b.refBufs.Get() == nil && b.flowMemos.Get() == nil {
		t.Fatal("the build put nothing in the builder's pools: the fixture no longer exercises them")
	}
	// Use each pool once more, as a build's last steps do.
	b.putRefs(b.decodeRefs(refList{}))
	b.putWalk(b.getWalk("x"))
	wb := weak.Make(b)
	b = nil
	runtime.GC()
	if wb.Value() != nil {
		t.Fatal("the builder outlived the collection after it was dropped")
	}
	runtime.KeepAlive(p)
}

// tightenResolveGC lowers the target during resolution only inside a
// tightened build (GOGC at buildGCPercent) and restores it; any other
// setting (a small project's, an update's, a caller's) is left alone.
func TestTightenResolveGC(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	debug.SetGCPercent(buildGCPercent)
	restore := tightenResolveGC()
	if got := debug.SetGCPercent(resolveGCPercent); got != resolveGCPercent {
		t.Errorf("during resolution GOGC is %d, want %d", got, resolveGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != buildGCPercent {
		t.Errorf("after resolution GOGC is %d, want %d again", got, buildGCPercent)
	}
	for _, pct := range []int{100, 50, 10, -1} {
		debug.SetGCPercent(pct)
		restore := tightenResolveGC()
		if got := debug.SetGCPercent(pct); got != pct {
			t.Errorf("GOGC %d became %d during resolution", pct, got)
		}
		restore()
		if got := debug.SetGCPercent(100); got != pct {
			t.Errorf("GOGC %d became %d after resolution", pct, got)
		}
	}
}
