package ui

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"codeloom/app/codegraph"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// suggestion is one node offered while typing in the search box.
type suggestion struct {
	id, label string
}

// maxSuggestions is how many matches the search box lists.
const maxSuggestions = 8

// suggestDelay lets a burst of keystrokes settle before searching.
const suggestDelay = 120 * time.Millisecond

// searchEntry is the graph's search box: it lists matching nodes under
// itself while the user types (Up/Down move, Enter jumps to the chosen one,
// Esc closes the list); Enter without a chosen suggestion submits the text.
type searchEntry struct {
	widget.Entry

	// suggest finds suggestions for a query and hands them to show, on the
	// UI goroutine, possibly later (nil: no suggestions).
	suggest func(q string, show func([]suggestion))
	// onPick jumps to a chosen suggestion.
	onPick func(id string)

	items []suggestion
	sel   int // chosen item (-1: none)
	list  *widget.List
	pop   *widget.PopUp
	keys  *suggestKeys
	gen   int
	timer *time.Timer
	do    func(func()) // runs on the UI goroutine (fyne.Do)
}

func newSearchEntry(suggest func(string, func([]suggestion)), onPick func(string)) *searchEntry {
	e := &searchEntry{suggest: suggest, onPick: onPick, sel: -1, do: fyne.Do}
	e.ExtendBaseWidget(e)
	e.OnChanged = e.changed
	return e
}

func (e *searchEntry) changed(q string) {
	e.gen++
	gen := e.gen
	if strings.TrimSpace(q) == "" || e.suggest == nil {
		e.setItems(nil)
		return
	}
	if e.timer != nil {
		e.timer.Stop()
	}
	e.timer = time.AfterFunc(suggestDelay, func() {
		e.do(func() {
			if gen != e.gen {
				return
			}
			e.suggest(q, func(items []suggestion) {
				if gen == e.gen {
					e.setItems(items)
				}
			})
		})
	})
}

// setItems shows items under the entry (none hides the list).
func (e *searchEntry) setItems(items []suggestion) {
	e.items, e.sel = items, -1
	if len(items) > 0 {
		e.sel = 0
	}
	if len(items) == 0 {
		e.hide()
		return
	}
	c := fyne.CurrentApp().Driver().CanvasForObject(e)
	if c == nil {
		return
	}
	if e.pop == nil {
		e.list = widget.NewList(func() int { return len(e.items) },
			func() fyne.CanvasObject { return widget.NewLabel("suggestion template") },
			func(i widget.ListItemID, o fyne.CanvasObject) { o.(*widget.Label).SetText(e.items[i].label) })
		e.list.OnSelected = func(i widget.ListItemID) {
			if i != e.sel {
				e.sel = i
				e.pick()
			}
		}
		e.keys = &suggestKeys{e: e}
		e.keys.ExtendBaseWidget(e.keys)
		e.pop = widget.NewPopUp(e.keys, c)
	}
	e.list.Refresh()
	e.list.Select(e.sel)
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(e).Add(fyne.NewPos(0, e.Size().Height))
	rowH := widget.NewLabel("x").MinSize().Height + 4
	e.pop.Resize(fyne.NewSize(max(e.Size().Width, 360), rowH*float32(len(items))+8))
	e.pop.ShowAtPosition(pos)
	// The pop-up is an overlay: it gets the keys. Its key catcher passes
	// typing on to this entry.
	c.Focus(e.keys)
}

func (e *searchEntry) hide() {
	if e.pop != nil && e.pop.Visible() {
		e.pop.Hide()
		if c := fyne.CurrentApp().Driver().CanvasForObject(e); c != nil {
			c.Focus(e)
		}
	}
}

// Visible suggestions (tests).
func (e *searchEntry) suggestions() []suggestion {
	if e.pop == nil || !e.pop.Visible() {
		return nil
	}
	return e.items
}

func (e *searchEntry) move(d int) {
	if len(e.items) == 0 {
		return
	}
	e.sel = (e.sel + d + len(e.items)) % len(e.items)
	e.list.Select(e.sel)
}

func (e *searchEntry) pick() {
	if e.sel < 0 || e.sel >= len(e.items) {
		return
	}
	id := e.items[e.sel].id
	e.gen++
	e.hide()
	if e.onPick != nil {
		e.onPick(id)
	}
}

// TypedKey implements fyne.Focusable: Up/Down open and move in the list,
// Enter picks, Esc closes it.
func (e *searchEntry) TypedKey(ev *fyne.KeyEvent) {
	if e.handleKey(ev) {
		return
	}
	e.Entry.TypedKey(ev)
}

func (e *searchEntry) handleKey(ev *fyne.KeyEvent) bool {
	open := e.pop != nil && e.pop.Visible()
	switch ev.Name {
	case fyne.KeyDown:
		if !open && len(e.items) > 0 {
			e.setItems(e.items)
			return true
		}
		e.move(1)
		return open
	case fyne.KeyUp:
		e.move(-1)
		return open
	case fyne.KeyReturn, fyne.KeyEnter:
		if open && e.sel >= 0 {
			e.pick()
			return true
		}
		e.gen++
		e.hide()
	case fyne.KeyEscape:
		if open {
			e.gen++
			e.hide()
			return true
		}
	}
	return false
}

// suggestKeys is the pop-up's content: it draws the list and receives the
// keys while the list is open (the overlay has the focus), passing them to
// the entry.
type suggestKeys struct {
	widget.BaseWidget
	e *searchEntry
}

// CreateRenderer implements fyne.Widget.
func (k *suggestKeys) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(k.e.list)
}

// FocusGained implements fyne.Focusable.
func (k *suggestKeys) FocusGained() {}

// FocusLost implements fyne.Focusable.
func (k *suggestKeys) FocusLost() {}

// TypedRune implements fyne.Focusable: typing goes on in the entry.
func (k *suggestKeys) TypedRune(r rune) { k.e.TypedRune(r) }

// TypedKey implements fyne.Focusable.
func (k *suggestKeys) TypedKey(ev *fyne.KeyEvent) {
	if !k.e.handleKey(ev) {
		k.e.Entry.TypedKey(ev)
	}
}

// suggestNodes finds nodes matching q for the search box: on the UI
// goroutine for small graphs, else in the background.
func (w *Workbench) suggestNodes(q string, show func([]suggestion)) {
	snap := w.snap
	if snap == nil {
		show(nil)
		return
	}
	find := func() []suggestion {
		var out []suggestion
		for _, id := range snap.Search(q, maxSuggestions) {
			if n, ok := snap.Node(id); ok {
				out = append(out, suggestion{id: id, label: suggestionLabel(n)})
			}
		}
		return out
	}
	if w.index == nil || w.index.Len() <= syncViewLimit {
		show(find())
		return
	}
	go func() {
		items := find()
		w.do(func() {
			if w.snap == snap {
				show(items)
			}
		})
	}()
}

// Widths, in characters, a suggestion's qualified name and path are
// shortened to: the list is about 62 characters wide, and its rows cut
// what does not fit at the right, where the name is.
const (
	suggestQualMax = 44
	suggestPathMax = 24
)

// suggestionLabel is a suggestion's text: the qualified name, its kind and
// where it is defined, with long names and paths shortened at the left
// (the outer packages and folders) so the name itself stays in sight.
func suggestionLabel(n *codegraph.Node) string {
	where := elideLeft(n.Path, suggestPathMax, "/")
	if n.StartLine > 0 {
		where = fmt.Sprintf("%s:%d", where, n.StartLine)
	}
	return fmt.Sprintf("%s  (%s, %s)", elideLeft(firstNonEmpty(n.QualName, n.Name), suggestQualMax, "./"), n.Kind, where)
}

// elideLeft returns s when it has at most max runes; else "…" and the end
// of s that fits in max-1 runes, starting after one of seps where one is
// found in that end (whole components), else at a rune boundary.
func elideLeft(s string, max int, seps string) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	start := len(s)
	for k := 0; k < max-1 && start > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:start])
		start -= size
	}
	tail := s[start:]
	if i := strings.IndexAny(tail, seps); i >= 0 && i+1 < len(tail) {
		tail = tail[i+1:]
	}
	return "…" + tail
}
