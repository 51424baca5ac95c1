package ui

import (
	"reflect"
	"strings"
	"testing"

	"codeloom/app/codegraph"
	"codeloom/graphview"
)

// The references panel is filled from a background goroutine; the list it
// ends with is the one of the last selection, even when an earlier
// selection's result is delivered after it.
func TestReferencesPanelShowsTheLastSelection(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	first := nodeIDByName(t, w, "bulk_discount")
	firstRefs := graphview.References(w.index, first)
	var second string
	var want []graphview.Reference
	for _, n := range w.snap.Nodes() {
		if n.ID == first || n.Kind != codegraph.KindFunction {
			continue
		}
		if refs := graphview.References(w.index, n.ID); len(refs) > 0 && !reflect.DeepEqual(refs, firstRefs) {
			second, want = n.ID, refs
			break
		}
	}
	if len(firstRefs) == 0 || second == "" {
		t.Fatal("the sample needs two functions with different references")
	}
	refsNow := func() (refs []graphview.Reference, title string) {
		runOnUI(w, func() { refs, title = w.References(), w.refs.title.Text })
		return
	}

	runOnUI(w, func() { w.SelectNode(first) })
	waitFor(t, "the references of bulk_discount", func() bool {
		refs, _ := refsNow()
		return reflect.DeepEqual(refs, firstRefs)
	})
	if _, title := refsNow(); !strings.Contains(title, "callers") {
		t.Errorf("title after the references arrived: %q", title)
	}

	// The first selection's answer is held back until the second one's is
	// shown: it must then be dropped.
	release := make(chan struct{})
	ran := make(chan struct{}, 64) // one per UI callback run from here on
	uiDo := w.uiDo
	w.uiDo = func(f func()) {
		uiDo(func() {
			f()
			select {
			case ran <- struct{}{}:
			default: // the waits below drain it first
			}
		})
	}
	runOnUI(w, func() {
		w.refs.find = func(ix *graphview.Index, id string) []graphview.Reference {
			if id == first {
				<-release
			}
			return graphview.References(ix, id)
		}
		w.SelectNode(first)
		w.SelectNode(second)
	})
	waitFor(t, "the references of the second selection", func() bool {
		refs, _ := refsNow()
		return reflect.DeepEqual(refs, want)
	})
	for len(ran) > 0 {
		<-ran
	}
	close(release)
	// The held-back result's callback (nothing else is running now).
	waitFor(t, "the held-back result's callback", func() bool { return len(ran) > 0 })
	if refs, _ := refsNow(); !reflect.DeepEqual(refs, want) {
		t.Errorf("references replaced by an earlier selection's: %d entries, want %d", len(refs), len(want))
	}
}
