package ui

import (
	"fmt"
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// saveShortcut is Ctrl+S (Cmd+S on macOS).
func saveShortcut() *desktop.CustomShortcut {
	return &desktop.CustomShortcut{KeyName: fyne.KeyS, Modifier: fyne.KeyModifierShortcutDefault}
}

// codeEntry is a multi-line monospace editor that reports Ctrl+S.
type codeEntry struct {
	widget.Entry
	onSave func()
}

func newCodeEntry() *codeEntry {
	e := &codeEntry{}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapOff
	e.TextStyle = fyne.TextStyle{Monospace: true}
	e.ExtendBaseWidget(e)
	return e
}

// TypedShortcut catches Ctrl+S (Cmd+S) before the entry's own shortcuts.
func (e *codeEntry) TypedShortcut(s fyne.Shortcut) {
	if cs, ok := s.(*desktop.CustomShortcut); ok && cs.KeyName == fyne.KeyS && (cs.Modifier == fyne.KeyModifierControl || cs.Modifier == fyne.KeyModifierSuper) {
		if e.onSave != nil {
			e.onSave()
		}
		return
	}
	e.Entry.TypedShortcut(s)
}

// CodePane shows a file with syntax highlighting and line numbers, scrolled
// to the selected node with its lines marked, and switches to an editor for
// changes (Ctrl+S saves).
type CodePane struct {
	// OnSave is called with the editor's text when the user saves.
	OnSave func(text string)
	// Focus gives the keyboard focus to the editor (set by the window).
	Focus func(fyne.Focusable)

	header  *widget.Label
	editBtn *widget.Button
	saveBtn *widget.Button
	grid    *widget.TextGrid
	scroll  *container.Scroll
	editor  *codeEntry
	stack   *fyne.Container
	root    fyne.CanvasObject

	path, nodeID, nodeName string
	markStart, markEnd     int
	original               string // file content as last loaded or saved
	editing                bool
	editorStale            bool // the editor does not hold original yet (filled on Edit)
	gridFirst              int  // 0-based file line of the grid's first row
}

// gridWindow is the most lines the viewer holds: a text grid of a
// 4,000-line file took seconds to build on the UI goroutine, so a long file
// shows the lines around the node (the editor has the whole file).
const gridWindow = 600

// NewCodePane builds an empty code pane.
func NewCodePane() *CodePane {
	c := &CodePane{}
	c.header = widget.NewLabel("Select a node to see its code")
	c.header.Truncation = fyne.TextTruncateEllipsis
	c.grid = widget.NewTextGrid()
	c.grid.ShowLineNumbers = true
	c.grid.Scroll = fyne.ScrollNone
	c.scroll = container.NewScroll(c.grid)
	c.editor = newCodeEntry()
	c.editor.onSave = func() { c.save() }
	c.editor.OnChanged = func(string) { c.updateButtons() }
	c.editor.Hide()
	c.stack = container.NewStack(c.scroll, c.editor)
	c.editBtn = widget.NewButtonWithIcon("Edit", theme.DocumentCreateIcon(), func() { c.SetEditing(!c.editing) })
	c.saveBtn = widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), func() { c.save() })
	c.editBtn.Disable()
	c.saveBtn.Disable()
	bar := container.NewBorder(nil, nil, nil, container.NewHBox(c.editBtn, c.saveBtn), c.header)
	c.root = container.NewBorder(bar, nil, nil, nil, c.stack)
	return c
}

// Object returns the pane's canvas object.
func (c *CodePane) Object() fyne.CanvasObject { return c.root }

// Path returns the file shown ("" for none).
func (c *CodePane) Path() string { return c.path }

// NodeID returns the node whose code is marked.
func (c *CodePane) NodeID() string { return c.nodeID }

// Dirty reports unsaved edits.
func (c *CodePane) Dirty() bool { return c.editing && c.editor.Text != c.original }

// Editing reports whether the editor is shown.
func (c *CodePane) Editing() bool { return c.editing }

// Text returns the file text the pane holds (the editor's text while editing).
func (c *CodePane) Text() string {
	if c.editing {
		return c.editor.Text
	}
	return c.original
}

// MarkedText returns the lines of the marked node.
func (c *CodePane) MarkedText() string {
	if c.markStart <= 0 {
		return ""
	}
	lines := strings.Split(c.original, "\n")
	s, e := c.markStart-1, min(c.markEnd, len(lines))
	if s >= e {
		return ""
	}
	return strings.Join(lines[s:e], "\n")
}

// codeView is a file highlighted for the viewer: computed off the UI
// goroutine for long files (prepareCode is safe on any goroutine).
type codeView struct {
	rows     []widget.TextGridRow
	first    int    // 0-based file line of the first row
	numbered bool   // rows carry their own line numbers
	window   string // header note when only part of the file is shown
}

// prepareCode highlights text (at most gridWindow lines around start).
func prepareCode(path, text string, start, end int) codeView {
	lines := strings.Split(text, "\n")
	if len(lines) <= gridWindow {
		return codeView{rows: HighlightRows(path, text, start, end)}
	}
	first := max(0, min(start-1-gridWindow/3, len(lines)-gridWindow))
	last := min(len(lines), first+gridWindow)
	rows := HighlightRows(path, strings.Join(lines[first:last], "\n"), max(0, start-first), max(0, end-first))
	return codeView{rows: numberRows(rows, first+1), first: first, numbered: true,
		window: fmt.Sprintf(" · lines %d–%d of %d shown, Edit for all", first+1, last, len(lines))}
}

// ShowFile loads text of file path and marks lines start..end of the node
// (0 for a whole file). Any edit in progress is dropped: callers ask first.
func (c *CodePane) ShowFile(path, text, nodeID, nodeName string, start, end int) {
	c.showPrepared(path, text, nodeID, nodeName, start, end, prepareCode(path, text, start, end))
}

// showPrepared is ShowFile with the highlighting already done.
func (c *CodePane) showPrepared(path, text, nodeID, nodeName string, start, end int, cv codeView) {
	c.path, c.nodeID, c.nodeName = path, nodeID, nodeName
	c.markStart, c.markEnd = start, end
	c.original = text
	c.gridFirst, c.grid.ShowLineNumbers, c.grid.Rows = cv.first, !cv.numbered, cv.rows
	window := cv.window
	c.grid.Refresh()
	if start > 0 {
		c.header.SetText(fmt.Sprintf("%s — %s (lines %d–%d)%s", path, nodeName, start, end, window))
	} else {
		c.header.SetText(path + window)
	}
	c.editorStale = true
	c.SetEditing(false)
	c.scrollToMark()
}

// Clear empties the pane.
func (c *CodePane) Clear(message string) {
	c.path, c.nodeID, c.nodeName, c.original = "", "", "", ""
	c.markStart, c.markEnd = 0, 0
	c.gridFirst, c.editorStale = 0, true
	c.grid.Rows = nil
	c.grid.Refresh()
	c.header.SetText(message)
	c.SetEditing(false)
}

func (c *CodePane) scrollToMark() {
	if c.markStart <= 1 {
		c.scroll.ScrollToTop()
		return
	}
	// The scroller clamps offsets to its content's current size, which is
	// only updated at the next layout: size the content for the new text now.
	c.scroll.Content.Resize(c.scroll.Content.MinSize().Max(c.scroll.Size()))
	pos := c.grid.PositionForCursorLocation(max(0, c.markStart-3-c.gridFirst), 0)
	c.scroll.ScrollToOffset(fyne.NewPos(0, pos.Y))
	c.scroll.Refresh()
	c.editor.CursorRow = c.markStart - 1
	c.editor.CursorColumn = 0
}

// SetEditing switches between the highlighted view and the editor.
func (c *CodePane) SetEditing(on bool) {
	if c.path == "" {
		on = false
	}
	c.editing = on
	if on {
		if c.editorStale {
			c.editor.SetText(c.original)
			c.editorStale = false
		}
		c.scroll.Hide()
		c.editor.Show()
		c.editBtn.SetText("View")
		c.editor.CursorRow = max(0, c.markStart-1)
		c.editor.Refresh()
		if c.Focus != nil {
			c.Focus(c.editor)
		}
	} else {
		c.editor.Hide()
		c.scroll.Show()
		c.editBtn.SetText("Edit")
	}
	c.updateButtons()
}

// SetEditorText replaces the editor's text (switching to the editor).
func (c *CodePane) SetEditorText(s string) {
	c.SetEditing(true)
	c.editor.SetText(s)
}

func (c *CodePane) updateButtons() {
	if c.path == "" {
		c.editBtn.Disable()
		c.saveBtn.Disable()
		return
	}
	c.editBtn.Enable()
	if c.Dirty() {
		c.saveBtn.Enable()
	} else {
		c.saveBtn.Disable()
	}
}

func (c *CodePane) save() {
	if !c.editing || c.path == "" || c.OnSave == nil {
		return
	}
	c.OnSave(c.editor.Text)
}

// Saved records that text is now the file's content on disk.
func (c *CodePane) Saved(text string) {
	c.original = text
	c.updateButtons()
}

// lineNumberStyle is the colour of line numbers drawn into a windowed grid.
var lineNumberStyle = &widget.CustomTextGridStyle{FGColor: color.NRGBA{0x94, 0xa3, 0xb8, 0xff}, TextStyle: fyne.TextStyle{Monospace: true}}

// numberRows puts line numbers, from first, in front of each row (the text
// grid's own numbers always start at 1).
func numberRows(rows []widget.TextGridRow, first int) []widget.TextGridRow {
	width := len(fmt.Sprint(first + len(rows)))
	for i := range rows {
		num := fmt.Sprintf("%*d ", width, first+i)
		cells := make([]widget.TextGridCell, 0, len(num)+len(rows[i].Cells))
		for _, r := range num {
			cells = append(cells, widget.TextGridCell{Rune: r, Style: lineNumberStyle})
		}
		rows[i].Cells = append(cells, rows[i].Cells...)
	}
	return rows
}
