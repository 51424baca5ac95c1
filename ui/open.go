package ui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"codeloom/app/memory"
	"codeloom/graphview"
)

// checkFolder returns dir's absolute path, or why it cannot be opened.
func checkFolder(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a folder", abs)
	}
	return abs, nil
}

// OpenProject indexes dir in the background and shows it: progress in the
// status bar and over the graph, the overview as soon as the graph is
// loaded, the side tree right after. The project open until then stays
// open and usable (title, graph, code) until the new one is ready, and
// stays so when the indexing is cancelled or fails.
func (w *Workbench) OpenProject(dir string) {
	abs, err := checkFolder(dir)
	if err != nil {
		w.showError("Cannot open project", err, "Choose an existing folder with File → Open Folder.")
		return
	}
	// "Indexing…" is shown before the load starts: shown after, it could
	// replace the load's first progress message (seen on a loaded CI
	// machine, with an opener that reports progress once).
	w.launchOpen(abs, w.showOpening)
}

// launchOpen starts opening abs in the background, calling show (when not
// nil) just before. With show nil it touches no widget, so NewWorkbench
// calls it before building the window: indexing then runs while the window
// is created.
func (w *Workbench) launchOpen(abs string, show func(abs string)) {
	w.cancelIndexing()
	ctx, cancel := context.WithCancel(context.Background())
	w.idxMu.Lock()
	w.cancelIndex = cancel
	w.idxMu.Unlock()
	w.openGen++
	w.indexing = true
	w.lastErr = ""
	w.timeline.reset("workbench", "window_built")
	w.timeline.mark("open_called")
	if show != nil {
		show(abs)
	}
	go w.load(ctx, abs, w.openGen, w.filterCopy())
}

// showOpening shows that abs is being opened (UI goroutine, widgets built).
func (w *Workbench) showOpening(abs string) {
	if !w.indexing {
		return // already done (an early open finished first)
	}
	if w.project == nil {
		w.win.SetTitle("CodeLoom — " + filepath.Base(abs))
		w.code.Clear("Indexing…")
	}
	w.progress.SetValue(0)
	w.progressTx.SetText("Indexing…")
	w.progBox.Show()
	w.setStatus("Indexing " + abs)
	w.graph.SetStatus("Indexing " + filepath.Base(abs) + "…")
	w.writeState()
}

// load opens abs (memory store, code graph), builds its first view and
// hands both to the UI goroutine, then builds the side tree. gen is the
// open it serves: a newer open or a cancel makes it drop its result.
func (w *Workbench) load(ctx context.Context, abs string, gen int, filter graphview.Filter) {
	start := time.Now()
	base := filepath.Base(abs)
	store, serr := w.opts.OpenStore(abs)
	if serr != nil {
		slog.Warn("project memory unavailable", "root", abs, "err", serr)
		store = nil
	}
	w.timeline.mark("store_opened")
	var last time.Time
	progress := func(done, total int) {
		if now := time.Now(); done < total && now.Sub(last) < 50*time.Millisecond {
			return
		} else {
			last = now
		}
		w.do(func() {
			if w.openGen != gen || !w.indexing {
				return
			}
			if total > 0 {
				w.progress.SetValue(float64(done) / float64(total))
			}
			msg := fmt.Sprintf("Indexing %d/%d files", done, total)
			w.progressTx.SetText(msg)
			w.graph.SetStatus(msg + " of " + base + "…")
		})
	}
	p, err := w.opts.Opener(ctx, abs, store, progress)
	opened := time.Since(start)
	w.timeline.mark("indexed")
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		if p != nil {
			p.Close()
		}
		w.do(func() { w.openFailed(abs, gen, store, err) })
		return
	}
	w.do(func() {
		if w.openGen == gen && w.indexing {
			w.progressTx.SetText("Preparing the graph…")
			w.graph.SetStatus("Preparing the graph of " + base + "…")
		}
	})
	// The overview first: the tree (as long again on a big project) follows.
	g := p.Graph()
	ix := graphview.NewIndex(g)
	first := viewParams{ix: ix, mode: modeOverview, expanded: map[string]bool{}, folders: map[string]bool{}, filter: filter}.build()
	w.layouter.Prepare(first)
	w.timeline.mark("overview_built")
	slog.Info("graph prepared", "root", abs, "open", opened, "index_and_overview", time.Since(start)-opened,
		"overview_nodes", len(first.Nodes), "overview_edges", len(first.Edges))
	installed := make(chan bool, 1)
	w.do(func() {
		installed <- w.installProject(ctx, abs, gen, p, store, serr, &prepared{g: g, ix: ix}, first, start)
	})
	if !<-installed {
		return
	}
	go warmHighlighter(g)
	tree := buildTree(g, "")
	w.timeline.mark("tree_built")
	w.do(func() {
		if w.project != p {
			return
		}
		w.treeModel = tree
		w.tree.Refresh()
		if w.treeFilter.Text != "" {
			w.refreshTree(true)
		}
		w.opened++
		w.writeState()
	})
}

// installProject makes p the window's project and shows first (UI
// goroutine); false when the open was superseded or cancelled meanwhile
// (p and store are then closed).
func (w *Workbench) installProject(ctx context.Context, abs string, gen int, p Project, store *memory.Store, serr error, prep *prepared, first *graphview.View, start time.Time) bool {
	if w.openGen != gen || ctx.Err() != nil {
		p.Close()
		if store != nil {
			store.Close()
		}
		if w.openGen == gen { // cancelled just now
			w.openFailed(abs, gen, nil, context.Canceled)
		}
		return false
	}
	w.idxMu.Lock()
	w.cancelIndex = nil
	w.idxMu.Unlock()
	w.indexing = false
	w.progBox.Hide()
	w.closeProject()
	w.project, w.store = p, store
	w.win.SetTitle("CodeLoom — " + filepath.Base(abs))
	w.rememberRecent(abs)
	w.watch(p)
	w.graphGen++
	prep.tree = buildTree(nil, "")
	w.applyGraph(prep)
	w.mode = modeOverview
	w.expanded = map[string]bool{}
	w.folders = map[string]bool{}
	w.focusID = ""
	w.viewGen++
	w.showBuilt(first)
	w.code.Clear("Click a node to see its code")
	w.refs.clear()
	w.panes.refresh()
	g := prep.g
	slog.Info("project opened", "root", abs, "nodes", len(g.Nodes()), "took", time.Since(start))
	w.setStatus(fmt.Sprintf("Indexed %s: %d nodes, %d edges in %s", filepath.Base(abs), len(g.Nodes()), len(g.Edges()), time.Since(start).Round(time.Millisecond)))
	if serr != nil {
		w.setStatus("Memory store unavailable (history and versions off): " + serr.Error())
	}
	w.writeState()
	return true
}

// openFailed ends an open that was cancelled or failed (UI goroutine): the
// project open before, if any, stays as it was.
func (w *Workbench) openFailed(abs string, gen int, store *memory.Store, err error) {
	if store != nil {
		store.Close()
	}
	if w.openGen != gen {
		return // superseded by a newer open, which shows its own progress
	}
	w.idxMu.Lock()
	w.cancelIndex = nil
	w.idxMu.Unlock()
	w.indexing = false
	w.progBox.Hide()
	w.graph.SetStatus("")
	still := ""
	if w.project != nil {
		still = "; still showing " + filepath.Base(w.project.Root())
	} else {
		w.win.SetTitle("CodeLoom")
	}
	if errors.Is(err, context.Canceled) {
		w.setStatus("Indexing " + filepath.Base(abs) + " cancelled" + still)
		if w.project == nil {
			w.code.Clear("Indexing cancelled: open the folder again when you are ready")
		}
		w.writeState()
		return
	}
	w.showError("Could not index "+abs, err, "Check that the folder is readable, then open it again."+still)
}

func (w *Workbench) cancelIndexing() {
	w.idxMu.Lock()
	c := w.cancelIndex
	w.cancelIndex = nil
	w.idxMu.Unlock()
	if c != nil {
		c()
	}
}

func (w *Workbench) closeProject() {
	if w.stopWatch != nil {
		w.stopWatch()
		w.stopWatch, w.watchCtx = nil, nil
	}
	if w.project != nil {
		if err := w.project.Close(); err != nil {
			slog.Warn("close project", "err", err)
		}
		w.project = nil
	}
	if w.store != nil {
		if err := w.store.Close(); err != nil {
			slog.Warn("close memory store", "err", err)
		}
		w.store = nil
	}
	w.snap, w.index = nil, nil
}
