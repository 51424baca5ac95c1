package graphview

import (
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/software"
)

// ---- PNG export ---------------------------------------------------------------

// exportMargin is the blank border around an exported drawing.
const exportMargin = 16

// maxExportPixels bounds an exported image's longer side.
const maxExportPixels = 8000

// RenderImage draws the whole current view off screen, exactly as the
// widget draws it (clusters, node borders and colours, test marks, curved
// and dashed edges with arrowheads, reference counts, the selection), at
// zoom scale (lowered so the longer side stays within 8,000 px). It returns
// nil before the first layout. Call it on the UI goroutine.
func (g *GraphView) RenderImage(scale float32) image.Image {
	if g.lay == nil || g.view == nil {
		return nil
	}
	w, h := float32(g.lay.Width), float32(g.lay.Height)
	if longest := max(w, h) * scale; longest > maxExportPixels {
		scale *= maxExportPixels / longest
	}
	c := &GraphView{layouter: g.layouter, view: g.view, lay: g.lay, marks: g.marks, NodeColor: g.NodeColor,
		selected: g.selected, scale: scale, fitted: true,
		offset: fyne.NewPos(exportMargin, exportMargin)}
	c.ExtendBaseWidget(c)
	cv := software.NewCanvas()
	cv.SetPadded(false)
	cv.SetContent(c)
	cv.Resize(fyne.NewSize(w*scale+2*exportMargin, h*scale+2*exportMargin))
	return cv.Capture()
}
