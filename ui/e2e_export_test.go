package ui

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkPNGExport drives Export → PNG… and the save dialog (the file name
// typed, Return saves into home), then compares the written PNG with a
// screenshot of the graph on screen: every colour that covers ≥ 2 % of the
// graph on screen (background, cluster boxes, node fills) must be in the
// export, and the export must draw edges and text (dark and edge-coloured
// pixels), not a blank or clipped canvas.
func checkPNGExport(t *testing.T, app *e2eApp, s AutomationState, home string) {
	t.Helper()
	b := s.ExportBtn
	if b.W == 0 {
		t.Fatal("the automation file does not report the Export button")
	}
	app.clickAt(b.X+b.W/2, b.Y+b.H/2, false)
	time.Sleep(800 * time.Millisecond)
	app.clickAt(b.X+b.W/2, b.Y+b.H+57, false) // "PNG…", the menu's second item
	time.Sleep(2 * time.Second)               // the save dialog, its name field focused
	app.x("key", "ctrl+a")
	app.x("type", "--delay", "15", "e2e-export.png")
	app.x("key", "Return")
	want := filepath.Join(home, "e2e-export.png")
	app.waitState("the PNG export", 30*time.Second, func(s AutomationState) bool {
		return strings.HasPrefix(s.Status, "Exported ") && strings.HasSuffix(s.Status, "e2e-export.png")
	})
	exported := decodePNG(t, want)
	if b, err := os.ReadFile(want); err == nil { // kept beside the screenshots to look at
		os.WriteFile(filepath.Join(app.out, "e2e-5-export.png"), b, 0o644)
	}
	app.shot("e2e-5-export-screen.png")
	screen := decodePNG(t, filepath.Join(app.out, "e2e-5-export-screen.png"))
	g := s.Graph
	area := image.Rect(int(g.X)+2, int(g.Y)+2, int(g.X+g.W)-2, int(g.Y+g.H)-2).Intersect(screen.Bounds())
	onScreen := colourShares(screen, area)
	inExport := colourShares(exported, exported.Bounds())
	for c, share := range onScreen {
		if share >= 0.02 && inExport[c] < 0.0005 {
			t.Errorf("colour %06x covers %.1f %% of the graph on screen, %.3f %% of the export", c, 100*share, 100*inExport[c])
		}
	}
	dark := 0.0
	for c, share := range inExport {
		if r, gr, bl := c>>16&0xff, c>>8&0xff, c&0xff; r+gr+bl < 3*0x80 {
			dark += share
		}
	}
	if dark < 0.002 {
		t.Errorf("the export has %.3f %% dark pixels: no text or edges drawn", 100*dark)
	}
	if eb := exported.Bounds(); eb.Dx() < 200 || eb.Dy() < 100 {
		t.Errorf("the export is %v", eb)
	}
}

// decodePNG reads a PNG file.
func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return img
}

// colourShares is the share of the pixels of r in img of each colour,
// rounded to 5 bits a channel (the screen and the export are rasterised by
// different painters, so anti-aliasing differs; flat fills do not).
func colourShares(img image.Image, r image.Rectangle) map[uint32]float64 {
	counts := map[uint32]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			counts[(cr>>11)<<19|(cg>>11)<<11|(cb>>11)<<3]++ // 5 bits a channel, as 0xRRGGBB
		}
	}
	total := float64(r.Dx() * r.Dy())
	out := make(map[uint32]float64, len(counts))
	for c, n := range counts {
		out[c] = float64(n) / total
	}
	return out
}
