package ui

import (
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// highlightStyle is the chroma style of the code pane (light background).
const highlightStyle = "github"

// markBackground is the background of the selected node's lines.
var markBackground = color.NRGBA{0xff, 0xf7, 0xd6, 0xff}

// HighlightRows turns source text into styled TextGrid rows using chroma's
// lexer for filename (plain text when none matches). Lines from markStart to
// markEnd (1-based, inclusive; 0 for none) get a highlighted background.
func HighlightRows(filename, src string, markStart, markEnd int) []widget.TextGridRow {
	lexer := lexers.Match(filename)
	if lexer == nil {
		lexer = lexers.Fallback
	}
	lexer = chroma.Coalesce(lexer)
	style := styles.Get(highlightStyle)
	if style == nil {
		style = styles.Fallback
	}
	src = strings.ReplaceAll(src, "\r\n", "\n")
	rows := []widget.TextGridRow{{}}
	styleCache := map[chroma.TokenType]*widget.CustomTextGridStyle{}
	styleFor := func(tt chroma.TokenType) *widget.CustomTextGridStyle {
		if s, ok := styleCache[tt]; ok {
			return s
		}
		e := style.Get(tt)
		s := &widget.CustomTextGridStyle{}
		if e.Colour.IsSet() {
			s.FGColor = color.NRGBA{e.Colour.Red(), e.Colour.Green(), e.Colour.Blue(), 0xff}
		}
		s.TextStyle = fyne.TextStyle{Monospace: true, Bold: e.Bold == chroma.Yes, Italic: e.Italic == chroma.Yes}
		styleCache[tt] = s
		return s
	}
	add := func(text string, st *widget.CustomTextGridStyle) {
		for _, r := range text {
			if r == '\n' {
				rows = append(rows, widget.TextGridRow{})
				continue
			}
			if r == '\t' {
				for i := 0; i < 4; i++ {
					rows[len(rows)-1].Cells = append(rows[len(rows)-1].Cells, widget.TextGridCell{Rune: ' ', Style: st})
				}
				continue
			}
			rows[len(rows)-1].Cells = append(rows[len(rows)-1].Cells, widget.TextGridCell{Rune: r, Style: st})
		}
	}
	it, err := lexer.Tokenise(nil, src)
	if err != nil {
		add(src, styleFor(chroma.Text))
	} else {
		for tok := it(); tok != chroma.EOF; tok = it() {
			add(tok.Value, styleFor(tok.Type))
		}
	}
	// chroma ends the text with a newline; drop the empty last row it makes.
	if len(rows) > 1 && len(rows[len(rows)-1].Cells) == 0 && !strings.HasSuffix(src, "\n\n") {
		rows = rows[:len(rows)-1]
	}
	if markStart > 0 {
		mark := &widget.CustomTextGridStyle{BGColor: markBackground}
		for i := markStart - 1; i < markEnd && i < len(rows); i++ {
			rows[i].Style = mark
		}
	}
	return rows
}
