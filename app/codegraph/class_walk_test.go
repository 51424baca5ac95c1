package codegraph

import (
	"fmt"
	"testing"
)

// TestClassWalkVisit checks the visited set on both sides of the switch
// from linear search to a map, and that scratch from the pool starts empty.
func TestClassWalkVisit(t *testing.T) {
	b := newBuilder("", nil)
	for round := 0; round < 3; round++ {
		w := b.getWalk("c0")
		if w.visit("c0") {
			t.Fatalf("round %d: the start class is visited again", round)
		}
		n := 3 * classWalkLinear
		for i := 1; i < n; i++ {
			if !w.visit(fmt.Sprintf("c%d", i)) {
				t.Fatalf("round %d: c%d reported as seen on first visit", round, i)
			}
		}
		for i := 0; i < n; i++ {
			if w.visit(fmt.Sprintf("c%d", i)) {
				t.Fatalf("round %d: c%d visited twice (queue %d)", round, i, len(w.queue))
			}
		}
		if len(w.queue) != n {
			t.Fatalf("round %d: queue holds %d classes, want %d", round, len(w.queue), n)
		}
		for i, c := range w.queue {
			if c != fmt.Sprintf("c%d", i) {
				t.Fatalf("round %d: queue[%d] = %q, want first-seen order", round, i, c)
			}
		}
		b.putWalk(w)
	}
}

// TestDispatchTargetsDiamond checks that a subclass reached along two paths
// gives its override once, in breadth-first order, without the target.
func TestDispatchTargetsDiamond(t *testing.T) {
	b := newBuilder("", nil)
	setTestNodes(b, map[string]*Node{"A.m": {ID: "A.m", Kind: KindMethod, Name: "m"}})
	b.bases = map[string][]string{"B": {"A"}, "C": {"A"}, "D": {"B", "C"}, "E": {"D"}}
	b.subs = invertBases(b.bases)
	b.members = map[string]map[string]string{
		"A": {"m": "A.m"}, "B": {"m": "B.m"}, "D": {"m": "D.m"}, "E": {"x": "E.x"},
	}
	got := b.dispatchTargets("A", "A.m")
	if len(got) != 2 || got[0] != "B.m" || got[1] != "D.m" {
		t.Fatalf("dispatchTargets(A, A.m) = %v, want [B.m D.m]", got)
	}
	if got := b.dispatchTargets("E", "A.m"); got != nil {
		t.Fatalf("a class without subclasses dispatches to %v", got)
	}
	if id, ok := b.member("E", "m", false); !ok || id != "D.m" {
		t.Fatalf("member(E, m) = %q %v, want D.m", id, ok)
	}
}
