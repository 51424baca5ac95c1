package ui

import (
	"image/color"
	"path"
	"strings"
	"sync"

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

// spanStyle is how a run of code is drawn.
type spanStyle struct {
	fg           color.Color // nil: the theme's foreground
	bold, italic bool
}

// span styles runes start..end (exclusive) of one line.
type span struct {
	start, end int
	st         *spanStyle
}

// highlighter turns code into styled spans with chroma. It caches the
// lexer per file type and the style per token type; it is safe for
// concurrent use (highlighting runs off the UI goroutine).
type highlighter struct {
	mu     sync.Mutex
	lexers map[string]chroma.Lexer
	styles map[chroma.TokenType]*spanStyle
	style  *chroma.Style
}

func newHighlighter() *highlighter {
	st := styles.Get(highlightStyle)
	if st == nil {
		st = styles.Fallback
	}
	return &highlighter{lexers: map[string]chroma.Lexer{}, styles: map[chroma.TokenType]*spanStyle{}, style: st}
}

// lexerFor returns the (coalescing) lexer for filename, cached by extension.
func (h *highlighter) lexerFor(filename string) chroma.Lexer {
	key := strings.ToLower(path.Ext(filename))
	if key == "" {
		key = path.Base(filename)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if l, ok := h.lexers[key]; ok {
		return l
	}
	l := lexers.Match(filename)
	if l == nil {
		l = lexers.Fallback
	}
	l = chroma.Coalesce(l)
	h.lexers[key] = l
	return l
}

func (h *highlighter) styleFor(tt chroma.TokenType) *spanStyle {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.styles[tt]; ok {
		return s
	}
	e := h.style.Get(tt)
	s := &spanStyle{bold: e.Bold == chroma.Yes, italic: e.Italic == chroma.Yes}
	if e.Colour.IsSet() {
		s.fg = color.NRGBA{e.Colour.Red(), e.Colour.Green(), e.Colour.Blue(), 0xff}
	}
	h.styles[tt] = s
	return s
}

// spans highlights src (the text of filename) and returns each line's
// styled runs; lines of plain text get none. Safe on any goroutine.
func (h *highlighter) spans(filename, src string) [][]span { return h.spansUntil(filename, src, nil) }

// spansUntil is spans that gives up (returning nil) once stop reports true;
// stop is asked every 512 tokens (a long file takes seconds).
func (h *highlighter) spansUntil(filename, src string, stop func() bool) [][]span {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	out := make([][]span, strings.Count(src, "\n")+1)
	it, err := h.lexerFor(filename).Tokenise(nil, src)
	if err != nil {
		return out
	}
	row, col, n := 0, 0, 0
	for tok := it(); tok != chroma.EOF; tok = it() {
		if n++; stop != nil && n%512 == 0 && stop() {
			return nil
		}
		st := h.styleFor(tok.Type)
		plain := st.fg == nil && !st.bold && !st.italic
		v := tok.Value
		for v != "" && row < len(out) {
			part, rest, nl := strings.Cut(v, "\n")
			k := len([]rune(part))
			if k > 0 && !plain {
				out[row] = append(out[row], span{start: col, end: col + k, st: st})
			}
			col += k
			if !nl {
				break
			}
			row, col, v = row+1, 0, rest
		}
	}
	return out
}

// HighlightRows turns source text into styled TextGrid rows using chroma's
// lexer for filename (plain text when none matches). Lines from markStart to
// markEnd (1-based, inclusive; 0 for none) get a highlighted background.
func HighlightRows(filename, src string, markStart, markEnd int) []widget.TextGridRow {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	lines := strings.Split(src, "\n")
	spans := newHighlighter().spans(filename, src)
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	rows := make([]widget.TextGridRow, len(lines))
	for i, l := range lines {
		rs := []rune(l)
		cells := make([]widget.TextGridCell, 0, len(rs))
		for j, r := range rs {
			st := &widget.CustomTextGridStyle{TextStyle: fyne.TextStyle{Monospace: true}}
			for _, s := range spans[i] {
				if j >= s.start && j < s.end {
					st.FGColor = s.st.fg
					st.TextStyle.Bold, st.TextStyle.Italic = s.st.bold, s.st.italic
				}
			}
			if r == '\t' {
				for k := 0; k < tabStop; k++ {
					cells = append(cells, widget.TextGridCell{Rune: ' ', Style: st})
				}
				continue
			}
			cells = append(cells, widget.TextGridCell{Rune: r, Style: st})
		}
		rows[i].Cells = cells
		if markStart > 0 && i >= markStart-1 && i < markEnd {
			rows[i].Style = &widget.CustomTextGridStyle{BGColor: markBackground}
		}
	}
	return rows
}
