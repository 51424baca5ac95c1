// Command genicon draws CodeLoom's icon (a small code graph on a rounded
// square) and writes it as PNG to the paths given (default assets/icon.png
// and ui/icon.png, the copy the app embeds).
package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
)

const (
	size = 256 // output pixels
	ss   = 4   // supersampling factor per axis
)

type pt struct{ x, y float64 }

// coverage returns the colour of one (super)sample at p in icon units 0..1.
func sample(p pt) color.NRGBA {
	bg := color.NRGBA{0, 0, 0, 0}
	// rounded square
	r, m := 0.18, 0.04
	qx := math.Max(math.Abs(p.x-0.5)-(0.5-m-r), 0)
	qy := math.Max(math.Abs(p.y-0.5)-(0.5-m-r), 0)
	if math.Hypot(qx, qy) > r {
		return bg
	}
	// vertical gradient, deep blue to teal
	t := p.y
	c := color.NRGBA{uint8(30 + 10*t), uint8(58 + 60*t), uint8(138 - 20*t), 255}
	nodes := []pt{{0.28, 0.30}, {0.72, 0.28}, {0.50, 0.52}, {0.26, 0.74}, {0.74, 0.74}}
	edges := [][2]int{{0, 2}, {1, 2}, {2, 3}, {2, 4}, {0, 1}, {3, 4}}
	for _, e := range edges {
		if segDist(p, nodes[e[0]], nodes[e[1]]) < 0.022 {
			c = color.NRGBA{0xbf, 0xdb, 0xfe, 255}
		}
	}
	for i, n := range nodes {
		d := math.Hypot(p.x-n.x, p.y-n.y)
		rad := 0.085
		if i == 2 {
			rad = 0.11
		}
		if d < rad {
			c = color.NRGBA{0xfb, 0xbf, 0x24, 255}
			if i != 2 {
				c = color.NRGBA{0xf8, 0xfa, 0xfc, 255}
			}
			if d > rad-0.02 {
				c = color.NRGBA{0x0f, 0x17, 0x2a, 255}
			}
		}
	}
	return c
}

func segDist(p, a, b pt) float64 {
	dx, dy := b.x-a.x, b.y-a.y
	t := ((p.x-a.x)*dx + (p.y-a.y)*dy) / (dx*dx + dy*dy)
	t = math.Max(0, math.Min(1, t))
	return math.Hypot(p.x-(a.x+t*dx), p.y-(a.y+t*dy))
}

func main() {
	out := os.Args[1:]
	if len(out) == 0 {
		out = []string{"assets/icon.png", "ui/icon.png"}
	}
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			var r, g, b, a float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					c := sample(pt{(float64(x) + (float64(sx)+0.5)/ss) / size, (float64(y) + (float64(sy)+0.5)/ss) / size})
					al := float64(c.A) / 255
					r += float64(c.R) * al
					g += float64(c.G) * al
					b += float64(c.B) * al
					a += al
				}
			}
			n := float64(ss * ss)
			if a > 0 {
				img.SetNRGBA(x, y, color.NRGBA{uint8(r / a), uint8(g / a), uint8(b / a), uint8(255 * a / n)})
			}
		}
	}
	for _, path := range out {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "genicon:", err)
			os.Exit(1)
		}
		if err := png.Encode(f, img); err != nil {
			fmt.Fprintln(os.Stderr, "genicon:", err)
			os.Exit(1)
		}
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "genicon:", err)
			os.Exit(1)
		}
	}
}
