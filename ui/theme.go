package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/gomonobolditalic"
	"golang.org/x/image/font/gofont/gomonoitalic"
)

// lightTheme is Fyne's default theme fixed to its light variant, matching the
// graph's light canvas and the code pane's light highlighting style. Code is
// drawn in Go Mono: Fyne's bundled monospace font puts the underscore so low
// that a text grid row clips it (`__init__` read as "  init  ").
type lightTheme struct{ fyne.Theme }

func newLightTheme() fyne.Theme { return lightTheme{theme.DefaultTheme()} }

// Color implements fyne.Theme, always asking for the light variant.
func (t lightTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return t.Theme.Color(n, theme.VariantLight)
}

var (
	monoRegular    = fyne.NewStaticResource("GoMono.ttf", gomono.TTF)
	monoBold       = fyne.NewStaticResource("GoMono-Bold.ttf", gomonobold.TTF)
	monoItalic     = fyne.NewStaticResource("GoMono-Italic.ttf", gomonoitalic.TTF)
	monoBoldItalic = fyne.NewStaticResource("GoMono-BoldItalic.ttf", gomonobolditalic.TTF)
)

// Font implements fyne.Theme: Go Mono for monospace text.
func (t lightTheme) Font(s fyne.TextStyle) fyne.Resource {
	if !s.Monospace {
		return t.Theme.Font(s)
	}
	switch {
	case s.Bold && s.Italic:
		return monoBoldItalic
	case s.Bold:
		return monoBold
	case s.Italic:
		return monoItalic
	}
	return monoRegular
}
