package graphview

import (
	"image"
	"image/color"
	"testing"

	"fyne.io/fyne/v2"
)

func closeTo(a uint32, b uint8) bool {
	d := int(a>>8) - int(b)
	return d > -14 && d < 14
}

// closerTo reports whether c is a stroke of colour a over fill b: clearly
// darker than the fill (a 1.2-point border is anti-aliased, not pure a)
// and nearer a's hue than white.
func closerTo(c color.Color, a, b color.NRGBA) bool {
	r, g, bl, _ := c.RGBA()
	sum := int(r>>8) + int(g>>8) + int(bl>>8)
	return sum < int(b.R)+int(b.G)+int(b.B)-60 && sum > int(a.R)+int(a.G)+int(a.B)-60
}

func pixelIs(img image.Image, x, y int, c color.NRGBA) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	return closeTo(r, c.R) && closeTo(g, c.G) && closeTo(b, c.B)
}

func TestRenderImageDrawsWholeViewAsTheScreen(t *testing.T) {
	g, w := shownView(t)
	w.Resize(fyne.NewSize(160, 140)) // smaller than the drawing: the export is not clipped to it
	lay, v := g.CurrentLayout(), g.View()
	var failed string
	for id := range lay.Nodes {
		if failed == "" || id < failed {
			failed = id
		}
	}
	g.SetMarks(map[string]Mark{failed: MarkFail})
	img := g.RenderImage(1)
	if img == nil {
		t.Fatal("no image")
	}
	b := img.Bounds()
	if b.Dx() < int(lay.Width) || b.Dy() < int(lay.Height) {
		t.Fatalf("image %v smaller than the layout %.0f×%.0f", b, lay.Width, lay.Height)
	}
	// Each node: its fill inside (red for the failed test), its outline on the left edge.
	for id, nb := range lay.Nodes {
		fill, line := NodeColors(mustNode(v, id))
		if id == failed {
			fill, line = color.NRGBA{0xfe, 0xe2, 0xe2, 0xff}, color.NRGBA{0xdc, 0x26, 0x26, 0xff}
		}
		x, y := int(nb.X-nb.W/2+4)+exportMargin, int(nb.Y+nb.H/2-3)+exportMargin
		if !pixelIs(img, x, y, fill) {
			t.Errorf("node %s inside at %d,%d is %v, want fill %v", id, x, y, img.At(x, y), fill)
		}
		bx := int(nb.X-nb.W/2) + exportMargin
		found := false
		by := int(nb.Y-nb.H/2) + exportMargin
		for d := -2; d <= 2; d++ { // left edge or top edge (an edge may arrive on one)
			found = found || closerTo(img.At(bx+d, int(nb.Y)+exportMargin), line, fill) ||
				closerTo(img.At(int(nb.X+nb.W/4)+exportMargin, by+d), line, fill)
		}
		if !found {
			var px []color.Color
			for d := -3; d <= 3; d++ {
				px = append(px, img.At(bx+d, int(nb.Y)+exportMargin))
			}
			t.Errorf("node %s (%v) has no %v border at x=%d: %v", id, nb, line, bx, px)
		}
	}
	// Edges are thin strokes in their colour, not filled wedges.
	counts := map[color.NRGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			for _, e := range v.Edges {
				if c := EdgeColor(e.Kind); pixelIs(img, x, y, c) {
					counts[c]++
				}
			}
		}
	}
	for _, e := range v.Edges {
		n := counts[EdgeColor(e.Kind)]
		if n == 0 {
			t.Errorf("no pixel of the %s edges", e.Kind)
		}
		if n > b.Dx()*b.Dy()/8 {
			t.Errorf("%s edges cover %d of %d pixels: filled, not stroked", e.Kind, n, b.Dx()*b.Dy())
		}
	}
	// Clusters are framed.
	if len(lay.Clusters) == 0 {
		t.Log("no cluster in this view")
	}
}
