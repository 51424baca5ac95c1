package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"codeloom/graphview"
)

// refsPanel lists the references of the selected symbol (callers, callees,
// implementations with file:line); clicking one shows its code.
type refsPanel struct {
	w     *Workbench
	title *widget.Label
	list  *widget.List
	refs  []graphview.Reference
	gen   int // bumped by every show and clear: a late result is dropped
	root  fyne.CanvasObject
	// find lists a node's references (graphview.References; tests delay it).
	find func(ix *graphview.Index, id string) []graphview.Reference
}

func newRefsPanel(w *Workbench) *refsPanel {
	r := &refsPanel{w: w, find: graphview.References}
	r.title = widget.NewLabelWithStyle("References", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	r.title.Truncation = fyne.TextTruncateEllipsis
	r.list = widget.NewList(
		func() int { return len(r.refs) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("template reference line")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(r.refs) {
				o.(*widget.Label).SetText(refLine(r.refs[i]))
			}
		},
	)
	r.list.OnSelected = func(i widget.ListItemID) {
		if i < len(r.refs) {
			r.w.selectNode(r.refs[i].ID, true)
		}
		r.list.UnselectAll()
	}
	r.root = container.NewBorder(r.title, nil, nil, nil, r.list)
	return r
}

// refLine is one line of the panel: "← caller  name  path:line".
func refLine(ref graphview.Reference) string {
	arrow := map[string]string{"caller": "← ", "callee": "→ ", "implementation": "⇠ "}[ref.Relation]
	kind := ""
	if ref.Kind != "" && ref.Kind != "calls" {
		kind = " [" + string(ref.Kind) + "]"
	}
	return fmt.Sprintf("%s%s%s  %s:%d", arrow, ref.Name, kind, ref.Path, ref.Line)
}

// refreshReferences lists id's references again from the current graph
// after the graph changed under the selection (a save, files changed on
// disk): a new caller or callee shows at once, and a node that is gone
// leaves the panel empty rather than listing the old graph's references.
// An empty id (nothing selected) leaves the panel as it is.
func (w *Workbench) refreshReferences(id string) {
	if id != "" {
		w.refs.show(w.index, id)
	}
}

// clear empties the panel (another project was opened, or the node it
// listed is gone).
func (r *refsPanel) clear() {
	if r == nil {
		return
	}
	r.gen++
	r.refs = nil
	r.title.SetText("References")
	r.list.Refresh()
}

// show lists the references of node id. They are found off the UI
// goroutine (a node of a large project has tens of thousands: 0.1–0.4 s);
// a result that arrives after another selection is dropped. A node ix does
// not hold empties the panel (it is gone from the graph).
func (r *refsPanel) show(ix *graphview.Index, id string) {
	if r == nil || ix == nil {
		return
	}
	n, ok := ix.Node(id)
	if !ok {
		r.clear()
		return
	}
	r.gen++
	gen := r.gen
	r.refs = nil
	r.title.SetText(n.Name + ": finding references…")
	r.list.Refresh()
	go func() {
		refs := r.find(ix, id)
		counts := map[string]int{}
		for _, ref := range refs {
			counts[ref.Relation]++
		}
		title := fmt.Sprintf("%s: %d callers · %d callees · %d implementations", n.Name, counts["caller"], counts["callee"], counts["implementation"])
		r.w.do(func() {
			if r.gen != gen {
				return
			}
			r.refs = refs
			r.title.SetText(title)
			r.list.Refresh()
			r.list.ScrollToTop()
			r.w.writeState()
		})
	}()
}

// References returns the references listed now (tests).
func (w *Workbench) References() []graphview.Reference { return w.refs.refs }
