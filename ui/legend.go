package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/codegraph"
	"codeloom/graphview"
)

// Colours of run marks and the selection, as the graph draws them.
var (
	legendPassFill = color.NRGBA{0xdc, 0xfc, 0xe7, 0xff}
	legendPassLine = color.NRGBA{0x16, 0xa3, 0x4a, 0xff}
	legendFailFill = color.NRGBA{0xfe, 0xe2, 0xe2, 0xff}
	legendFailLine = color.NRGBA{0xdc, 0x26, 0x26, 0xff}
	legendSelect   = color.NRGBA{0xea, 0x58, 0x0c, 0xff}
)

// escCheck is a check box that passes Esc on (a focused check would
// otherwise swallow it and the Filters pop-up would not close).
type escCheck struct {
	widget.Check
	onEsc func()
}

func newEscCheck(label string, changed func(bool), onEsc func()) *escCheck {
	c := &escCheck{onEsc: onEsc}
	c.Text, c.OnChanged = label, changed
	c.ExtendBaseWidget(c)
	return c
}

// TypedKey implements fyne.Focusable.
func (c *escCheck) TypedKey(ev *fyne.KeyEvent) {
	if ev.Name == fyne.KeyEscape && c.onEsc != nil {
		c.onEsc()
		return
	}
	c.Check.TypedKey(ev)
}

// nodeSwatch is a small box in a node kind's colours.
func nodeSwatch(fill, line color.Color) fyne.CanvasObject {
	sw := canvas.NewRectangle(fill)
	sw.StrokeColor, sw.StrokeWidth, sw.CornerRadius = line, 1.5, 3
	return container.NewGridWrap(fyne.NewSize(22, 14), sw)
}

// edgeSwatch is a short line in an edge kind's colour, dashed for edges
// the graph draws dashed (dispatches, implements).
func edgeSwatch(k codegraph.EdgeKind) fyne.CanvasObject {
	col := graphview.EdgeColor(k)
	var objs []fyne.CanvasObject
	if graphview.Dashed(k) {
		for x := float32(0); x < 22; x += 8 { // 5-point dashes, 3-point gaps, as drawn
			l := canvas.NewLine(col)
			l.StrokeWidth = 2.5
			l.Position1, l.Position2 = fyne.NewPos(x, 9), fyne.NewPos(min(x+5, 22), 9)
			objs = append(objs, l)
		}
	} else {
		l := canvas.NewLine(col)
		l.StrokeWidth = 2.5
		l.Position1, l.Position2 = fyne.NewPos(0, 9), fyne.NewPos(22, 9)
		objs = append(objs, l)
	}
	return container.NewGridWrap(fyne.NewSize(22, 14), container.NewWithoutLayout(objs...))
}

// filtersContent builds the Filters pop-up: a check per node and edge kind
// with its colour (the graph's legend), then the colours of test results
// and the selection. close hides the pop-up (Esc on any check).
func (w *Workbench) filtersContent(close func()) *fyne.Container {
	box := container.NewVBox(widget.NewLabelWithStyle("Nodes (colour legend)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	for _, k := range append(nodeKinds(), graphview.KindFolder) {
		c := newEscCheck(string(k), func(on bool) { w.SetNodeKindVisible(k, on) }, close)
		c.Checked = !w.filter.HideNodes[k]
		fill, line := graphview.NodeColors(graphview.ViewNode{Kind: k})
		box.Add(container.NewBorder(nil, nil, nodeSwatch(fill, line), nil, c))
	}
	box.Add(widget.NewLabelWithStyle("Edges (thicker: more references; dashed: possible targets)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	for _, k := range edgeKinds() {
		c := newEscCheck(string(k), func(on bool) { w.SetEdgeKindVisible(k, on) }, close)
		c.Checked = !w.filter.HideEdges[k]
		box.Add(container.NewBorder(nil, nil, edgeSwatch(k), nil, c))
	}
	box.Add(widget.NewLabelWithStyle("After a test run", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	box.Add(container.NewBorder(nil, nil, nodeSwatch(legendPassFill, legendPassLine), nil, widget.NewLabel("passed (test and its file)")))
	box.Add(container.NewBorder(nil, nil, nodeSwatch(legendFailFill, legendFailLine), nil, widget.NewLabel("failed")))
	sel := canvas.NewRectangle(color.Transparent)
	sel.StrokeColor, sel.StrokeWidth, sel.CornerRadius = legendSelect, 3, 3
	box.Add(container.NewBorder(nil, nil, container.NewGridWrap(fyne.NewSize(22, 14), sel), nil, widget.NewLabel("selected node")))
	box.Add(widget.NewLabel("Esc closes"))
	return box
}

// showFilters shows the Filters pop-up under anchor; Esc closes it, with
// or without a check focused.
func (w *Workbench) showFilters(anchor fyne.CanvasObject) {
	cv := w.win.Canvas()
	var pop *widget.PopUp
	prev := cv.OnTypedKey()
	closePop := func() {
		pop.Hide()
		cv.SetOnTypedKey(prev)
	}
	pop = widget.NewPopUp(w.filtersContent(closePop), cv)
	cv.SetOnTypedKey(func(ev *fyne.KeyEvent) {
		if ev.Name == fyne.KeyEscape && pop.Visible() {
			closePop()
			return
		}
		if prev != nil {
			prev(ev)
		}
	})
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(anchor).Add(fyne.NewPos(0, anchor.Size().Height))
	pop.ShowAtPosition(pos)
	w.filtersPop = pop
}
