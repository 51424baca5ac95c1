package ui

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/pipeline"
)

// undoLast plans reverting the newest change CodeLoom landed in the project
// (pipeline.PlanUndo), shows what it would do and, on yes, carries it out
// (pipeline.ApplyUndo: the current content is kept as a version first) and
// re-indexes the restored files. Planning, writing and indexing run off the
// UI goroutine.
func (w *Workbench) undoLast() {
	project, store := w.project, w.store
	if project == nil || store == nil {
		return
	}
	w.confirmDiscard(func() {
		root, filter := project.Root(), w.treeFilter.Text
		w.setStatus("Looking for the last landed change…")
		go func() {
			u, err := pipeline.PlanUndo(root, store)
			w.do(func() {
				switch {
				case err != nil:
					w.showError("Cannot undo", err, "")
				case u.Pending() == 0:
					w.setStatus("Nothing to undo: no change CodeLoom landed is still in place")
				default:
					w.confirmUndo(u, func() { w.carryOutUndo(project, u, filter) })
				}
			})
		}()
	})
}

// confirmUndo asks yes/no with the plan's description in a scrolled,
// monospace body.
func (w *Workbench) confirmUndo(u *pipeline.UndoPlan, yes func()) {
	body := widget.NewLabelWithStyle(u.Describe(), fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	scroll := container.NewVScroll(body)
	scroll.SetMinSize(fyne.NewSize(560, 220))
	title := "Undo the last change?"
	if len(u.Conflicts()) > 0 {
		title = "Undo the last change? (files changed since are left alone)"
	}
	dialog.ShowCustomConfirm(title, "Undo", "Keep", scroll, func(ok bool) {
		if ok {
			yes()
		}
	}, w.win)
}

// carryOutUndo applies u and shows the re-indexed graph.
func (w *Workbench) carryOutUndo(project Project, u *pipeline.UndoPlan, filter string) {
	store := w.store
	w.setStatus("Undoing " + u.What + "…")
	go func() {
		res, err := pipeline.ApplyUndo(context.Background(), store, u, pipeline.UndoOptions{})
		var prep *prepared
		var nodes int
		if err == nil && len(res.Restored) > 0 {
			g, uerr := project.UpdateFiles(context.Background(), res.Restored)
			if uerr != nil {
				err = fmt.Errorf("files restored, but re-indexing failed: %w", uerr)
			} else {
				prep, nodes = prepareGraph(g, filter), len(g.Nodes())
			}
		}
		w.do(func() {
			if w.project != project {
				return
			}
			if err != nil {
				w.showError("Undo failed", err, "Nothing is lost: every file's content before the undo is kept in History.")
				return
			}
			if prep != nil {
				w.applyGraph(prep)
				w.rebuildView()
			}
			w.panes.refreshHistory()
			msg := fmt.Sprintf("Undone: %d files restored (graph: %d nodes)", len(res.Restored), nodes)
			if res.Commit != "" {
				msg += fmt.Sprintf("; revert commit %.12s", res.Commit)
			}
			if res.Note != "" {
				msg += "; " + res.Note
			}
			w.setStatus(msg)
			w.writeState()
		})
	}()
}
