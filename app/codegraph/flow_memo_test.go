package codegraph

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// diamondBuilder is a builder with A's method m overridden in B and D
// (D derives from B and C, both from A) and a method n only C defines.
func diamondBuilder() *builder {
	b := newBuilder("", nil)
	setTestNodes(b, map[string]*Node{
		"A.m": {ID: "A.m", Kind: KindMethod, Name: "m"},
		"B.m": {ID: "B.m", Kind: KindMethod, Name: "m"},
		"D.m": {ID: "D.m", Kind: KindMethod, Name: "m"},
		"C.n": {ID: "C.n", Kind: KindMethod, Name: "n"},
	})
	b.bases = map[string][]string{"B": {"A"}, "C": {"A"}, "D": {"B", "C"}}
	b.subs = invertBases(b.bases)
	b.members = map[string]map[string]string{
		"A": {"m": "A.m"}, "B": {"m": "B.m"}, "C": {"n": "C.n"}, "D": {"m": "D.m"},
	}
	b.pyNames = map[string]uint8{"m": pyMethod, "n": pyMethod}
	return b
}

// TestHierMemo checks that the hierarchy walks give the same answers with
// the resolution pass's memo as without, from parallel resolvers, and that
// the memo is what answers while it is set: a table changed under it (as
// the next build's tables would be) is not seen until it is dropped.
func TestHierMemo(t *testing.T) {
	b := diamondBuilder()
	wantDispatch := []string{"B.m", "D.m"}
	wantSubs := []string{"C.n"}
	if got := b.dispatchTargets("A", "A.m"); !slices.Equal(got, wantDispatch) {
		t.Fatalf("without memo: dispatchTargets(A, A.m) = %v, want %v", got, wantDispatch)
	}
	if got := b.pySubclassMethods("A", "n"); !slices.Equal(got, wantSubs) {
		t.Fatalf("without memo: pySubclassMethods(A, n) = %v, want %v", got, wantSubs)
	}

	b.hier = newHierMemo()
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := b.dispatchTargets("A", "A.m"); !slices.Equal(got, wantDispatch) {
				errs <- fmt.Sprint("dispatchTargets(A, A.m) = ", got)
			}
			if got := b.pySubclassMethods("A", "n"); !slices.Equal(got, wantSubs) {
				errs <- fmt.Sprint("pySubclassMethods(A, n) = ", got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("with memo, in parallel: %s", e)
	}
	if len(b.hier.m) != 2 {
		t.Fatalf("memo holds %d answers, want 2 (one per question)", len(b.hier.m))
	}

	// D no longer overrides m: the memo still answers while it is set…
	delete(b.members["D"], "m")
	if got := b.dispatchTargets("A", "A.m"); !slices.Equal(got, wantDispatch) {
		t.Fatalf("memo set: dispatchTargets(A, A.m) = %v, want the memoised %v", got, wantDispatch)
	}
	// …and the tables do once it is dropped (as build does after resolving).
	b.hier = nil
	if got := b.dispatchTargets("A", "A.m"); !slices.Equal(got, []string{"B.m"}) {
		t.Fatalf("memo dropped: dispatchTargets(A, A.m) = %v, want [B.m]", got)
	}
}
