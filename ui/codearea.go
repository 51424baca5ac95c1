package ui

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Colours of the code area.
var (
	gutterBackground = color.NRGBA{0xf1, 0xf5, 0xf9, 0xff}
	gutterText       = color.NRGBA{0x94, 0xa3, 0xb8, 0xff}
	selectBackground = color.NRGBA{0xbf, 0xdb, 0xfe, 0xff}
	cursorColor      = color.NRGBA{0x1e, 0x29, 0x3b, 0xff}
)

// codePad is the space left of the text and above the first line.
const codePad = 6

// codeArea shows and edits code with syntax highlighting and line
// numbers in both modes. It only creates drawing objects for the lines
// inside its scroll container's viewport, so a 4,000-line file costs what
// its 40 visible lines cost. Highlighting arrives later (setSpans) and is
// drawn over the plain text it replaces.
type codeArea struct {
	widget.BaseWidget

	buf      *codeBuf
	spans    [][]span // per line; may lag behind edits (then only colours are off)
	readOnly bool
	mark     [2]int // 1-based lines of the marked node (0: none)
	scroll   *container.Scroll
	focused  bool
	shift    bool
	pressAt  textPos
	maxCols  int // longest line in display columns (for MinSize)

	onChanged func()                    // after each edit
	onSave    func()                    // Ctrl+S
	onKey     func(*fyne.KeyEvent) bool // keys the pane handles first (nil: none)
}

func newCodeArea() *codeArea {
	a := &codeArea{buf: newCodeBuf(""), readOnly: true}
	a.ExtendBaseWidget(a)
	return a
}

// setText shows text (dropping the old highlighting and undo history).
func (a *codeArea) setText(text string) {
	a.buf.setText(text)
	a.spans = nil
	a.measure()
	a.Refresh()
}

// setSpans sets the highlighting of the text's lines.
func (a *codeArea) setSpans(s [][]span) {
	a.spans = s
	a.Refresh()
}

func (a *codeArea) measure() {
	a.maxCols = 0
	for _, l := range a.buf.lines {
		a.maxCols = max(a.maxCols, displayCol(l, len(l)))
	}
}

// cellSize is the size of one character cell; lineHeight adds 2 px between lines.
func (a *codeArea) cellSize() fyne.Size {
	s := fyne.MeasureText("M", a.textSize(), fyne.TextStyle{Monospace: true})
	return fyne.NewSize(s.Width, float32(math.Ceil(float64(s.Height))))
}

func (a *codeArea) lineHeight() float32 { return a.cellSize().Height + 2 }

// textSize is the code's font size: 2 px under the theme's text, so 100
// columns fit beside a usable graph.
func (a *codeArea) textSize() float32 { return theme.TextSize() - 2 }

// codePaneWidth is the width the code pane needs to show cols columns of a
// file of up to 9,999 lines (gutter, padding and scroll bar included).
func codePaneWidth(cols int) float32 {
	a := &codeArea{buf: newCodeBuf(strings.Repeat("\n", 999))}
	return a.gutterWidth() + codePad + float32(cols+2)*a.cellSize().Width + theme.ScrollBarSize() + 2*theme.Padding()
}

// codeSplitOffset is the graph/code split's offset that leaves the code
// pane codePaneWidth(100) in a window area total px wide (the window's
// padding and the split's divider taken off), as long as the graph keeps
// at least minGraphShare of it: with the file tree hidden (the default) the
// default 1,360-px window shows 100 columns beside a graph of ~540 px.
func codeSplitOffset(total float32) float64 {
	avail := total - 4*theme.Padding()
	if avail <= 0 {
		return 0.5
	}
	return float64(max(minGraphShare, min(0.7, 1-codePaneWidth(100)/avail)))
}

// minGraphShare is the least share of the graph/code split the graph gets
// by default.
const minGraphShare = 0.35

// gutterWidth is the width of the line-number column.
func (a *codeArea) gutterWidth() float32 {
	digits := len(fmt.Sprint(len(a.buf.lines)))
	return float32(max(3, digits)+1)*a.cellSize().Width + codePad
}

// MinSize implements fyne.Widget: the whole text (the scroll container
// shows part of it).
func (a *codeArea) MinSize() fyne.Size {
	c := a.cellSize()
	return fyne.NewSize(a.gutterWidth()+codePad+float32(a.maxCols+2)*c.Width,
		float32(len(a.buf.lines))*a.lineHeight()+2*codePad)
}

// posAt is the text position under p (widget coordinates).
func (a *codeArea) posAt(p fyne.Position) textPos {
	c := a.cellSize()
	row := int((p.Y - codePad) / a.lineHeight())
	row = max(0, min(row, len(a.buf.lines)-1))
	x := int(math.Round(float64((p.X - a.gutterWidth() - codePad) / c.Width)))
	return textPos{row, runeCol(a.buf.lines[row], max(0, x))}
}

// rowY is the top of line row (widget coordinates).
func (a *codeArea) rowY(row int) float32 { return codePad + float32(row)*a.lineHeight() }

// viewport is the visible part of the area (widget coordinates).
func (a *codeArea) viewport() (fyne.Position, fyne.Size) {
	if a.scroll == nil {
		return fyne.Position{}, a.Size()
	}
	return a.scroll.Offset, a.scroll.Size()
}

// scrollToRow scrolls so line row is near the top (3 lines of context).
func (a *codeArea) scrollToRow(row int) {
	if a.scroll == nil {
		return
	}
	a.scroll.Content.Resize(a.MinSize().Max(a.scroll.Size()))
	y := max(0, a.rowY(row-3)-codePad)
	a.scroll.ScrollToOffset(fyne.NewPos(0, y))
	a.Refresh()
}

// ensureCursorVisible scrolls the least needed to show the cursor.
func (a *codeArea) ensureCursorVisible() {
	if a.scroll == nil {
		return
	}
	off, size := a.viewport()
	c := a.cellSize()
	y, h := a.rowY(a.buf.cur.row), a.lineHeight()
	x := a.gutterWidth() + codePad + float32(displayCol(a.buf.lines[a.buf.cur.row], a.buf.cur.col))*c.Width
	nx, ny := off.X, off.Y
	if y < off.Y {
		ny = y - codePad
	} else if y+h > off.Y+size.Height {
		ny = y + h - size.Height + codePad
	}
	if x < off.X+a.gutterWidth() {
		nx = max(0, x-a.gutterWidth()-4*c.Width)
	} else if x+c.Width > off.X+size.Width {
		nx = x + 4*c.Width - size.Width
	}
	if nx != off.X || ny != off.Y {
		a.scroll.Content.Resize(a.MinSize().Max(a.scroll.Size()))
		a.scroll.ScrollToOffset(fyne.NewPos(max(0, nx), max(0, ny)))
	}
}

// ---- input ------------------------------------------------------------------

func (a *codeArea) requestFocus() {
	if c := fyne.CurrentApp().Driver().CanvasForObject(a); c != nil {
		c.Focus(a)
	}
}

// Tapped implements fyne.Tappable: puts the cursor under the pointer.
func (a *codeArea) Tapped(ev *fyne.PointEvent) {
	a.requestFocus()
	a.buf.moveTo(a.posAt(ev.Position), a.shift)
	a.Refresh()
}

// DoubleTapped implements fyne.DoubleTappable: selects the word.
func (a *codeArea) DoubleTapped(ev *fyne.PointEvent) {
	a.buf.selectWord(a.posAt(ev.Position))
	a.Refresh()
}

// MouseDown implements desktop.Mouseable: where a drag selection starts.
func (a *codeArea) MouseDown(ev *desktop.MouseEvent) {
	a.pressAt = a.posAt(ev.Position)
}

// MouseUp implements desktop.Mouseable.
func (a *codeArea) MouseUp(*desktop.MouseEvent) {}

// Dragged implements fyne.Draggable: selects from the press to the pointer.
func (a *codeArea) Dragged(ev *fyne.DragEvent) {
	a.buf.anchor = a.pressAt
	a.buf.cur = a.buf.clamp(a.posAt(ev.Position))
	a.ensureCursorVisible()
	a.Refresh()
}

// DragEnd implements fyne.Draggable.
func (a *codeArea) DragEnd() {}

// FocusGained implements fyne.Focusable.
func (a *codeArea) FocusGained() { a.focused = true; a.Refresh() }

// FocusLost implements fyne.Focusable.
func (a *codeArea) FocusLost() { a.focused = false; a.Refresh() }

// AcceptsTab implements fyne.Tabbable: Tab indents while editing.
func (a *codeArea) AcceptsTab() bool { return !a.readOnly }

// KeyDown implements desktop.Keyable (Shift extends the selection).
func (a *codeArea) KeyDown(ev *fyne.KeyEvent) {
	if ev.Name == desktop.KeyShiftLeft || ev.Name == desktop.KeyShiftRight {
		a.shift = true
	}
}

// KeyUp implements desktop.Keyable.
func (a *codeArea) KeyUp(ev *fyne.KeyEvent) {
	if ev.Name == desktop.KeyShiftLeft || ev.Name == desktop.KeyShiftRight {
		a.shift = false
	}
}

// TypedRune implements fyne.Focusable.
func (a *codeArea) TypedRune(r rune) {
	if a.readOnly {
		return
	}
	a.buf.insert(string(r), "type")
	a.edited()
}

// TypedKey implements fyne.Focusable.
func (a *codeArea) TypedKey(ev *fyne.KeyEvent) {
	if a.onKey != nil && a.onKey(ev) {
		return
	}
	_, size := a.viewport()
	page := max(1, int(size.Height/a.lineHeight())-2)
	nav := map[fyne.KeyName]string{fyne.KeyLeft: "left", fyne.KeyRight: "right", fyne.KeyUp: "up", fyne.KeyDown: "down",
		fyne.KeyHome: "home", fyne.KeyEnd: "end", fyne.KeyPageUp: "pageup", fyne.KeyPageDown: "pagedown"}
	if k, ok := nav[ev.Name]; ok {
		a.buf.move(k, a.shift, page)
		a.ensureCursorVisible()
		a.Refresh()
		return
	}
	if a.readOnly {
		return
	}
	switch ev.Name {
	case fyne.KeyBackspace:
		a.buf.backspace()
	case fyne.KeyDelete:
		a.buf.deleteForward()
	case fyne.KeyReturn, fyne.KeyEnter:
		a.buf.newline()
	case fyne.KeyTab:
		a.buf.insert(a.buf.indentUnit(), "type")
	default:
		return
	}
	a.edited()
}

// TypedShortcut implements fyne.Shortcutable: copy, cut, paste, select
// all, undo, Ctrl+S; others go to the window (Ctrl+F…).
func (a *codeArea) TypedShortcut(s fyne.Shortcut) {
	switch sc := s.(type) {
	case *fyne.ShortcutCopy:
		if t := a.buf.selectedText(); t != "" && sc.Clipboard != nil {
			sc.Clipboard.SetContent(t)
		}
		return
	case *fyne.ShortcutSelectAll:
		a.buf.selectAll()
		a.Refresh()
		return
	case *fyne.ShortcutCut:
		if a.readOnly || !a.buf.hasSelection() {
			return
		}
		if sc.Clipboard != nil {
			sc.Clipboard.SetContent(a.buf.selectedText())
		}
		a.buf.backspace()
		a.edited()
		return
	case *fyne.ShortcutPaste:
		if a.readOnly || sc.Clipboard == nil {
			return
		}
		a.buf.insert(sc.Clipboard.Content(), "paste")
		a.buf.lastKind = ""
		a.edited()
		return
	case *fyne.ShortcutUndo:
		if !a.readOnly && a.buf.undoLast() {
			a.edited()
		}
		return
	case *desktop.CustomShortcut:
		mod := sc.Modifier == fyne.KeyModifierControl || sc.Modifier == fyne.KeyModifierSuper
		if mod && sc.KeyName == fyne.KeyS {
			if a.onSave != nil {
				a.onSave()
			}
			return
		}
		if mod && sc.KeyName == fyne.KeyZ {
			if !a.readOnly && a.buf.undoLast() {
				a.edited()
			}
			return
		}
	}
	if c := fyne.CurrentApp().Driver().CanvasForObject(a); c != nil {
		if sh, ok := c.(fyne.Shortcutable); ok {
			sh.TypedShortcut(s)
		}
	}
}

func (a *codeArea) edited() {
	a.measure()
	a.ensureCursorVisible()
	a.Refresh()
	if a.onChanged != nil {
		a.onChanged()
	}
}

// ---- drawing ----------------------------------------------------------------

// CreateRenderer implements fyne.Widget.
func (a *codeArea) CreateRenderer() fyne.WidgetRenderer {
	return &codeAreaRenderer{a: a}
}

type codeAreaRenderer struct {
	a       *codeArea
	objects []fyne.CanvasObject
	rects   []*canvas.Rectangle
	nr      int
	// Text objects are kept per drawn run: a run drawn again (scrolling,
	// typing elsewhere) keeps its object and its rasterised texture.
	texts, prev map[textKey]*canvas.Text
	free        []*canvas.Text
	changed     bool
}

// textKey is one run of text as drawn.
type textKey struct {
	text  string
	x, y  float32
	color color.NRGBA
	style fyne.TextStyle
	size  float32
}

func (r *codeAreaRenderer) Destroy()                     {}
func (r *codeAreaRenderer) MinSize() fyne.Size           { return r.a.MinSize() }
func (r *codeAreaRenderer) Objects() []fyne.CanvasObject { return r.objects }

// Refresh redraws: only runs of text not drawn before are rasterised again.
func (r *codeAreaRenderer) Refresh() {
	r.Layout(r.a.Size())
	if len(r.rects) > 0 {
		canvas.Refresh(r.rects[0]) // a repaint for what only moved
	}
}

func (r *codeAreaRenderer) rect(c color.Color, pos fyne.Position, size fyne.Size) {
	if r.nr == len(r.rects) {
		r.rects = append(r.rects, canvas.NewRectangle(c))
	}
	rc := r.rects[r.nr]
	r.nr++
	rc.FillColor = c
	rc.Move(pos)
	rc.Resize(size)
	r.objects = append(r.objects, rc)
}

func (r *codeAreaRenderer) text(s string, c color.Color, st fyne.TextStyle, size float32, pos fyne.Position) {
	nc := color.NRGBAModel.Convert(c).(color.NRGBA)
	k := textKey{text: s, x: pos.X, y: pos.Y, color: nc, style: st, size: size}
	t, ok := r.prev[k]
	if ok {
		delete(r.prev, k)
	} else {
		if n := len(r.free); n > 0 {
			t, r.free = r.free[n-1], r.free[:n-1]
		} else {
			t = canvas.NewText("", c)
		}
		t.Text, t.Color, t.TextStyle, t.TextSize = s, c, st, size
		t.Move(pos)
		cell := r.a.cellSize()
		t.Resize(fyne.NewSize(float32(len([]rune(s)))*cell.Width, cell.Height))
		canvas.Refresh(t)
	}
	r.texts[k] = t
	r.objects = append(r.objects, t)
}

// startFrame begins a Layout: last frame's texts become reusable.
func (r *codeAreaRenderer) startFrame() {
	r.objects, r.nr = r.objects[:0], 0
	r.prev, r.texts = r.texts, make(map[textKey]*canvas.Text, len(r.texts))
}

// endFrame frees the texts not drawn again.
func (r *codeAreaRenderer) endFrame() {
	for _, t := range r.prev {
		r.free = append(r.free, t)
	}
	r.prev = nil
}

// expand replaces tabs by spaces up to the next tab stop, from display column x0.
func expand(rs []rune, x0 int) string {
	var out []rune
	x := x0
	for _, c := range rs {
		if c == '\t' {
			n := tabStop - x%tabStop
			for range n {
				out = append(out, ' ')
			}
			x += n
			continue
		}
		out = append(out, c)
		x++
	}
	return string(out)
}

// Layout draws the lines inside the viewport: backgrounds (marked lines,
// selection, gutter) first, then text, so no row's background covers the
// descenders of the row above (underscores stay visible).
func (r *codeAreaRenderer) Layout(s fyne.Size) {
	a := r.a
	r.startFrame()
	defer r.endFrame()
	off, view := a.viewport()
	lh, c, ts := a.lineHeight(), a.cellSize(), a.textSize()
	gw := a.gutterWidth()
	x0 := gw + codePad
	first := max(0, int((off.Y-codePad)/lh))
	last := min(len(a.buf.lines)-1, int((off.Y+view.Height)/lh)+1)
	width := max(s.Width, view.Width)
	fg := theme.Color(theme.ColorNameForeground)
	// Backgrounds.
	if a.mark[0] > 0 {
		for row := max(first, a.mark[0]-1); row <= min(last, a.mark[1]-1); row++ {
			r.rect(markBackground, fyne.NewPos(0, a.rowY(row)), fyne.NewSize(width, lh))
		}
	}
	if a.buf.hasSelection() {
		ss, se := a.buf.selection()
		for row := max(first, ss.row); row <= min(last, se.row); row++ {
			line := a.buf.lines[row]
			from, to := 0, displayCol(line, len(line))+1
			if row == ss.row {
				from = displayCol(line, ss.col)
			}
			if row == se.row {
				to = displayCol(line, se.col)
			}
			if to > from {
				r.rect(selectBackground, fyne.NewPos(x0+float32(from)*c.Width, a.rowY(row)), fyne.NewSize(float32(to-from)*c.Width, lh))
			}
		}
	}
	// Text.
	mono := fyne.TextStyle{Monospace: true}
	for row := first; row <= last; row++ {
		line := a.buf.lines[row]
		y := a.rowY(row) + 1
		var sp []span
		if row < len(a.spans) {
			sp = a.spans[row]
		}
		col := 0
		draw := func(to int, st *spanStyle) {
			to = min(to, len(line))
			if to <= col {
				return
			}
			dx := displayCol(line, col)
			txt := expand(line[col:to], dx)
			col = to
			if txt == "" || (st == nil && isBlank(txt)) {
				return
			}
			color, style := fg, mono
			if st != nil {
				if st.fg != nil {
					color = st.fg
				}
				style.Bold, style.Italic = st.bold, st.italic
			}
			r.text(txt, color, style, ts, fyne.NewPos(x0+float32(dx)*c.Width, y))
		}
		for _, s := range sp {
			if s.start > col {
				draw(s.start, nil)
			}
			if s.start >= col {
				draw(s.end, s.st)
			}
		}
		draw(len(line), nil)
	}
	// Cursor.
	if a.focused && !a.readOnly && a.buf.cur.row >= first && a.buf.cur.row <= last {
		line := a.buf.lines[a.buf.cur.row]
		r.rect(cursorColor, fyne.NewPos(x0+float32(displayCol(line, a.buf.cur.col))*c.Width-1, a.rowY(a.buf.cur.row)), fyne.NewSize(2, lh))
	}
	// Gutter, fixed at the viewport's left edge, over the text scrolled under it.
	r.rect(gutterBackground, fyne.NewPos(off.X, 0), fyne.NewSize(gw, max(s.Height, off.Y+view.Height)))
	digits := len(fmt.Sprint(len(a.buf.lines)))
	for row := first; row <= last; row++ {
		r.text(fmt.Sprintf("%*d", max(3, digits), row+1), gutterText, mono, ts, fyne.NewPos(off.X+codePad/2, a.rowY(row)+1))
	}
}

func isBlank(s string) bool {
	for _, c := range s {
		if c != ' ' {
			return false
		}
	}
	return true
}
