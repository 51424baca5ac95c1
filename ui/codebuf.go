package ui

import (
	"strings"
	"unicode"
)

// textPos is a place in a codeBuf: a 0-based line and a rune column.
type textPos struct{ row, col int }

func (a textPos) before(b textPos) bool { return a.row < b.row || (a.row == b.row && a.col < b.col) }

// codeBuf is the text of the code pane's editor: lines of runes, a cursor,
// a selection anchor and an undo history. It knows nothing of widgets, so
// every editing rule is tested without a window.
type codeBuf struct {
	lines  [][]rune
	crlf   bool // the file used CRLF line ends: Text writes them back
	cur    textPos
	anchor textPos // selection from anchor to cur (none when equal)
	goalX  int     // display column kept by up/down moves (-1: none)

	undo     []undoStep
	lastKind string // kind of the last edit ("type", "delete"…), for grouping

	// The whole text, kept until the next edit: the window asks for it (is
	// the pane dirty?) far more often than the text changes, and joining a
	// 6,000-line file takes the UI goroutine 0.1–0.5 s.
	joined    string
	joinedSet bool
}

// undoStep is the text and cursor before an edit.
type undoStep struct {
	text string
	cur  textPos
}

// maxUndo bounds the undo history.
const maxUndo = 200

// tabStop is the display width of a tab.
const tabStop = 4

func newCodeBuf(text string) *codeBuf {
	b := &codeBuf{goalX: -1}
	b.setText(text)
	return b
}

// setText replaces the text, puts the cursor at the start and clears the
// undo history.
func (b *codeBuf) setText(text string) {
	b.crlf = strings.Contains(text, "\r\n")
	if b.crlf {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	parts := strings.Split(text, "\n")
	b.lines = make([][]rune, len(parts))
	for i, p := range parts {
		b.lines[i] = []rune(p)
	}
	b.cur, b.anchor, b.goalX = textPos{}, textPos{}, -1
	b.undo, b.lastKind = nil, ""
	b.joined, b.joinedSet = "", false
}

// text returns the whole text.
func (b *codeBuf) text() string {
	if b.joinedSet {
		return b.joined
	}
	var sb strings.Builder
	nl := "\n"
	if b.crlf {
		nl = "\r\n"
	}
	for i, l := range b.lines {
		if i > 0 {
			sb.WriteString(nl)
		}
		sb.WriteString(string(l))
	}
	b.joined, b.joinedSet = sb.String(), true
	return b.joined
}

func (b *codeBuf) clamp(p textPos) textPos {
	p.row = max(0, min(p.row, len(b.lines)-1))
	p.col = max(0, min(p.col, len(b.lines[p.row])))
	return p
}

// hasSelection reports whether some text is selected.
func (b *codeBuf) hasSelection() bool { return b.cur != b.anchor }

// selection returns the selected range, start first.
func (b *codeBuf) selection() (textPos, textPos) {
	if b.anchor.before(b.cur) {
		return b.anchor, b.cur
	}
	return b.cur, b.anchor
}

// selectedText returns the selected text ("" for none).
func (b *codeBuf) selectedText() string {
	if !b.hasSelection() {
		return ""
	}
	s, e := b.selection()
	if s.row == e.row {
		return string(b.lines[s.row][s.col:e.col])
	}
	var sb strings.Builder
	sb.WriteString(string(b.lines[s.row][s.col:]))
	for r := s.row + 1; r < e.row; r++ {
		sb.WriteString("\n")
		sb.WriteString(string(b.lines[r]))
	}
	sb.WriteString("\n")
	sb.WriteString(string(b.lines[e.row][:e.col]))
	return sb.String()
}

// moveTo puts the cursor at p, extending the selection when extend is set.
func (b *codeBuf) moveTo(p textPos, extend bool) {
	b.cur = b.clamp(p)
	if !extend {
		b.anchor = b.cur
	}
	b.lastKind = ""
}

// selectAll selects the whole text.
func (b *codeBuf) selectAll() {
	b.anchor = textPos{}
	last := len(b.lines) - 1
	b.cur = textPos{last, len(b.lines[last])}
}

// selectWord selects the identifier around p.
func (b *codeBuf) selectWord(p textPos) {
	p = b.clamp(p)
	line := b.lines[p.row]
	isWord := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	s, e := p.col, p.col
	for s > 0 && isWord(line[s-1]) {
		s--
	}
	for e < len(line) && isWord(line[e]) {
		e++
	}
	b.anchor, b.cur = textPos{p.row, s}, textPos{p.row, e}
}

// pushUndo records the text before an edit of kind; consecutive typing
// (or deleting) is one step.
// Every edit calls it first, so it also drops the joined text.
func (b *codeBuf) pushUndo(kind string) {
	defer func() { b.joined, b.joinedSet = "", false }() // the edit that follows changes the text
	if kind != "" && kind == b.lastKind {
		return
	}
	b.lastKind = kind
	b.undo = append(b.undo, undoStep{text: b.text(), cur: b.cur})
	if len(b.undo) > maxUndo {
		b.undo = b.undo[len(b.undo)-maxUndo:]
	}
}

// undoLast puts back the text before the last edit; false when there is none.
func (b *codeBuf) undoLast() bool {
	if len(b.undo) == 0 {
		return false
	}
	st := b.undo[len(b.undo)-1]
	b.undo = b.undo[:len(b.undo)-1]
	crlf, hist := b.crlf, b.undo
	b.setText(st.text)
	b.crlf, b.undo = crlf, hist
	b.cur = b.clamp(st.cur)
	b.anchor = b.cur
	return true
}

// deleteSelection removes the selected text (no undo step of its own).
func (b *codeBuf) deleteSelection() {
	if !b.hasSelection() {
		return
	}
	s, e := b.selection()
	tail := append([]rune(nil), b.lines[e.row][e.col:]...)
	b.lines[s.row] = append(b.lines[s.row][:s.col:s.col], tail...)
	b.lines = append(b.lines[:s.row+1], b.lines[e.row+1:]...)
	b.cur, b.anchor = s, s
}

// insert replaces the selection with s (which may hold newlines).
func (b *codeBuf) insert(s, kind string) {
	b.pushUndo(kind)
	b.deleteSelection()
	s = strings.ReplaceAll(s, "\r\n", "\n")
	parts := strings.Split(s, "\n")
	line := b.lines[b.cur.row]
	head := append([]rune(nil), line[:b.cur.col]...)
	tail := append([]rune(nil), line[b.cur.col:]...)
	if len(parts) == 1 {
		ins := []rune(parts[0])
		b.lines[b.cur.row] = append(append(head, ins...), tail...)
		b.cur.col += len(ins)
	} else {
		newLines := make([][]rune, len(parts))
		newLines[0] = append(head, []rune(parts[0])...)
		for i := 1; i < len(parts)-1; i++ {
			newLines[i] = []rune(parts[i])
		}
		last := []rune(parts[len(parts)-1])
		newLines[len(parts)-1] = append(append([]rune(nil), last...), tail...)
		rest := append([][]rune(nil), b.lines[b.cur.row+1:]...)
		b.lines = append(append(b.lines[:b.cur.row], newLines...), rest...)
		b.cur = textPos{b.cur.row + len(parts) - 1, len(last)}
	}
	b.anchor, b.goalX = b.cur, -1
}

// newline breaks the line at the cursor. At the end of a line it keeps
// the line's indentation (one level more after ':' or '{'); inside a line
// it only breaks it, so text moved down keeps its own indentation.
func (b *codeBuf) newline() {
	line := b.lines[b.cur.row]
	if strings.TrimSpace(string(line[min(b.cur.col, len(line)):])) != "" && !b.hasSelection() {
		b.insert("\n", "newline")
		return
	}
	indent := 0
	for indent < len(line) && indent < b.cur.col && (line[indent] == ' ' || line[indent] == '\t') {
		indent++
	}
	ind := string(line[:indent])
	before := strings.TrimRight(string(line[:b.cur.col]), " \t")
	if strings.HasSuffix(before, ":") || strings.HasSuffix(before, "{") {
		ind += b.indentUnit()
	}
	b.insert("\n"+ind, "newline")
}

// indentUnit is a tab when the text indents with tabs, else four spaces.
func (b *codeBuf) indentUnit() string {
	for _, l := range b.lines {
		if len(l) > 0 && l[0] == '\t' {
			return "\t"
		}
		if len(l) > 0 && l[0] == ' ' {
			return "    "
		}
	}
	return "    "
}

// backspace deletes the selection or the rune before the cursor.
func (b *codeBuf) backspace() { b.deleteRune(-1) }

// deleteForward deletes the selection or the rune after the cursor.
func (b *codeBuf) deleteForward() { b.deleteRune(1) }

// deleteRune deletes the selection, else the rune before the cursor (dir
// < 0) or after it: at a line's edge the line break, at the start or end of
// the text nothing.
func (b *codeBuf) deleteRune(dir int) {
	if b.hasSelection() {
		b.pushUndo("cut")
		b.deleteSelection()
		b.lastKind = ""
		return
	}
	p := b.stepRune(b.cur, dir)
	if p == b.cur {
		return
	}
	b.anchor = p
	b.pushUndo("delete")
	b.deleteSelection()
	b.goalX = -1
}

// stepRune returns p moved one rune back (dir < 0) or forward, across a
// line break at a line's edge; p itself at the start or end of the text.
func (b *codeBuf) stepRune(p textPos, dir int) textPos {
	switch {
	case dir < 0 && p.col > 0:
		p.col--
	case dir < 0 && p.row > 0:
		p.row--
		p.col = len(b.lines[p.row])
	case dir > 0 && p.col < len(b.lines[p.row]):
		p.col++
	case dir > 0 && p.row < len(b.lines)-1:
		p.row++
		p.col = 0
	}
	return p
}

// displayCol is the screen column of rune col in line (tabs expanded).
func displayCol(line []rune, col int) int {
	x := 0
	for i := 0; i < col && i < len(line); i++ {
		if line[i] == '\t' {
			x += tabStop - x%tabStop
		} else {
			x++
		}
	}
	return x
}

// runeCol is the rune index in line nearest screen column x.
func runeCol(line []rune, x int) int {
	cx := 0
	for i, r := range line {
		w := 1
		if r == '\t' {
			w = tabStop - cx%tabStop
		}
		if x < cx+(w+1)/2 {
			return i
		}
		cx += w
	}
	return len(line)
}

// move moves the cursor by a navigation key; page is the number of lines
// a page moves.
func (b *codeBuf) move(key string, extend bool, page int) {
	if !extend && b.hasSelection() && (key == "left" || key == "right") {
		s, e := b.selection()
		if key == "left" {
			b.moveTo(s, false)
		} else {
			b.moveTo(e, false)
		}
		return
	}
	p := b.cur
	vertical := func(dy int) {
		if b.goalX < 0 {
			b.goalX = displayCol(b.lines[p.row], p.col)
		}
		p.row = max(0, min(len(b.lines)-1, p.row+dy))
		p.col = runeCol(b.lines[p.row], b.goalX)
	}
	keep := false
	switch key {
	case "left":
		p = b.stepRune(p, -1)
	case "right":
		p = b.stepRune(p, 1)
	case "up":
		vertical(-1)
		keep = true
	case "down":
		vertical(1)
		keep = true
	case "pageup":
		vertical(-page)
		keep = true
	case "pagedown":
		vertical(page)
		keep = true
	case "home":
		// First to the indentation, then to column 0.
		ind := 0
		for ind < len(b.lines[p.row]) && (b.lines[p.row][ind] == ' ' || b.lines[p.row][ind] == '\t') {
			ind++
		}
		if p.col == ind {
			ind = 0
		}
		p.col = ind
	case "end":
		p.col = len(b.lines[p.row])
	case "top":
		p = textPos{}
	case "bottom":
		p = textPos{len(b.lines) - 1, len(b.lines[len(b.lines)-1])}
	}
	goal := b.goalX
	b.moveTo(p, extend)
	if keep {
		b.goalX = goal
	} else {
		b.goalX = -1
	}
}
