package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"codeloom/app/memory"
)

// blockingOpener opens folders named "slow*" only when ctx ends (then it
// fails with ctx's error) and folders named "broken*" never; others with
// the code graph engine.
func blockingOpener(started chan<- string) Opener {
	return func(ctx context.Context, root string, store *memory.Store, progress func(int, int)) (Project, error) {
		switch base := filepath.Base(root); {
		case strings.HasPrefix(base, "slow"):
			progress(3, 10)
			started <- root
			<-ctx.Done()
			return nil, ctx.Err()
		case strings.HasPrefix(base, "broken"):
			return nil, errors.New("permission denied (simulated)")
		}
		return CodegraphOpener(ctx, root, store, progress)
	}
}

// Opening another folder and cancelling it (or its failing) keeps the
// project open before usable: title, graph, tree, and a click shows code.
func TestCancelledOpenKeepsPreviousProject(t *testing.T) {
	started := make(chan string, 1)
	w, project := newTestWorkbench(t, Options{Opener: blockingOpener(started)})
	openSample(t, w, project)
	before := w.graph.View()

	slow := filepath.Join(t.TempDir(), "slow-project")
	if err := os.MkdirAll(slow, 0o755); err != nil {
		t.Fatal(err)
	}
	w.OpenProject(slow)
	<-started
	waitFor(t, "progress over the graph", func() bool {
		return strings.Contains(w.graph.Status(), "Indexing 3/10 files")
	})
	if got := w.win.Title(); got != "CodeLoom — sample" {
		t.Errorf("title while indexing another folder: %q", got)
	}
	// The old project answers clicks while the new one indexes.
	file := viewNodeByLabel(t, w, "pricing.py")
	tapNode(t, w, file.ID)
	if w.code.Path() != "inventory/pricing.py" {
		t.Fatalf("while indexing: code pane shows %q", w.code.Path())
	}

	test.Tap(w.cancelBtn)
	waitFor(t, "cancellation", func() bool { return !w.indexing && strings.Contains(w.status.Text, "cancelled") })
	if !strings.Contains(w.status.Text, "still showing sample") {
		t.Errorf("status %q does not say the sample is still shown", w.status.Text)
	}
	checkStillSample(t, w, project, before)

	// A folder that fails to index: an error, and the sample stays.
	broken := filepath.Join(t.TempDir(), "broken-project")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	// On the UI goroutine, as a menu would: the failure (queued there by the
	// indexing goroutine, at once here) must not run between OpenProject's
	// check and its "Indexing…" status (it did, from the test goroutine, on
	// a loaded CI machine: the status was left over).
	runOnUI(w, func() { w.OpenProject(broken) })
	waitFor(t, "the failure", func() bool { return !w.indexing && w.lastErr != "" })
	if !strings.Contains(w.lastErr, "permission denied") {
		t.Errorf("error %q", w.lastErr)
	}
	checkStillSample(t, w, project, before)
}

func checkStillSample(t *testing.T, w *Workbench, project string, before interface{ Key() string }) {
	t.Helper()
	if got := w.win.Title(); got != "CodeLoom — sample" {
		t.Errorf("title %q, want the sample's", got)
	}
	if w.project == nil || w.project.Root() != project {
		t.Fatalf("project %v, want the sample still open", w.project)
	}
	if w.progBox.Visible() {
		t.Error("progress still shown")
	}
	if w.graph.Status() != "" {
		t.Errorf("graph status %q left over", w.graph.Status())
	}
	v := w.graph.View()
	if v == nil || v.Key() != before.Key() || w.graph.CurrentLayout() == nil {
		t.Fatal("the sample's graph is no longer drawn")
	}
	if len(w.treeModel.children[""]) == 0 {
		t.Error("tree emptied")
	}
	fn := viewNodeByLabel(t, w, "storage.py")
	tapNode(t, w, fn.ID)
	want, err := os.ReadFile(filepath.Join(project, "inventory", "storage.py"))
	if err != nil {
		t.Fatal(err)
	}
	if w.code.Path() != "inventory/storage.py" || w.code.Text() != string(want) {
		t.Errorf("click shows %q (%d bytes), want storage.py's code", w.code.Path(), len(w.code.Text()))
	}
}
