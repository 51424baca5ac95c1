package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/graphview"
	"codeloom/models"
)

var (
	engineOnce sync.Once
	engine     *graphview.GraphvizEngine
	engineErr  error
)

// sharedLayouter starts Graphviz once for all tests of the package.
func sharedLayouter(t *testing.T) *graphview.Layouter {
	t.Helper()
	engineOnce.Do(func() { engine, engineErr = graphview.NewGraphvizEngine(context.Background()) })
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	return graphview.NewLayouter(engine)
}

// newTestWorkbench opens a copy of the sample project in a headless window.
func newTestWorkbench(t *testing.T, opts Options) (*Workbench, string) {
	t.Helper()
	a := test.NewTempApp(t)
	project := filepath.Join(t.TempDir(), "sample")
	copyTree(t, filepath.Join("..", "assets", "sample"), project)
	if opts.Layouter == nil {
		opts.Layouter = sharedLayouter(t)
	}
	if opts.UIDo == nil {
		opts.UIDo = newTestUI(t).do
	}
	w, err := NewWorkbench(a, opts)
	if err != nil {
		t.Fatal(err)
	}
	w.graph.Synchronous = true
	w.win.Resize(fyne.NewSize(1300, 850))
	w.win.Show()
	t.Cleanup(func() { w.closeProject() })
	return w, project
}

// testUI makes the test's goroutine the workbench's UI goroutine, as the
// app's main goroutine is: what background work hands to the UI waits in a
// queue and runs on the test's goroutine when the test waits (runOnUI,
// waitFor), never beside what the test itself does to the widgets. (Fyne's
// test driver would run each on the goroutine that asked.)
type testUI struct {
	mu    sync.Mutex
	queue []func()
}

// testUIs are the queues of the workbenches the running test made: tests
// in this package do not run in parallel.
var testUIs struct {
	sync.Mutex
	all []*testUI
}

func newTestUI(t *testing.T) *testUI {
	u := &testUI{}
	testUIs.Lock()
	testUIs.all = append(testUIs.all, u)
	testUIs.Unlock()
	t.Cleanup(func() {
		testUIs.Lock()
		defer testUIs.Unlock()
		testUIs.all = slices.DeleteFunc(testUIs.all, func(v *testUI) bool { return v == u })
	})
	return u
}

// do queues f (Options.UIDo).
func (u *testUI) do(f func()) {
	u.mu.Lock()
	u.queue = append(u.queue, f)
	u.mu.Unlock()
}

// runQueued runs what every test workbench queued, in order, until the
// queues are empty.
func runQueued() {
	for {
		testUIs.Lock()
		all := slices.Clone(testUIs.all)
		testUIs.Unlock()
		ran := false
		for _, u := range all {
			u.mu.Lock()
			fs := u.queue
			u.queue = nil
			u.mu.Unlock()
			for _, f := range fs {
				f()
				ran = true
			}
		}
		if !ran {
			return
		}
	}
}

// runOnUI runs f on the UI goroutine, after what was queued there before:
// in tests that is the test's own goroutine.
func runOnUI(_ *Workbench, f func()) {
	runQueued()
	f()
}

// waitFor runs what is queued for the UI until ok holds (30 s at most).
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		runQueued()
		if ok() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func openSample(t *testing.T, w *Workbench, project string) {
	t.Helper()
	n := w.opened
	w.OpenProject(project)
	waitFor(t, "the project and its graph", func() bool {
		return w.opened > n && w.graph.CurrentLayout() != nil
	})
}

func viewNodeByLabel(t *testing.T, w *Workbench, label string) graphview.ViewNode {
	t.Helper()
	for _, n := range w.graph.View().Nodes {
		if n.Label == label {
			return n
		}
	}
	t.Fatalf("no node %q in view %q", label, w.graph.View().Title)
	return graphview.ViewNode{}
}

func tapNode(t *testing.T, w *Workbench, id string) {
	t.Helper()
	pos, ok := w.graph.NodeCenter(id)
	if !ok {
		t.Fatalf("node %s not drawn", id)
	}
	runOnUI(w, func() { test.TapAt(w.graph, pos) })
}

func TestOpenShowsOverviewTitleAndTree(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	if got := w.win.Title(); got != "CodeLoom — sample" {
		t.Errorf("title %q", got)
	}
	if v := w.graph.View(); v.Title != "Overview" || len(v.Nodes) < 5 {
		t.Errorf("view %q with %d nodes", v.Title, len(v.Nodes))
	}
	if kids := w.treeModel.children[""]; len(kids) == 0 || !strings.HasPrefix(kids[0], "dir:") {
		t.Errorf("tree root children %v, want folders first", kids)
	}
	if r := w.RecentProjects(); len(r) == 0 || r[0] != project {
		t.Errorf("recent projects %v, want %s first", r, project)
	}
}

func TestTapNodeSelectsAndFillsCodePane(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	file := viewNodeByLabel(t, w, "pricing.py")
	tapNode(t, w, file.ID)
	if w.graph.Selected() != file.ID {
		t.Fatalf("selected %q, want %q", w.graph.Selected(), file.ID)
	}
	want, _ := os.ReadFile(filepath.Join(project, "inventory", "pricing.py"))
	if w.code.Path() != "inventory/pricing.py" || w.code.Text() != string(want) {
		t.Fatalf("code pane shows %q (%d bytes), want pricing.py", w.code.Path(), len(w.code.Text()))
	}
	// Double tap expands the file; tapping a function marks its code.
	center := mustCenter(t, w, file.ID)
	runOnUI(w, func() { w.graph.DoubleTapped(&fyne.PointEvent{Position: center}) })
	waitFor(t, "the expanded file", func() bool {
		_, ok := w.graph.View().Node(idOfLabel(w, "bulk_discount()"))
		return ok && w.graph.CurrentLayout() != nil && len(w.graph.CurrentLayout().Nodes) == len(w.graph.View().Nodes)
	})
	fn := viewNodeByLabel(t, w, "bulk_discount()")
	tapNode(t, w, fn.ID)
	if !strings.HasPrefix(w.code.MarkedText(), "def bulk_discount(") {
		t.Errorf("marked code %q", w.code.MarkedText())
	}
	if !w.tree.IsBranchOpen(file.ID) {
		t.Errorf("tree did not open the selected function's file")
	}
	// Hover shows a tooltip with kind, name, signature and place.
	w.graph.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: mustCenter(t, w, fn.ID)}})
	if tip := w.graph.Tooltip(); !strings.Contains(tip, "bulk_discount") || !strings.Contains(tip, "inventory/pricing.py:") {
		t.Errorf("tooltip %q", tip)
	}
	// Tapping empty space changes nothing.
	runOnUI(w, func() { test.TapAt(w.graph, fyne.NewPos(2, 2)) })
	if w.graph.Selected() != fn.ID {
		t.Error("tap on empty space changed the selection")
	}
}

func idOfLabel(w *Workbench, label string) string {
	for _, n := range w.graph.View().Nodes {
		if n.Label == label {
			return n.ID
		}
	}
	return ""
}

func mustCenter(t *testing.T, w *Workbench, id string) fyne.Position {
	t.Helper()
	p, ok := w.graph.NodeCenter(id)
	if !ok {
		t.Fatalf("node %s not drawn", id)
	}
	return p
}

func TestFiltersHideNodesAndEdges(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	hasKind := func(k codegraph.Kind) bool {
		for _, n := range w.graph.View().Nodes {
			if n.Kind == k {
				return true
			}
		}
		return false
	}
	if !hasKind(codegraph.KindPackage) {
		t.Fatal("sample overview has no package node to filter")
	}
	w.SetNodeKindVisible(codegraph.KindPackage, false)
	waitFor(t, "the filtered view", func() bool { return w.graph.CurrentLayout() != nil && !hasKind(codegraph.KindPackage) })
	w.SetEdgeKindVisible(codegraph.EdgeImports, false)
	waitFor(t, "edges filtered", func() bool {
		for _, e := range w.graph.View().Edges {
			if e.Kind == codegraph.EdgeImports {
				return false
			}
		}
		return w.graph.CurrentLayout() != nil
	})
	w.SetNodeKindVisible(codegraph.KindPackage, true)
	waitFor(t, "packages back", func() bool { return hasKind(codegraph.KindPackage) })
}

func TestSearchFocusesNode(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	// Typed on the UI goroutine: the references of the node selected before
	// are listed there meanwhile, and two goroutines updating one label at
	// once made Fyne's text renderer panic (a CI run).
	search := func(q string) {
		runOnUI(w, func() {
			w.search.SetText(q)
			w.search.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
		})
	}
	runOnUI(w, func() {
		test.Type(w.search, "bulk_discount")
		w.search.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	})
	waitFor(t, "the focus view", func() bool {
		v := w.graph.View()
		// A function gets the symbol view (callers, callees) since issue 12.
		return v != nil && strings.HasPrefix(v.Title, "Symbol:") && w.graph.CurrentLayout() != nil
	})
	id := w.graph.Selected()
	n, ok := w.snap.Node(id)
	if !ok || n.Name != "bulk_discount" {
		t.Fatalf("search selected %q (%v)", id, n)
	}
	if !strings.HasPrefix(w.code.MarkedText(), "def bulk_discount(") {
		t.Errorf("code pane after search: %q", w.code.MarkedText())
	}
	if _, shown := w.graph.View().Node(id); !shown {
		t.Error("focused node not in the view")
	}
	// A function far down its file: the code pane scrolls to it.
	search("line_total")
	if !strings.HasPrefix(w.code.MarkedText(), "def line_total(") {
		t.Fatalf("code pane after second search: %q", w.code.MarkedText())
	}
	if w.code.scroll.Offset.Y <= 0 {
		t.Errorf("code pane not scrolled to line %d", w.code.markStart)
	}
	id = w.graph.Selected()
	// No match: a message, nothing changes.
	search("zzzqqqxxx")
	var status string
	runOnUI(w, func() { status = w.status.Text })
	if !strings.Contains(status, "No node matches") || w.graph.Selected() != id {
		t.Errorf("no-match search: status %q selected %q", status, w.graph.Selected())
	}
}

func TestSaveWritesFileReindexesAndReverts(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	bulk := nodeIDByName(t, w, "bulk_discount")
	runOnUI(w, func() { w.SelectNode(bulk) })
	path := filepath.Join(project, "inventory", "pricing.py")
	orig, _ := os.ReadFile(path)
	before := len(w.snap.Nodes())
	edited := string(orig) + "\n\ndef added_in_test(q):\n    return bulk_discount(q) + 1\n"
	var dirty bool
	runOnUI(w, func() { w.code.SetEditorText(edited); dirty = w.code.Dirty() })
	if !dirty {
		t.Fatal("editor not dirty after an edit")
	}
	runOnUI(w, func() {
		w.code.editor.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyS, Modifier: fyne.KeyModifierControl})
	})
	waitFor(t, "save and re-index", func() bool {
		return w.snap != nil && len(w.snap.Nodes()) == before+1 && !w.code.Dirty() && len(w.panes.Versions()) == 1
	})
	disk, _ := os.ReadFile(path)
	if string(disk) != edited {
		t.Fatalf("file on disk is not the edited text")
	}
	if ids := w.snap.Search("added_in_test", 1); len(ids) == 0 {
		t.Error("new function not in the graph after save")
	}
	vs := w.panes.Versions()
	if len(vs) != 1 || string(vs[0].Content) != string(orig) || vs[0].Path != "inventory/pricing.py" {
		t.Fatalf("versions after save: %d (want the previous content kept)", len(vs))
	}
	leftovers, _ := filepath.Glob(filepath.Join(project, "inventory", ".pricing.py.codeloom-*"))
	if len(leftovers) > 0 {
		t.Errorf("temp files left: %v", leftovers)
	}
	// Revert brings the old content back and keeps the edited one as a version.
	w.Revert(vs[0])
	waitFor(t, "revert", func() bool {
		b, _ := os.ReadFile(path)
		return string(b) == string(orig) && len(w.snap.Nodes()) == before && len(w.panes.Versions()) == 2
	})
}

func nodeIDByName(t *testing.T, w *Workbench, name string) string {
	t.Helper()
	for _, n := range w.snap.Nodes() {
		if n.Name == name {
			return n.ID
		}
	}
	t.Fatalf("no node named %s", name)
	return ""
}

func TestSelectingAnotherFileWithUnsavedEditsAsks(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	bulk := nodeIDByName(t, w, "bulk_discount")
	// The pane's highlighting lands on the UI goroutine: every widget
	// change and read goes there too, or the two race.
	runOnUI(w, func() {
		w.SelectNode(bulk)
		w.code.SetEditorText("changed")
	})
	other := ""
	for _, n := range w.snap.Nodes() {
		if n.Kind == codegraph.KindFile && n.Path == "inventory/models.py" {
			other = n.ID
		}
	}
	var path, text string
	var dialogs, afterClose int
	runOnUI(w, func() {
		w.SelectNode(other)
		path, text = w.code.Path(), w.code.Text()
		dialogs = len(w.win.Canvas().Overlays().List())
		// Closing the window with unsaved edits asks too, and keeps the window.
		w.requestClose()
		afterClose = len(w.win.Canvas().Overlays().List())
	})
	if path != "inventory/pricing.py" || text != "changed" {
		t.Fatalf("unsaved edits dropped: pane shows %s", path)
	}
	if dialogs == 0 {
		t.Fatal("no confirmation dialog")
	}
	if afterClose < 2 {
		t.Error("closing with unsaved changes did not ask")
	}
}

func TestOpenMissingFolderShowsError(t *testing.T) {
	w, _ := newTestWorkbench(t, Options{})
	w.OpenProject(filepath.Join(t.TempDir(), "does-not-exist"))
	if w.lastErr == "" || !strings.Contains(w.lastErr, "does-not-exist") {
		t.Errorf("error message %q", w.lastErr)
	}
	if len(w.win.Canvas().Overlays().List()) == 0 {
		t.Error("no error dialog")
	}
	if w.project != nil {
		t.Error("a project is open")
	}
}

func TestIndexingCanBeCancelled(t *testing.T) {
	started := make(chan struct{})
	blocking := func(ctx context.Context, root string, _ *memory.Store, progress func(int, int)) (Project, error) {
		progress(1, 10)
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	w, project := newTestWorkbench(t, Options{Opener: blocking, OpenStore: func(string) (*memory.Store, error) { return nil, nil }})
	w.OpenProject(project)
	<-started
	if !w.progBox.Visible() {
		t.Error("no progress bar while indexing")
	}
	test.Tap(w.cancelBtn)
	waitFor(t, "cancellation", func() bool { return !w.indexing && strings.Contains(w.status.Text, "cancelled") })
	if w.progBox.Visible() || w.project != nil {
		t.Error("progress still shown or a project opened after cancel")
	}
}

func TestApproverFallsBackToWindowDialog(t *testing.T) {
	w, _ := newTestWorkbench(t, Options{})
	a := w.newApprover()
	a.native = true
	a.nativeYesNo = func(string, string) (bool, error) { return false, errors.New("no display") }
	res := make(chan bool, 1)
	go func() {
		ok, err := a.Approve(context.Background(), Question{Title: "Run this?", Detail: "python -m pytest (timeout 60 s)"})
		if err != nil {
			t.Error(err)
		}
		res <- ok
	}()
	var yes *widget.Button
	waitFor(t, "the confirm dialog", func() bool {
		yes = findButton(w.win.Canvas().Overlays().Top(), "Yes")
		return yes != nil
	})
	test.Tap(yes)
	if ok := <-res; !ok {
		t.Error("Yes answered false")
	}
	// The native answer is used when it works.
	a.nativeYesNo = func(string, string) (bool, error) { return true, nil }
	if ok, err := a.Approve(context.Background(), Question{Title: "Apply patch?"}); !ok || err != nil {
		t.Errorf("native yes: %v %v", ok, err)
	}
	// Cancellation ends the question and closes its dialog.
	a.native = false
	ctx, cancel := context.WithCancel(context.Background())
	type answer struct {
		ok  bool
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		ok, err := a.Approve(ctx, Question{Title: "Never answered"})
		answered <- answer{ok, err}
	}()
	waitFor(t, "the second dialog", func() bool { return findLabel(w.win.Canvas().Overlays().Top(), "Never answered") })
	cancel()
	var got answer
	waitFor(t, "the cancelled approval", func() bool {
		select {
		case got = <-answered:
			return true
		default:
			return false
		}
	})
	if got.ok || !errors.Is(got.err, context.Canceled) {
		t.Errorf("cancelled approval: %v %v", got.ok, got.err)
	}
	waitFor(t, "the dialog closed", func() bool { return w.win.Canvas().Overlays().Top() == nil })
}

func findButton(o fyne.CanvasObject, text string) *widget.Button {
	if o == nil {
		return nil
	}
	if b, ok := o.(*widget.Button); ok && b.Text == text {
		return b
	}
	var kids []fyne.CanvasObject
	switch x := o.(type) {
	case *fyne.Container:
		kids = x.Objects
	case fyne.Widget:
		kids = test.WidgetRenderer(x).Objects()
	}
	for _, k := range kids {
		if b := findButton(k, text); b != nil {
			return b
		}
	}
	return nil
}

func TestAutomationStateFile(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	w, project := newTestWorkbench(t, Options{Automation: state})
	openSample(t, w, project)
	bulk := nodeIDByName(t, w, "bulk_discount")
	runOnUI(w, func() { w.SelectNode(bulk) })
	var b []byte
	waitFor(t, "the state file after the selection", func() bool { // written off the UI goroutine
		b, _ = os.ReadFile(state)
		return strings.Contains(string(b), `"code_path": "inventory/pricing.py"`)
	})
	for _, want := range []string{`"title": "CodeLoom — sample"`, `"code_path": "inventory/pricing.py"`, `def bulk_discount(`, `"nodes": [`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("state file lacks %s", want)
		}
	}
}

func TestRunTestsAsksThenRecordsRunWithSamples(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	test.Tap(w.panes.runTests)
	var yes *widget.Button
	waitFor(t, "the approval dialog", func() bool {
		yes = findButton(w.win.Canvas().Overlays().Top(), "Yes")
		return yes != nil
	})
	test.Tap(yes)
	waitFor(t, "the recorded test run", func() bool {
		return len(w.panes.runs) > 0 && !w.panes.runTests.Disabled() && strings.Contains(w.panes.runDetail.Text, "passed")
	})
	r := w.panes.runs[0]
	if r.Origin == "" || len(r.Command) == 0 {
		t.Errorf("run record %+v", r)
	}
	if !strings.Contains(w.panes.runDetail.Text, "passed") {
		t.Errorf("run detail %q", w.panes.runDetail.Text)
	}
	// The sample project has a bug its tests catch.
	if r.ExitCode == 0 {
		t.Errorf("sample tests passed; expected the known failing test")
	}
	// The graph is coloured by the run: the failing test and its file red,
	// a passing test green.
	if m := w.graph.MarkOf(nodeIDByName(t, w, "test_one_hundred_units_earn_ten_percent")); m != graphview.MarkFail {
		t.Errorf("failing test mark %v", m)
	}
	if m := w.graph.MarkOf(nodeIDByName(t, w, "test_small_orders_pay_full_price")); m != graphview.MarkPass {
		t.Errorf("passing test mark %v", m)
	}
	for _, n := range w.snap.Nodes() {
		if n.Kind == codegraph.KindFile && n.Path == "tests/test_pricing.py" && w.graph.MarkOf(n.ID) != graphview.MarkFail {
			t.Errorf("file with a failing test not marked failed")
		}
	}
}

func TestFollowsChangesOnDisk(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	before := len(w.snap.Nodes())
	path := filepath.Join(project, "inventory", "pricing.py")
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(b, []byte("\n\ndef written_elsewhere():\n    return 1\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watcher to update the graph", func() bool {
		return len(w.snap.Nodes()) == before+1 && strings.Contains(w.status.Text, "changed on disk")
	})
}

// The notice that files changed on disk stays in the status bar when the
// selected node's file is long enough to be highlighted off the UI
// goroutine: the code arriving later replaced it with the node's line.
func TestChangeOnDiskNoticeOutlivesLongFile(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	bulk := nodeIDByName(t, w, "bulk_discount")
	runOnUI(w, func() { w.SelectNode(bulk) })
	path := filepath.Join(project, "inventory", "pricing.py")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	long := append(b, "\n\n"...)
	for len(long) <= 2*syncCodeBytes {
		long = append(long, "# padding to make the file long enough to highlight in the background\n"...)
	}
	long = append(long, "\ndef grown_elsewhere():\n    return 1\n"...)
	if err := os.WriteFile(path, long, 0o644); err != nil {
		t.Fatal(err)
	}
	var text, status string
	waitFor(t, "the long file's code after the change on disk", func() bool {
		runOnUI(w, func() { text, status = w.code.Text(), w.status.Text })
		return strings.Contains(text, "grown_elsewhere")
	})
	if !strings.Contains(status, "changed on disk") {
		t.Errorf("status after the long file's code arrived: %q; want the change-on-disk notice", status)
	}
}

// A caller added on disk shows in the References panel of the selected
// node without selecting it again; a selected node removed on disk leaves
// the panel empty instead of listing the old graph's references.
func TestReferencesFollowChangesOnDisk(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	bulk := nodeIDByName(t, w, "bulk_discount")
	runOnUI(w, func() { w.SelectNode(bulk) })
	hasCaller := func(name string) bool {
		for _, r := range w.References() {
			if r.Relation == "caller" && strings.Contains(r.Name, name) {
				return true
			}
		}
		return false
	}
	waitFor(t, "bulk_discount's references", func() bool { return len(w.References()) > 0 })
	if hasCaller("added_on_disk") {
		t.Fatal("a caller listed before it was written")
	}
	path := filepath.Join(project, "inventory", "pricing.py")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, []byte("\n\ndef added_on_disk():\n    return bulk_discount(3)\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new caller in the References panel", func() bool { return hasCaller("added_on_disk") })

	// The selected node itself removed on disk: no stale references.
	if err := os.WriteFile(path, []byte("def other():\n    return 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the References panel emptied", func() bool { return len(w.References()) == 0 })
}

// readScript splits a --script file of canned model answers.
func readScript(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, part := range strings.Split(string(b), "----- answer -----\n") {
		if strings.TrimSpace(part) != "" {
			out = append(out, strings.TrimSuffix(part, "\n"))
		}
	}
	return out
}

// TestTaskFixesSampleBugWithDialogs runs the whole pipeline from the Prompt
// tab with a scripted model: every approval is a dialog answered "Yes"
// (except "Add another feature?"), the bug gets fixed and the graph, history
// and lessons update.
func TestTaskFixesSampleBugWithDialogs(t *testing.T) {
	eng := models.NewScripted(readScript(t, filepath.Join("..", "app", "pipeline", "testdata", "sample-fix.script"))...)
	w, project := newTestWorkbench(t, Options{Engine: eng})
	openSample(t, w, project)
	bulk := nodeIDByName(t, w, "bulk_discount")
	runOnUI(w, func() { w.SelectNode(bulk) })
	w.panes.prompt.SetText("bulk_discount should give 10 % from 100 units")
	test.Tap(w.panes.taskBtn)
	questions := 0
	waitForLong := time.Now().Add(150 * time.Second)
	for time.Now().Before(waitForLong) && w.panes.taskBtn.Disabled() {
		runQueued()
		top := w.win.Canvas().Overlays().Top()
		if yes := findButton(top, "Yes"); yes != nil {
			questions++
			if findLabel(top, "Add another feature") {
				test.Tap(findButton(top, "No"))
			} else {
				test.Tap(yes)
			}
		}
		time.Sleep(30 * time.Millisecond)
	}
	if w.panes.taskBtn.Disabled() {
		t.Fatalf("task still running; log:\n%s", w.panes.answer.Text)
	}
	log := w.panes.answer.Text
	if !strings.Contains(log, "[task done: the gates pass]") {
		t.Fatalf("task did not pass its gates (%d questions answered); log:\n%s", questions, tail(log, 3000))
	}
	if questions < 2 {
		t.Errorf("only %d approval dialogs", questions)
	}
	b, _ := os.ReadFile(filepath.Join(project, "inventory", "pricing.py"))
	if !strings.Contains(string(b), "if quantity >= 100:") {
		t.Errorf("fix not applied:\n%s", b)
	}
	if !strings.Contains(w.code.Text(), "if quantity >= 100:") {
		t.Errorf("code pane not refreshed after the task")
	}
	if len(w.panes.lessons) == 0 {
		t.Error("no lesson card shown after a debugged fix")
	}

	// History → "Undo last change" asks, then puts back what the last
	// landed patch (the debugger's fix of "> 101") replaced.
	test.Tap(w.panes.undoBtn)
	var undo *widget.Button
	waitFor(t, "the undo question", func() bool {
		undo = findButton(w.win.Canvas().Overlays().Top(), "Undo")
		return undo != nil
	})
	test.Tap(undo)
	waitFor(t, "the undone file", func() bool {
		b, _ := os.ReadFile(filepath.Join(project, "inventory", "pricing.py"))
		return strings.Contains(string(b), "if quantity > 101:") && !strings.Contains(string(b), ">= 100")
	})
	waitFor(t, "the status after the undo", func() bool { return strings.HasPrefix(w.status.Text, "Undone: 1 files restored") })
}

func findLabel(o fyne.CanvasObject, sub string) bool {
	if o == nil {
		return false
	}
	switch x := o.(type) {
	case *widget.Label:
		if strings.Contains(x.Text, sub) {
			return true
		}
	case *fyne.Container:
		for _, k := range x.Objects {
			if findLabel(k, sub) {
				return true
			}
		}
		return false
	}
	if wd, ok := o.(fyne.Widget); ok {
		for _, k := range test.WidgetRenderer(wd).Objects() {
			if findLabel(k, sub) {
				return true
			}
		}
	}
	return false
}

func TestSplitSizesAreRemembered(t *testing.T) {
	a := test.NewTempApp(t)
	w1, err := NewWorkbench(a, Options{Layouter: sharedLayouter(t), UIDo: newTestUI(t).do})
	if err != nil {
		t.Fatal(err)
	}
	w1.splitMain.SetOffset(0.3)
	w1.splitGraph.SetOffset(0.4)
	w1.requestClose() // nothing unsaved: closes and saves the sizes
	w2, err := NewWorkbench(a, Options{Layouter: sharedLayouter(t), UIDo: newTestUI(t).do})
	if err != nil {
		t.Fatal(err)
	}
	if w2.splitMain.Offset != 0.3 || w2.splitGraph.Offset != 0.4 {
		t.Errorf("split offsets %v %v, want 0.3 0.4", w2.splitMain.Offset, w2.splitGraph.Offset)
	}
}

func TestAskStreamsAnswerWithContext(t *testing.T) {
	eng := models.NewScripted("bulk_discount gives 5 % from 50 units and 10 % above 100.")
	w, project := newTestWorkbench(t, Options{Engine: eng})
	openSample(t, w, project)
	bulk := nodeIDByName(t, w, "bulk_discount")
	runOnUI(w, func() { w.SelectNode(bulk) })
	w.panes.prompt.SetText("what discount do 100 units get?")
	test.Tap(w.panes.askBtn)
	waitFor(t, "the answer", func() bool {
		return !w.panes.askBtn.Disabled() && strings.Contains(w.panes.answer.Text, "10 % above 100")
	})
	calls := eng.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d model calls", len(calls))
	}
	var prompt string
	for _, m := range calls[0].Messages {
		prompt += m.Content
	}
	if !strings.Contains(prompt, "def bulk_discount(") || !strings.Contains(prompt, "what discount do 100 units get?") {
		t.Errorf("prompt lacks the selected code or the question:\n%s", prompt)
	}
}

func TestDefaultLayoutFitsHundredColumnsBesideTheGraph(t *testing.T) {
	a := test.NewTempApp(t)
	w, err := NewWorkbench(a, Options{Layouter: sharedLayouter(t), UIDo: newTestUI(t).do})
	if err != nil {
		t.Fatal(err)
	}
	w.win.Resize(fyne.NewSize(defaultWindowWidth, defaultWindowHeight))
	if w.side.Visible() {
		t.Error("the file tree is shown by default")
	}
	code, graph := w.code.Object().Size().Width, w.graph.Size().Width
	if need := codePaneWidth(100); code < need-1 {
		t.Errorf("code pane %.0f px wide, 100 columns need %.0f", code, need)
	}
	if graph < 500 {
		t.Errorf("graph %.0f px wide beside the 100-column code pane, want ≥ 500", graph)
	}
	test.Tap(w.filesBtn)
	if !w.side.Visible() || w.side.Size().Width < 100 {
		t.Errorf("Files did not show the tree (visible %v, %.0f px)", w.side.Visible(), w.side.Size().Width)
	}
	if !a.Preferences().Bool(prefSidePanel) {
		t.Error("the shown tree is not remembered")
	}
	w2, err := NewWorkbench(a, Options{Layouter: sharedLayouter(t), UIDo: newTestUI(t).do})
	if err != nil {
		t.Fatal(err)
	}
	if !w2.side.Visible() {
		t.Error("a new window hides the tree the user showed")
	}
}

// preparingProject is the real code graph project, counting the calls to
// PrepareUpdates the window makes.
type preparingProject struct {
	cgProject
	prepared *atomic.Int32
}

func (p preparingProject) PrepareUpdates(ctx context.Context) error {
	p.prepared.Add(1)
	return p.cgProject.PrepareUpdates(ctx)
}

// TestEditingPreparesUpdates: browsing does not get the project ready for
// incremental updates (on a large project that costs as much memory as
// indexing); entering edit mode does, in the background.
func TestEditingPreparesUpdates(t *testing.T) {
	var prepared atomic.Int32
	opener := func(ctx context.Context, root string, store *memory.Store, progress func(int, int)) (Project, error) {
		p, err := CodegraphOpener(ctx, root, store, progress)
		if err != nil {
			return nil, err
		}
		return preparingProject{p.(cgProject), &prepared}, nil
	}
	w, project := newTestWorkbench(t, Options{Opener: opener})
	openSample(t, w, project)
	// Taps run on the UI goroutine: the code pane's highlighting arrives
	// there too, and both touch the pane's renderer.
	onUI := func(f func()) { runOnUI(w, f) }
	file := viewNodeByLabel(t, w, "pricing.py").ID
	drawn := false
	onUI(func() {
		var pos fyne.Position
		if pos, drawn = w.graph.NodeCenter(file); drawn {
			test.TapAt(w.graph, pos)
		}
	})
	if !drawn {
		t.Fatalf("node %s not drawn", file)
	}
	waitFor(t, "a file in the code pane", func() bool { return w.code.Path() != "" })
	if n := prepared.Load(); n != 0 {
		t.Fatalf("browsing prepared the project for updates %d times", n)
	}
	onUI(func() { test.Tap(w.code.editBtn) })
	waitFor(t, "edit mode", func() bool { return w.code.Editing() })
	waitFor(t, "the project prepared for updates", func() bool { return prepared.Load() == 1 })
}
