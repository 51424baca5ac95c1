package ui

import (
	"context"
	"image"
	"image/draw"
	"image/png"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/codegraph"
)

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
