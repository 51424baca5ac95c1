package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/codegraph"
	"codeloom/graphview"
)

// swatchLines returns the line segments of an edge swatch row.
func swatchLines(row fyne.CanvasObject) []*canvas.Line {
	var out []*canvas.Line
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *canvas.Line:
			out = append(out, x)
		case *fyne.Container:
			for _, k := range x.Objects {
				walk(k)
			}
		}
	}
	walk(row)
	return out
}

func TestLegendShowsDashedEdgesAndEscCloses(t *testing.T) {
	w, project := newTestWorkbench(t, Options{})
	openSample(t, w, project)
	box := w.filtersContent(func() {})
	rows := map[string]fyne.CanvasObject{}
	for _, o := range box.Objects {
		if c, ok := o.(*fyne.Container); ok {
			for _, k := range c.Objects {
				if ch, ok := k.(*escCheck); ok {
					rows[ch.Text] = c
				}
			}
		}
	}
	for _, k := range edgeKinds() {
		lines := swatchLines(rows[string(k)])
		if len(lines) == 0 {
			t.Fatalf("no swatch for edge kind %s", k)
		}
		if lines[0].StrokeColor != graphview.EdgeColor(k) {
			t.Errorf("%s swatch colour %v, the graph draws %v", k, lines[0].StrokeColor, graphview.EdgeColor(k))
		}
		if dashed := len(lines) > 1; dashed != graphview.Dashed(k) {
			t.Errorf("%s swatch dashed=%v, the graph draws dashed=%v", k, dashed, graphview.Dashed(k))
		}
	}
	if rows[string(codegraph.EdgeDispatches)] == nil || rows[string(codegraph.EdgeImplements)] == nil {
		t.Fatal("dispatches/implements missing from the legend")
	}
	// Esc closes the pop-up, also after a check took the focus.
	anchor := widget.NewButton("Filters", nil)
	w.win.SetContent(container.NewVBox(anchor, w.win.Content()))
	w.showFilters(anchor)
	if !w.filtersPop.Visible() {
		t.Fatal("filters not shown")
	}
	var check *escCheck
	for _, o := range w.filtersPop.Content.(*fyne.Container).Objects {
		if c, ok := o.(*fyne.Container); ok {
			for _, k := range c.Objects {
				if ch, ok := k.(*escCheck); ok && check == nil {
					check = ch
				}
			}
		}
	}
	test.Tap(check) // toggles and focuses it
	w.win.Canvas().Focus(check)
	if w.win.Canvas().Focused() != check {
		t.Fatalf("focus on %T", w.win.Canvas().Focused())
	}
	test.Tap(check) // back as it was
	w.win.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if w.filtersPop.Visible() {
		t.Error("Esc with a check focused does not close Filters")
	}
	// And with nothing focused: the canvas gets the key.
	w.showFilters(anchor)
	w.win.Canvas().Unfocus()
	w.win.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if w.filtersPop.Visible() {
		t.Error("Esc does not close Filters")
	}
}
