package ui

import (
	"context"
	"errors"
	"log/slog"
	"maps"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"codeloom/graphview"
)

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
		w.openCodeNoting(n, "Files changed on disk: graph updated")
	default:
		w.setStatus("Files changed on disk: graph updated")
	}
	w.refreshReferences(id)
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
