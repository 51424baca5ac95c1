package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"fyne.io/fyne/v2/dialog"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/graphview"
)

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
	w.openCodeNoting(n, "")
}

// openCodeNoting is openCode leaving note in the status bar instead of
// the node's line, also when a long file's code arrives later (a notice
// such as "files changed on disk" was replaced by it a moment after it
// showed).
func (w *Workbench) openCodeNoting(n *codegraph.Node, note string) {
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
	if note != "" {
		status = note
	}
	if len(data) <= syncCodeBytes {
		w.code.ShowFile(n.Path, string(data), n.ID, firstNonEmpty(n.QualName, n.Name), start, end)
		w.setStatus(status)
		return
	}
	// A long file is highlighted off the UI goroutine (chroma took seconds).
	gen, text := w.codeGen, string(data)
	if note == "" {
		w.setStatus("Highlighting " + n.Path + "…")
	} else {
		w.setStatus(note)
	}
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
			w.refreshReferences(nodeID)
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
