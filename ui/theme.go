package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// lightTheme is Fyne's default theme fixed to its light variant, matching the
// graph's light canvas and the code pane's light highlighting style.
type lightTheme struct{ fyne.Theme }

func newLightTheme() fyne.Theme { return lightTheme{theme.DefaultTheme()} }

// Color implements fyne.Theme, always asking for the light variant.
func (t lightTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return t.Theme.Color(n, theme.VariantLight)
}
