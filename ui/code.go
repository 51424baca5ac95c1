package ui

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

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

// CodePane shows a file with syntax highlighting and line numbers, scrolled
// to the selected node with its lines marked, and edits it in place (Edit;
// Ctrl+S saves) with the same highlighting and line numbers.
type CodePane struct {
	// OnSave is called with the editor's text when the user saves.
	OnSave func(text string)
	// Focus gives the keyboard focus to the editor (set by the window).
	Focus func(fyne.Focusable)
	// OnEditing is called when the pane enters edit mode (an edit is
	// likely coming: the window gets the project ready for updates).
	OnEditing func()

	header  *widget.Label
	editBtn *widget.Button
	saveBtn *widget.Button
	area    *codeArea
	editor  *codeArea // the same area: it edits in place
	scroll  *container.Scroll
	stack   *fyne.Container
	root    fyne.CanvasObject

	path, nodeID, nodeName string
	markStart, markEnd     int
	original               string // file content as last loaded or saved
	editing                bool

	hl *highlighter
	// do runs a function on the UI goroutine (fyne.Do; the window's own in
	// tests); highlighting is computed off it and handed back through do.
	do func(func())
	// syncHighlight highlights on the calling goroutine (headless tests).
	syncHighlight bool
	hlGen         atomic.Int64 // bumped per text shown or edited: late highlighting is dropped
}

// highlightDelay is how long the editor waits after a keystroke before
// highlighting the text again.
const highlightDelay = 150 * time.Millisecond

// maxHighlightBytes is the largest file highlighted whole; longer ones get
// the lines around the node only.
const maxHighlightBytes = 2 << 20

// firstWindow is how many lines around the node are highlighted first,
// before the whole file (about two screens).
const firstWindow = 120

// NewCodePane builds an empty code pane.
func NewCodePane() *CodePane {
	c := &CodePane{hl: newHighlighter(), do: fyne.Do}
	c.header = widget.NewLabel("Select a node to see its code")
	c.header.Truncation = fyne.TextTruncateEllipsis
	c.area = newCodeArea()
	c.editor = c.area
	c.scroll = container.NewScroll(c.area)
	c.area.scroll = c.scroll
	c.scroll.OnScrolled = func(fyne.Position) { c.area.Refresh() }
	c.area.onSave = func() { c.save() }
	c.area.onChanged = c.changed
	c.stack = container.NewStack(c.scroll)
	c.editBtn = widget.NewButtonWithIcon("Edit", theme.DocumentCreateIcon(), func() {
		if c.editing {
			c.setMode(false) // View keeps unsaved edits (read-only; Save still saves them)
		} else {
			c.setMode(true)
		}
	})
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

// Dirty reports unsaved edits (kept, read-only, when the user goes back
// to View: opening another file asks first).
func (c *CodePane) Dirty() bool { return c.path != "" && c.area.buf.text() != c.original }

// Discard drops unsaved edits: the file as last loaded or saved is shown.
func (c *CodePane) Discard() {
	if c.area.buf.text() == c.original {
		return
	}
	c.area.setText(c.original)
	c.highlight(c.original, c.markStart, false, 0)
	c.scrollToMark()
	c.updateButtons()
}

// Editing reports whether the pane is in edit mode.
func (c *CodePane) Editing() bool { return c.editing }

// Text returns the file text the pane holds (with any unsaved edits).
func (c *CodePane) Text() string { return c.area.buf.text() }

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

// codeView is what is known of a file before it is shown: the
// highlighting of the lines around the node, computed off the UI
// goroutine by prepareCode (the rest of the file follows in the background).
type codeView struct {
	first int      // 0-based line of spans[0]
	spans [][]span // highlighting of lines first…
}

// windowAround returns the 0-based range of lines highlighted first for a
// node at 1-based line start.
func windowAround(nLines, start int) (int, int) {
	first := max(0, start-1-firstWindow/4)
	return first, min(nLines, first+firstWindow)
}

// prepareCode highlights the lines around the node (safe on any goroutine).
func prepareCode(path, text string, start, end int) codeView {
	return prepareWith(newHighlighter(), path, text, start)
}

func prepareWith(h *highlighter, path, text string, start int) codeView {
	lines := strings.Split(text, "\n")
	first, last := windowAround(len(lines), start)
	return codeView{first: first, spans: h.spans(path, strings.Join(lines[first:last], "\n"))}
}

// ShowFile loads text of file path and marks lines start..end of the node
// (0 for a whole file). The plain text is shown at once; the highlighting
// follows off the UI goroutine. Any edit in progress is dropped: callers ask first.
func (c *CodePane) ShowFile(path, text, nodeID, nodeName string, start, end int) {
	c.showPrepared(path, text, nodeID, nodeName, start, end, codeView{})
}

// showPrepared is ShowFile with the highlighting of the node's lines done.
func (c *CodePane) showPrepared(path, text, nodeID, nodeName string, start, end int, cv codeView) {
	c.path, c.nodeID, c.nodeName = path, nodeID, nodeName
	c.markStart, c.markEnd = start, end
	c.original = text
	c.editing = false
	c.area.readOnly = true
	c.area.setText(text)
	c.scroll.Show()
	c.area.mark = [2]int{start, end}
	if cv.spans != nil {
		c.area.spans = placeSpans(len(c.area.buf.lines), cv)
	}
	if start > 0 {
		c.header.SetText(fmt.Sprintf("%s — %s (lines %d–%d)", path, nodeName, start, end))
	} else {
		c.header.SetText(path)
	}
	c.editBtn.SetText("Edit")
	c.updateButtons()
	c.scrollToMark()
	c.highlight(text, start, cv.spans == nil, 0)
}

// placeSpans puts a window's spans at their lines in a slice for the file.
func placeSpans(nLines int, cv codeView) [][]span {
	out := make([][]span, nLines)
	for i, s := range cv.spans {
		if cv.first+i < nLines {
			out[cv.first+i] = s
		}
	}
	return out
}

// highlight computes the spans of text off the UI goroutine (after delay)
// and shows them if the text is still current: first the lines around
// line start when window is set, then the whole file.
func (c *CodePane) highlight(text string, start int, window bool, delay time.Duration) {
	gen := c.hlGen.Add(1)
	path, h := c.path, c.hl
	work := func(post func(func())) {
		if delay > 0 {
			time.Sleep(delay)
			if c.hlGen.Load() != gen {
				return
			}
		}
		nLines := strings.Count(text, "\n") + 1
		if window && nLines > firstWindow {
			cv := prepareWith(h, path, text, start)
			post(func() {
				if c.hlGen.Load() == gen {
					c.area.setSpans(placeSpans(nLines, cv))
				}
			})
		}
		if len(text) > maxHighlightBytes || c.hlGen.Load() != gen {
			return
		}
		all := h.spansUntil(path, text, func() bool { return c.hlGen.Load() != gen })
		if all == nil {
			return // a newer text is shown
		}
		post(func() {
			if c.hlGen.Load() == gen {
				c.area.setSpans(all)
			}
		})
	}
	if c.syncHighlight {
		work(func(f func()) { f() })
		return
	}
	go work(c.do)
}

// changed follows an edit: buttons, then the highlighting after a pause.
func (c *CodePane) changed() {
	c.updateButtons()
	c.highlight(c.area.buf.text(), 0, false, highlightDelay)
}

// Clear empties the pane.
func (c *CodePane) Clear(message string) {
	c.hlGen.Add(1)
	c.path, c.nodeID, c.nodeName, c.original = "", "", "", ""
	c.markStart, c.markEnd = 0, 0
	c.area.setText("")
	c.area.mark = [2]int{}
	c.scroll.Hide() // no empty gutter under the message
	c.header.SetText(message)
	c.SetEditing(false)
}

func (c *CodePane) scrollToMark() {
	if c.markStart <= 1 {
		c.scroll.ScrollToTop()
		c.area.buf.moveTo(textPos{}, false)
		c.area.Refresh()
		return
	}
	c.area.buf.moveTo(textPos{row: c.markStart - 1}, false)
	c.area.scrollToRow(c.markStart - 1)
}

// SetEditing switches between reading and editing (same view: the text
// keeps its highlighting and line numbers). Leaving edit mode this way
// drops unsaved edits (callers asked first); the View button keeps them.
func (c *CodePane) SetEditing(on bool) {
	if !on {
		c.Discard()
	}
	c.setMode(on)
}

func (c *CodePane) setMode(on bool) {
	if c.path == "" {
		on = false
	}
	c.editing = on
	c.area.readOnly = !on
	if on {
		c.editBtn.SetText("View")
		if c.Focus != nil {
			c.Focus(c.area)
		}
		if c.OnEditing != nil {
			c.OnEditing()
		}
	} else {
		c.editBtn.SetText("Edit")
	}
	c.area.Refresh()
	c.updateButtons()
}

// SetEditorText replaces the edited text (switching to edit mode).
func (c *CodePane) SetEditorText(s string) {
	c.SetEditing(true)
	c.area.buf.pushUndo("replace")
	c.area.buf.lastKind = ""
	c.area.buf.lines = newCodeBuf(s).lines
	c.area.buf.moveTo(c.area.buf.cur, false)
	c.area.edited()
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
	if !c.Dirty() || c.OnSave == nil {
		return
	}
	c.OnSave(c.area.buf.text())
}

// Saved records that text is now the file's content on disk.
func (c *CodePane) Saved(text string) {
	c.original = text
	c.updateButtons()
}
