package ui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/graphview"
	"codeloom/models"
)

// Preference keys.
const (
	prefRecent      = "recent_projects"
	prefSplitMain   = "split_main"
	prefSplitCenter = "split_center"
	prefSplitGraph  = "split_graph"
	prefSidePanel   = "side_panel" // the file tree is shown (hidden by default)
	maxRecent       = 8
)

// Options configure a Workbench.
type Options struct {
	// Opener indexes a folder; nil means the code graph engine (codegraph.Open).
	Opener Opener
	// Layouter lays out the graph; nil means a new in-process Graphviz.
	Layouter *graphview.Layouter
	// OpenStore opens the project's memory store; nil means memory.OpenProject.
	// Return a nil store to run without memory.
	OpenStore func(root string) (*memory.Store, error)
	// Automation, when set, is a file the window rewrites (JSON) on every
	// change, for end-to-end tests.
	Automation string
	// NativeDialogs uses sqweek/dialog for folder choice and approvals.
	NativeDialogs bool
	// Engine answers the prompt pane from the start (tests: a scripted
	// engine); nil until the user loads a model.
	Engine models.Engine
	// LoadModel loads a GGUF file (llama.cpp, wired by main.go); nil hides
	// the Load button.
	LoadModel ModelLoader
	// ModelPath is loaded at start when set (CODELOOM_MODEL).
	ModelPath string
	// Dir, when set, is opened at once: it starts indexing before the
	// window is built.
	Dir string
	// UIDo runs a function on the UI goroutine; nil means fyne.Do. Tests
	// pass a queue their own goroutine runs: Fyne's test driver would run
	// each function on the goroutine that asked, beside the test.
	UIDo func(func())
}

// ModelLoader loads a model file, reporting progress 0…1. The returned
// close function unloads it.
type ModelLoader func(ctx context.Context, path string, progress func(float32)) (models.Engine, func(), error)

type viewMode int

const (
	modeOverview viewMode = iota
	modeFocus
)

// Workbench is the project window and its state. Every method runs on the
// Fyne UI goroutine unless it says otherwise.
type Workbench struct {
	app  fyne.App
	win  fyne.Window
	opts Options
	// uiDo runs a function on the UI goroutine (Options.UIDo).
	uiDo func(func())

	layouter *graphview.Layouter
	graph    *graphview.GraphView
	code     *CodePane
	panes    *bottomPanes

	tree       *widget.Tree
	treeModel  *treeModel
	treeFilter *widget.Entry
	treeSync   bool // true while the tree is selected programmatically
	search     *searchEntry
	depth      *widget.Select
	status     *widget.Label
	viewInfo   *widget.Label
	openBtn    *widget.Button

	// The automation file's writer (automation.go): the newest state not yet written.
	autoMu     sync.Mutex
	autoNext   *AutomationState
	autoBusy   bool
	exportBtn  *widget.Button
	progress   *widget.ProgressBar
	progressTx *widget.Label
	cancelBtn  *widget.Button
	progBox    *fyne.Container

	splitMain, splitCenter, splitGraph *container.Split
	side                               *fyne.Container // the file tree and its filter
	filesBtn                           *widget.Button  // shows or hides side

	// project state
	project  Project
	store    *memory.Store
	engine   models.Engine // the loaded model (nil: none)
	unload   func()
	model    string // its file name
	snap     Graph
	index    *graphview.Index
	mode     viewMode
	expanded map[string]bool
	folders  map[string]bool // expanded folder nodes of the overview
	focusID  string
	filter   graphview.Filter
	openGen  int // bumped per project open: a late result of an older open is dropped
	graphGen int // bumped per graph snapshot handed to a background preparation
	viewGen  int // bumped per view rebuild: a view built late for an older one is dropped
	codeGen  int // bumped per file opened: a highlighting done late for an older one is dropped
	stalls   stallStats
	refs     *refsPanel

	idxMu       sync.Mutex // guards cancelIndex (set from the UI goroutine, read in Close)
	cancelIndex context.CancelFunc
	stopWatch   context.CancelFunc
	watchCtx    context.Context // ends with the project's watch (nil: none)
	indexing    bool
	lastErr     string
	opened      int             // projects opened so far (tests wait on it)
	stopProfile func()          // ends the launch CPU profile (CODELOOM_CPUPROFILE)
	timeline    *timeline       // when the steps of the last open happened
	viewAsked   time.Time       // when the view being built or laid out was asked for
	viewTook    time.Duration   // how long the view shown took from asking to drawing
	newProject  *newProjectForm // the open New project dialog (nil: none)
	filtersPop  *widget.PopUp   // the Filters pop-up last shown (legend.go)
}

// NewWorkbench builds the main window in app a.
func NewWorkbench(a fyne.App, opts Options) (*Workbench, error) {
	stopProfile := startProfileFromEnv()
	w := &Workbench{stopProfile: stopProfile, timeline: newTimeline(), app: a, opts: opts, uiDo: fyne.Do, expanded: map[string]bool{}, folders: map[string]bool{}, engine: opts.Engine}
	if opts.UIDo != nil {
		w.uiDo = opts.UIDo
	}
	if opts.Engine != nil {
		w.model = "scripted"
	}
	if opts.Opener == nil {
		w.opts.Opener = CodegraphOpener
	}
	if opts.OpenStore == nil {
		w.opts.OpenStore = memory.OpenProject
	}
	w.layouter = opts.Layouter
	if w.layouter == nil {
		eng, err := graphview.NewGraphvizEngine(context.Background())
		if err != nil {
			return nil, fmt.Errorf("workbench: %w", err)
		}
		w.layouter = graphview.NewLayouter(eng)
	}
	w.filter = graphview.Filter{HideNodes: map[codegraph.Kind]bool{}, HideEdges: map[codegraph.EdgeKind]bool{}}
	w.timeline.mark("workbench")
	// The project starts indexing now, while the window is built and shown.
	early := ""
	if opts.Dir != "" {
		abs, err := checkFolder(opts.Dir)
		if err == nil {
			early = abs
			w.launchOpen(abs, nil)
		} else {
			defer w.showError("Cannot open project", err, "Choose an existing folder with File → Open Folder.")
		}
	}
	w.win = a.NewWindow("CodeLoom")
	w.build()
	w.win.Resize(fyne.NewSize(defaultWindowWidth, defaultWindowHeight))
	w.timeline.mark("window_built")
	w.win.SetCloseIntercept(w.requestClose)
	if early != "" {
		w.showOpening(early)
	}
	return w, nil
}

// Window returns the main window.
func (w *Workbench) Window() fyne.Window { return w.win }

// GraphView returns the graph widget.
func (w *Workbench) GraphView() *graphview.GraphView { return w.graph }

// Code returns the code pane.
func (w *Workbench) Code() *CodePane { return w.code }

// Project returns the open project (nil when none).
func (w *Workbench) Project() Project { return w.project }

func (w *Workbench) build() {
	w.graph = graphview.NewGraphView(w.layouter)
	w.graph.OnSelect = func(id string) { w.selectNode(id, true) }
	w.graph.OnFocus = w.onDoubleTap
	w.graph.OnLayout = func(v *graphview.View, err error) {
		if err != nil {
			w.setStatus("Graph layout failed: " + err.Error())
			w.viewInfo.SetText("")
		} else {
			if len(v.Nodes) > 0 && !w.indexing {
				w.timeline.mark("graph_drawn")
			}
			if !w.viewAsked.IsZero() {
				w.viewTook, w.viewAsked = time.Since(w.viewAsked), time.Time{}
			}
			info := fmt.Sprintf("%s · %d nodes · %d edges", v.Title, len(v.Nodes), len(v.Edges))
			if v.HiddenEdges > 0 {
				info += fmt.Sprintf(" (+%d weaker hidden)", v.HiddenEdges)
			}
			if lay := w.graph.CurrentLayout(); lay != nil && lay.Fallback {
				info += " · grid layout"
			}
			w.viewInfo.SetText(info)
		}
		w.writeState()
	}

	w.code = NewCodePane()
	w.code.OnSave = w.save
	w.code.OnEditing = w.prepareUpdates
	w.code.Focus = func(f fyne.Focusable) { w.win.Canvas().Focus(f) }
	w.code.do = w.do // highlighting comes back through the window's UI queue

	w.treeModel = buildTree(nil, "")
	w.tree = widget.NewTree(
		func(id widget.TreeNodeID) []widget.TreeNodeID { return w.treeModel.children[id] },
		func(id widget.TreeNodeID) bool { return w.treeModel.branch[id] || strings.HasPrefix(id, "dir:") },
		func(bool) fyne.CanvasObject { return widget.NewLabel("template item") },
		func(id widget.TreeNodeID, _ bool, o fyne.CanvasObject) {
			o.(*widget.Label).SetText(w.treeModel.labels[id])
		},
	)
	w.tree.OnSelected = func(id widget.TreeNodeID) {
		if w.treeSync || strings.HasPrefix(id, "dir:") {
			return
		}
		w.selectNode(id, false)
	}
	w.treeFilter = widget.NewEntry()
	w.treeFilter.SetPlaceHolder("Filter tree…")
	w.treeFilter.OnChanged = func(s string) { w.refreshTree(true) }

	w.search = newSearchEntry(w.suggestNodes, func(id string) { w.Focus(id); w.selectNode(id, true) }) // searchbox.go
	w.search.do = w.do
	w.search.SetPlaceHolder("Search nodes (fuzzy, Ctrl+F): pick a suggestion or Enter to jump")
	w.search.OnSubmitted = w.jumpTo

	w.depth = widget.NewSelect([]string{"depth 1", "depth 2", "depth 3", "depth 4"}, func(string) {
		if w.mode == modeFocus {
			w.rebuildView()
		}
	})
	w.depth.SetSelected("depth 2")

	w.panes = newBottomPanes(w)

	w.viewInfo = widget.NewLabel("")
	w.viewInfo.TextStyle = fyne.TextStyle{Italic: true}
	w.status = widget.NewLabel("Open a folder to begin")
	w.status.Truncation = fyne.TextTruncateEllipsis
	w.progress = widget.NewProgressBar()
	w.progressTx = widget.NewLabel("")
	w.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), w.cancelIndexing)
	w.progBox = container.NewHBox(w.progressTx, container.NewGridWrap(fyne.NewSize(220, 30), w.progress), w.cancelBtn)
	w.progBox.Hide()

	openBtn := widget.NewButtonWithIcon("Open Folder…", theme.FolderOpenIcon(), w.chooseFolder)
	w.openBtn = openBtn
	recentBtn := widget.NewButtonWithIcon("Recent", theme.HistoryIcon(), nil)
	recentBtn.OnTapped = func() { w.showRecent(recentBtn) }
	overviewBtn := widget.NewButtonWithIcon("Overview", theme.HomeIcon(), func() {
		w.mode = modeOverview
		w.rebuildView()
	})
	zoomIn := widget.NewButtonWithIcon("", theme.ZoomInIcon(), func() { w.graph.ZoomBy(1.25) })
	zoomOut := widget.NewButtonWithIcon("", theme.ZoomOutIcon(), func() { w.graph.ZoomBy(0.8) })
	fit := widget.NewButtonWithIcon("Fit", theme.ViewFullScreenIcon(), func() { w.graph.Fit() })
	filters := widget.NewButtonWithIcon("Filters", theme.ListIcon(), nil)
	filters.OnTapped = func() { w.showFilters(filters) }
	export := widget.NewButtonWithIcon("Export", theme.DownloadIcon(), nil)
	export.OnTapped = func() { w.showExport(export) }
	w.exportBtn = export
	w.filesBtn = widget.NewButtonWithIcon("Files", theme.ListIcon(), func() { w.showSidePanel(!w.side.Visible()) })
	toolbar := container.NewBorder(nil, nil,
		container.NewHBox(w.filesBtn, openBtn, recentBtn, widget.NewSeparator(), overviewBtn, w.depth, filters),
		container.NewHBox(zoomOut, zoomIn, fit, export),
		w.search)

	w.refs = newRefsPanel(w)
	// References are the first tab below the graph: the side panel holds
	// only the file tree, hidden by default so that the code pane gets 100
	// columns beside a usable graph on the default window.
	w.panes.tabs.Items = append([]*container.TabItem{container.NewTabItemWithIcon("References", theme.SearchIcon(), w.refs.root)}, w.panes.tabs.Items...)
	w.panes.tabs.SelectIndex(0)
	w.side = container.NewBorder(w.treeFilter, nil, nil, nil, w.tree)
	prefs := w.app.Preferences()
	sideShown := prefs.BoolWithFallback(prefSidePanel, false)
	w.splitGraph = container.NewHSplit(w.graph, w.code.Object())
	// By default the code pane fits 100 columns (codeSplitOffset); a dragged split is remembered.
	beside := float32(defaultWindowWidth)
	if sideShown {
		beside *= float32(1 - prefs.FloatWithFallback(prefSplitMain, 0.15))
	}
	w.splitGraph.Offset = prefs.FloatWithFallback(prefSplitGraph, codeSplitOffset(beside))
	w.splitCenter = container.NewVSplit(w.splitGraph, w.panes.Object())
	w.splitCenter.Offset = prefs.FloatWithFallback(prefSplitCenter, 0.7)
	w.splitMain = container.NewHSplit(w.side, w.splitCenter)
	w.splitMain.Offset = prefs.FloatWithFallback(prefSplitMain, 0.15)
	w.showSidePanel(sideShown)

	statusBar := container.NewBorder(nil, nil, nil, container.NewHBox(w.viewInfo, w.progBox), w.status)
	w.win.SetContent(container.NewBorder(toolbar, statusBar, nil, nil, w.splitMain))
	w.win.SetMainMenu(w.mainMenu())
	w.win.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyF, Modifier: fyne.KeyModifierShortcutDefault}, func(fyne.Shortcut) {
		w.win.Canvas().Focus(w.search)
	})
	w.win.Canvas().AddShortcut(newProjectShortcut(), func(fyne.Shortcut) { w.NewProjectDialog() })
	w.win.Canvas().AddShortcut(saveShortcut(), func(fyne.Shortcut) {
		if w.code.Editing() {
			w.save(w.code.Text())
		}
	})
}

func (w *Workbench) mainMenu() *fyne.MainMenu {
	file := fyne.NewMenu("File",
		fyne.NewMenuItem("Open Folder…", w.chooseFolder),
		newProjectMenuItem(w),
		fyne.NewMenuItem("Export view as SVG…", func() { w.exportTo("svg") }),
		fyne.NewMenuItem("Export view as PNG…", func() { w.exportTo("png") }),
	)
	view := fyne.NewMenu("View",
		fyne.NewMenuItem("Overview", func() { w.mode = modeOverview; w.rebuildView() }),
		fyne.NewMenuItem("Fit graph", func() { w.graph.Fit() }),
	)
	return fyne.NewMainMenu(file, view)
}

func (w *Workbench) setStatus(s string) {
	w.status.SetText(s)
}

// showError shows err in a dialog and the status bar: what failed and what to do.
func (w *Workbench) showError(what string, err error, next string) {
	msg := what + ": " + err.Error()
	if next != "" {
		msg += "\n\n" + next
	}
	slog.Error(what, "err", err)
	w.lastErr = msg
	w.setStatus(what + " (see dialog)")
	dialog.ShowError(errors.New(msg), w.win)
	w.writeState()
}

// ---- views ----------------------------------------------------------------

func (w *Workbench) depthValue() int {
	var d int
	fmt.Sscanf(w.depth.Selected, "depth %d", &d)
	if d <= 0 {
		d = graphview.DefaultDepth
	}
	return d
}

// Focus shows the neighbourhood of id.
func (w *Workbench) Focus(id string) {
	if w.index == nil {
		return
	}
	if _, ok := w.index.Node(id); !ok {
		return
	}
	w.mode, w.focusID = modeFocus, id
	w.rebuildView()
	w.graph.Select(id)
}

// onDoubleTap expands a folder, group or file in place (same zoom, the
// clicked node or what replaces it under the pointer) or shows the symbol
// view of a definition; a real node's code is shown either way.
func (w *Workbench) onDoubleTap(id string) {
	switch {
	case strings.HasPrefix(id, "dir:"), strings.HasPrefix(id, "rest:"), id == graphview.ExternalNodeID:
		w.mode = modeOverview
		w.folders[id] = !w.folders[id]
		cluster := ""
		if d, ok := strings.CutPrefix(id, "dir:"); ok {
			cluster = d + "/"
		} else if d, ok := strings.CutPrefix(id, "rest:"); ok && d != "" {
			cluster = d + "/"
		} else if id == graphview.ExternalNodeID {
			cluster = "external packages"
		}
		w.graph.KeepInPlace(id, cluster)
		w.rebuildView()
		w.selectNode(id, true)
		return
	case strings.HasPrefix(id, "more:"):
		target := strings.TrimPrefix(id, "more:")
		if i := strings.LastIndexByte(target, ':'); i > 0 {
			if _, ok := w.index.Node(target); !ok {
				target = target[:i] // a symbol view's "+k more callers" stub
			}
		}
		w.Focus(target)
		return
	}
	n, ok := w.index.Node(id)
	if !ok {
		return
	}
	if w.mode == modeOverview && n.Kind == codegraph.KindFile {
		w.expanded[id] = !w.expanded[id]
		w.graph.KeepInPlace(id, n.Path)
		w.rebuildView()
		w.selectNode(id, true)
		return
	}
	w.Focus(id)
	w.selectNode(id, true)
}

// ---- closing ----------------------------------------------------------------

func (w *Workbench) confirmDiscard(then func()) {
	if !w.code.Dirty() {
		then()
		return
	}
	dialog.ShowConfirm("Unsaved changes", fmt.Sprintf("%s has unsaved changes. Discard them?", w.code.Path()), func(ok bool) {
		if ok {
			w.code.SetEditing(false)
			then()
		}
	}, w.win)
}

func (w *Workbench) requestClose() {
	w.confirmDiscard(func() {
		w.saveSplits()
		w.cancelIndexing()
		w.closeProject()
		w.panes.stopAsk()
		w.stopProfile()
		if w.unload != nil {
			w.unload()
			w.unload = nil
		}
		w.win.Close()
	})
}

// Default window size: fits a 1,400×900 screen with room for its frame.
const (
	defaultWindowWidth  = 1360
	defaultWindowHeight = 860
)

// showSidePanel shows or hides the file tree beside the graph and
// remembers the choice.
func (w *Workbench) showSidePanel(show bool) {
	if show {
		w.side.Show()
		w.filesBtn.Importance = widget.HighImportance
	} else {
		w.side.Hide()
		w.filesBtn.Importance = widget.MediumImportance
	}
	w.filesBtn.Refresh()
	w.splitMain.Refresh()
	w.app.Preferences().SetBool(prefSidePanel, show)
}

func (w *Workbench) saveSplits() {
	p := w.app.Preferences()
	p.SetFloat(prefSplitMain, w.splitMain.Offset)
	p.SetFloat(prefSplitCenter, w.splitCenter.Offset)
	p.SetFloat(prefSplitGraph, w.splitGraph.Offset)
}

// do runs f on the UI goroutine; every update from a background goroutine
// goes through it.
func (w *Workbench) do(f func()) { w.uiDo(f) }

// newApprover is an Approver for the window whose dialogs go through the
// window's UI queue.
func (w *Workbench) newApprover() *Approver {
	a := NewApprover(w.win, w.opts.NativeDialogs)
	a.do = w.do
	return a
}
