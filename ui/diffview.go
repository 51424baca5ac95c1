package ui

import (
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// Colours of diff lines in dialogs.
var (
	diffAddFG  = color.NRGBA{0x11, 0x6b, 0x2f, 0xff}
	diffAddBG  = color.NRGBA{0xdc, 0xfc, 0xe7, 0xff}
	diffDelFG  = color.NRGBA{0xb9, 0x1c, 0x1c, 0xff}
	diffDelBG  = color.NRGBA{0xfe, 0xe2, 0xe2, 0xff}
	diffHunkFG = color.NRGBA{0x1d, 0x4e, 0xd8, 0xff}
)

// looksLikeDiff reports whether s holds a unified diff.
func looksLikeDiff(s string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "@@ ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "--- ") {
			return true
		}
	}
	return false
}

// diffLineKind classifies a line of text holding a diff: "add", "del",
// "hunk", "file" or "" (context or prose). inDiff tells whether a file
// header was seen (before it, "-" starts a list item, not a removal).
func diffLineKind(l string, inDiff bool) string {
	switch {
	case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "diff --git "):
		return "file"
	case strings.HasPrefix(l, "@@"):
		return "hunk"
	case !inDiff:
		return ""
	case strings.HasPrefix(l, "+"):
		return "add"
	case strings.HasPrefix(l, "-"):
		return "del"
	}
	return ""
}

// diffRows renders text holding diffs as text grid rows: added lines green,
// removed lines red, hunk headers blue, file headers bold, all monospace.
func diffRows(text string) []widget.TextGridRow {
	mono := fyne.TextStyle{Monospace: true}
	styles := map[string]*widget.CustomTextGridStyle{
		"":     {TextStyle: mono},
		"add":  {FGColor: diffAddFG, BGColor: diffAddBG, TextStyle: mono},
		"del":  {FGColor: diffDelFG, BGColor: diffDelBG, TextStyle: mono},
		"hunk": {FGColor: diffHunkFG, TextStyle: mono},
		"file": {TextStyle: fyne.TextStyle{Monospace: true, Bold: true}},
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	rows := make([]widget.TextGridRow, len(lines))
	inDiff := false
	for i, l := range lines {
		kind := diffLineKind(l, inDiff)
		if kind == "file" || kind == "hunk" {
			inDiff = true
		} else if l != "" && kind == "" && !strings.HasPrefix(l, " ") && inDiff {
			inDiff = false // prose after the diff
		}
		st := styles[kind]
		l = expand([]rune(l), 0)
		cells := make([]widget.TextGridCell, 0, len(l))
		for _, r := range l {
			cells = append(cells, widget.TextGridCell{Rune: r, Style: st})
		}
		rows[i] = widget.TextGridRow{Cells: cells}
		if kind == "add" || kind == "del" {
			rows[i].Style = st
		}
	}
	return rows
}

// questionBody is the body of a yes/no dialog: a coloured monospace diff
// view when detail holds a diff, else wrapped text.
func questionBody(detail string) (fyne.CanvasObject, bool) {
	if !looksLikeDiff(detail) {
		l := widget.NewLabel(detail)
		l.Wrapping = fyne.TextWrapWord
		return container.NewVScroll(l), false
	}
	g := widget.NewTextGrid()
	g.Rows = diffRows(detail)
	g.Scroll = fyne.ScrollBoth
	return g, true
}
