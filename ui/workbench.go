package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"log/slog"
	"maps"
	"os"
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
	// uiDo runs a function on the UI goroutine: fyne.Do, except in tests,
	// where Fyne's test driver would run it on the calling goroutine and
	// background goroutines would update widgets concurrently.
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
			w.launchOpen(abs)
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

// ---- projects -------------------------------------------------------------

func (w *Workbench) chooseFolder() {
	w.confirmDiscard(func() {
		if w.opts.NativeDialogs {
			go func() {
				dir, err := nativeDirectory("Open project folder")
				w.do(func() {
					switch {
					case err == nil:
						w.OpenProject(dir)
					case errors.Is(err, errNativeCancelled):
					default:
						slog.Warn("native folder dialog failed, using Fyne's", "err", err)
						w.fyneFolderDialog()
					}
				})
			}()
			return
		}
		w.fyneFolderDialog()
	})
}

func (w *Workbench) fyneFolderDialog() {
	d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil {
			w.showError("Folder dialog failed", err, "Try again, or start CodeLoom with the folder: codeloom open DIR")
			return
		}
		if u == nil {
			return
		}
		w.OpenProject(u.Path())
	}, w.win)
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

func (w *Workbench) showRecent(anchor fyne.CanvasObject) {
	recent := w.app.Preferences().StringList(prefRecent)
	var items []*fyne.MenuItem
	for _, r := range recent {
		dir := r
		items = append(items, fyne.NewMenuItem(dir, func() { w.confirmDiscard(func() { w.OpenProject(dir) }) }))
	}
	if len(items) == 0 {
		items = append(items, fyne.NewMenuItem("(no recent projects)", nil))
	}
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(anchor).Add(fyne.NewPos(0, anchor.Size().Height))
	widget.ShowPopUpMenuAtPosition(fyne.NewMenu("", items...), w.win.Canvas(), pos)
}

func (w *Workbench) rememberRecent(dir string) {
	list := []string{dir}
	for _, r := range w.app.Preferences().StringList(prefRecent) {
		if r != dir && len(list) < maxRecent {
			list = append(list, r)
		}
	}
	w.app.Preferences().SetStringList(prefRecent, list)
}

// RecentProjects lists remembered project folders, newest first.
func (w *Workbench) RecentProjects() []string { return w.app.Preferences().StringList(prefRecent) }

// watch follows changes made outside the window (another editor, git) and
// redraws.
func (w *Workbench) watch(p Project) {
	wp, ok := p.(watcher)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.stopWatch, w.watchCtx = cancel, ctx
	go func() {
		err := wp.Watch(ctx, func(g Graph) {
			w.do(func() {
				if w.project == p {
					w.externalChange(g)
				}
			})
		})
		if err != nil {
			slog.Warn("file watching unavailable", "root", p.Root(), "err", err)
			w.do(func() { w.setStatus("Not following file changes: " + err.Error()) })
		}
	}()
}

// prepareUpdates gets the open project ready for incremental updates in
// the background (an edit or a task is coming), so the first save does not
// wait for it. It is done at most once per project (later calls return at
// once) and ends with the project's watch.
func (w *Workbench) prepareUpdates() {
	p, ok := w.project.(updatePreparer)
	if !ok {
		return
	}
	ctx, root := w.watchCtx, w.project.Root()
	if ctx == nil {
		ctx = context.Background()
	}
	go func() {
		if err := p.PrepareUpdates(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("prepare updates", "root", root, "err", err)
		}
	}()
}

// externalChange shows a graph updated from files changed on disk.
func (w *Workbench) externalChange(g Graph) {
	w.setGraphThen(g, func() { w.externalChanged(g) })
}

func (w *Workbench) externalChanged(g Graph) {
	w.rebuildView()
	id := w.code.NodeID()
	switch n, ok := g.Node(id); {
	case w.code.Dirty():
		w.setStatus(w.code.Path() + " changed on disk while you edit it: saving will overwrite it (the disk version is kept in history)")
	case ok:
		w.openCode(n)
		w.setStatus("Files changed on disk: graph updated")
	default:
		w.setStatus("Files changed on disk: graph updated")
	}
	w.writeState()
}

// storeOrNil returns the store as the Store interface (nil when absent).
func (w *Workbench) storeOrNil() Store {
	if w.store == nil {
		return nil
	}
	return w.store
}

// setGraph makes g the window's graph at once, on the UI goroutine (tests
// and small graphs; the app prepares big ones with setGraphThen).
func (w *Workbench) setGraph(g Graph) {
	w.applyGraph(prepareGraph(g, w.treeFilter.Text))
}

func (w *Workbench) refreshTree(fromFilter bool) {
	snap, filter := w.snap, w.treeFilter.Text
	w.graphGen++
	gen := w.graphGen
	go func() {
		tm := buildTree(snap, filter)
		w.do(func() {
			if w.snap != snap || w.graphGen != gen {
				return
			}
			w.treeModel = tm
			w.tree.Refresh()
			if fromFilter && filter != "" {
				w.tree.OpenAllBranches()
			}
		})
	}()
}

func (w *Workbench) filterCopy() graphview.Filter {
	return graphview.Filter{HideNodes: maps.Clone(w.filter.HideNodes), HideEdges: maps.Clone(w.filter.HideEdges)}
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

// ---- selection and code ---------------------------------------------------

// syncCodeBytes is the file size up to which code is highlighted on the UI
// goroutine (a few milliseconds); longer files are highlighted in the background.
const syncCodeBytes = 32 << 10

// SelectNode selects id: highlights it in the graph (focusing on it when it
// is not shown), selects it in the tree and opens its code.
func (w *Workbench) SelectNode(id string) { w.selectNode(id, false) }

func (w *Workbench) selectNode(id string, fromGraph bool) {
	if w.snap == nil {
		return
	}
	if strings.HasPrefix(id, "more:") {
		w.setStatus("This stands for nodes cut by the node budget: double-click it to focus there")
		return
	}
	if strings.HasPrefix(id, "dir:") {
		w.setStatus("Folder " + strings.TrimPrefix(id, "dir:") + ": double-click it to show its files")
		return
	}
	if strings.HasPrefix(id, "rest:") || id == graphview.ExternalNodeID {
		w.setStatus("This stands for what the node budget left out: double-click it to show more")
		return
	}
	n, ok := w.snap.Node(id)
	if !ok {
		return
	}
	sameFile := n.Path != "" && n.Path == w.code.Path()
	if w.code.Dirty() && !sameFile {
		dialog.ShowConfirm("Unsaved changes",
			fmt.Sprintf("%s has unsaved changes. Discard them and open %s?", w.code.Path(), n.Name),
			func(ok bool) {
				if ok {
					w.code.SetEditing(false)
					w.selectNode(id, fromGraph)
				}
			}, w.win)
		return
	}
	if !fromGraph {
		if v := w.graph.View(); v != nil {
			if _, shown := v.Node(id); shown {
				w.graph.Select(id)
				w.graph.CenterOn(id)
			} else {
				w.Focus(id)
			}
		} else {
			w.Focus(id)
		}
	}
	w.treeSync = true
	w.openTreeAncestors(id)
	w.tree.Select(id)
	w.tree.ScrollTo(id)
	w.treeSync = false
	w.openCode(n)
	w.refs.show(w.index, id)
	w.panes.refreshHistory()
	w.writeState()
}

func (w *Workbench) openCode(n *codegraph.Node) {
	if n.Kind == codegraph.KindPackage || n.Path == "" {
		w.code.Clear(fmt.Sprintf("%s: external package %s (no code in the project)", n.Kind, n.Name))
		return
	}
	if w.code.Dirty() && n.Path == w.code.Path() {
		// Keep the edits; just point at the node.
		w.setStatus(fmt.Sprintf("%s (unsaved edits kept)", n.QualName))
		return
	}
	full, err := projectPath(w.project.Root(), n.Path)
	if err != nil {
		w.showError("Cannot show code", err, "")
		return
	}
	data, err := os.ReadFile(full)
	if err != nil {
		w.code.Clear(fmt.Sprintf("Cannot read %s: %v", n.Path, err))
		return
	}
	start, end := n.StartLine, n.EndLine
	if n.Kind == codegraph.KindFile {
		start, end = 0, 0
	}
	w.codeGen++
	status := strings.ReplaceAll(graphview.Tooltip(n), "\n", "  ·  ")
	if len(data) <= syncCodeBytes {
		w.code.ShowFile(n.Path, string(data), n.ID, firstNonEmpty(n.QualName, n.Name), start, end)
		w.setStatus(status)
		return
	}
	// A long file is highlighted off the UI goroutine (chroma took seconds).
	gen, text := w.codeGen, string(data)
	w.setStatus("Highlighting " + n.Path + "…")
	go func() {
		cv := prepareCode(n.Path, text, start, end)
		w.do(func() {
			if w.codeGen != gen || w.code.Dirty() {
				return
			}
			w.code.showPrepared(n.Path, text, n.ID, firstNonEmpty(n.QualName, n.Name), start, end, cv)
			w.setStatus(status)
			w.writeState()
		})
	}()
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// openTreeAncestors opens the tree branches above id so it can be shown.
func (w *Workbench) openTreeAncestors(id string) {
	parent := w.treeModel.parent
	var chain []string
	for cur, i := parent[id], 0; cur != "" && i < 64; cur, i = parent[cur], i+1 {
		chain = append(chain, cur)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		w.tree.OpenBranch(chain[i])
	}
}

// jumpTo searches the graph for q and selects the best match.
func (w *Workbench) jumpTo(q string) {
	if w.snap == nil || strings.TrimSpace(q) == "" {
		return
	}
	if w.index != nil && w.index.Len() > syncViewLimit {
		// Searching a big graph takes a while: off the UI goroutine.
		snap := w.snap
		w.setStatus("Searching " + q + "…")
		go func() {
			ids := snap.Search(q, 10)
			w.do(func() {
				if w.snap == snap {
					w.jumpToResults(q, ids)
				}
			})
		}()
		return
	}
	w.jumpToResults(q, w.snap.Search(q, 10))
}

func (w *Workbench) jumpToResults(q string, ids []string) {
	if len(ids) == 0 {
		w.setStatus(fmt.Sprintf("No node matches %q", q))
		return
	}
	w.Focus(ids[0])
	w.selectNode(ids[0], true)
	var names []string
	for _, id := range ids[1:min(len(ids), 5)] {
		if n, ok := w.snap.Node(id); ok {
			names = append(names, n.Name)
		}
	}
	if len(names) > 0 {
		w.setStatus(fmt.Sprintf("Jumped to best match; others: %s", strings.Join(names, ", ")))
	}
}

// ---- saving ---------------------------------------------------------------

func (w *Workbench) save(text string) {
	if w.project == nil || w.code.Path() == "" {
		return
	}
	req := SaveRequest{Root: w.project.Root(), Path: w.code.Path(), NodeID: w.code.NodeID(), NodeName: w.code.nodeName, Content: []byte(text)}
	w.applyFileChange(req, "Saved")
}

// applyFileChange writes req (keeping the previous version), re-indexes the
// file and redraws; verb names the action in the status bar.
func (w *Workbench) applyFileChange(req SaveRequest, verb string) {
	store, project := w.storeOrNil(), w.project
	nodeID := req.NodeID
	filter := w.treeFilter.Text
	w.setStatus(verb + " " + req.Path + "…")
	go func() {
		err := SaveFile(store, req)
		if errors.Is(err, ErrUnchanged) {
			w.do(func() {
				w.code.Saved(string(req.Content))
				w.setStatus("No changes to save in " + req.Path)
			})
			return
		}
		if err != nil {
			w.do(func() {
				w.showError(verb+" failed", err, "Your edits are still in the editor; fix the problem and press Ctrl+S again.")
			})
			return
		}
		g, uerr := project.UpdateFiles(context.Background(), []string{req.Path})
		var prep *prepared
		if uerr == nil {
			prep = prepareGraph(g, filter)
		}
		w.do(func() {
			if w.project != project {
				return
			}
			w.code.Saved(string(req.Content))
			if uerr != nil {
				w.showError("Saved, but re-indexing failed", uerr, "The file is saved; reopen the project to rebuild the graph.")
				return
			}
			w.applyGraph(prep)
			w.rebuildView()
			if _, ok := g.Node(nodeID); ok {
				w.graph.Select(nodeID)
				n, _ := g.Node(nodeID)
				w.code.SetEditing(false)
				w.openCode(n)
			} else {
				w.code.SetEditing(false)
				w.code.ShowFile(req.Path, string(req.Content), "", "", 0, 0)
			}
			w.panes.refreshHistory()
			w.setStatus(fmt.Sprintf("%s %s; graph updated (%d nodes)", verb, req.Path, len(g.Nodes())))
			w.writeState()
		})
	}()
}

// Revert writes version v back to its file (after keeping the current content).
func (w *Workbench) Revert(v memory.Version) {
	if w.project == nil {
		return
	}
	w.applyFileChange(SaveRequest{Root: w.project.Root(), Path: v.Path, NodeID: v.NodeID, NodeName: v.NodeName,
		Content: v.Content, Reason: "before revert to " + v.Time.Format("2006-01-02 15:04:05")}, "Reverted")
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

// ---- filters and export ---------------------------------------------------

func nodeKinds() []codegraph.Kind {
	return []codegraph.Kind{codegraph.KindFile, codegraph.KindClass, codegraph.KindFunction, codegraph.KindMethod, codegraph.KindPackage}
}

func edgeKinds() []codegraph.EdgeKind {
	return []codegraph.EdgeKind{codegraph.EdgeContains, codegraph.EdgeImports, codegraph.EdgeCalls, codegraph.EdgeInherits, codegraph.EdgeUses, codegraph.EdgeRequires, codegraph.EdgeDispatches, codegraph.EdgeImplements}
}

// SetNodeKindVisible shows or hides a node kind and redraws.
func (w *Workbench) SetNodeKindVisible(k codegraph.Kind, on bool) {
	w.filter.HideNodes[k] = !on
	w.rebuildView()
}

// SetEdgeKindVisible shows or hides an edge kind and redraws.
func (w *Workbench) SetEdgeKindVisible(k codegraph.EdgeKind, on bool) {
	w.filter.HideEdges[k] = !on
	w.rebuildView()
}

func (w *Workbench) showExport(anchor fyne.CanvasObject) {
	m := fyne.NewMenu("", fyne.NewMenuItem("SVG…", func() { w.exportTo("svg") }), fyne.NewMenuItem("PNG…", func() { w.exportTo("png") }))
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(anchor).Add(fyne.NewPos(0, anchor.Size().Height))
	widget.ShowPopUpMenuAtPosition(m, w.win.Canvas(), pos)
}

func (w *Workbench) exportTo(format string) {
	v := w.graph.View()
	if v == nil {
		w.setStatus("Nothing to export yet: open a project")
		return
	}
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil {
			w.showError("Export failed", err, "")
			return
		}
		if wc == nil {
			return
		}
		w.setStatus("Exporting " + wc.URI().Path() + "…")
		var shot image.Image
		if format == "png" {
			shot = w.graphImage()
		}
		go func() {
			var err error
			if shot != nil {
				err = png.Encode(wc, shot)
			} else {
				err = w.layouter.Export(context.Background(), v, format, wc)
			}
			if cerr := wc.Close(); err == nil {
				err = cerr
			}
			w.do(func() {
				if err != nil {
					w.showError("Export failed", err, "Choose another file name or folder and try again.")
					return
				}
				w.setStatus("Exported " + wc.URI().Path())
			})
		}()
	}, w.win)
	d.SetFileName("codeloom-graph." + format)
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

// graphImage is the whole graph drawn as the screen draws it, at 1.5×
// zoom (PNG export: Graphviz's own PNG renderer drew curved edges as
// wedges and lost clusters and test colours); a capture of the visible part
// of the window stands in when it cannot be drawn, nil when neither works.
func (w *Workbench) graphImage() image.Image {
	if img := w.graph.RenderImage(1.5); img != nil {
		return img
	}
	full := w.win.Canvas().Capture()
	if full == nil {
		return nil
	}
	d := fyne.CurrentApp().Driver()
	pos, size := d.AbsolutePositionForObject(w.graph), w.graph.Size()
	sc := w.win.Canvas().Scale()
	r := image.Rect(int(pos.X*sc), int(pos.Y*sc), int((pos.X+size.Width)*sc), int((pos.Y+size.Height)*sc)).Intersect(full.Bounds())
	if r.Empty() {
		return nil
	}
	out := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(out, out.Bounds(), full, r.Min, draw.Src)
	return out
}

// do runs f on the UI goroutine; every update from a background goroutine
// goes through it.
func (w *Workbench) do(f func()) { w.uiDo(f) }
