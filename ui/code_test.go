package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
)

// queuedUI collects what the pane hands back to the UI goroutine, to run
// it on the test's goroutine when the test says.
type queuedUI struct{ ch chan func() }

func newQueuedUI() *queuedUI    { return &queuedUI{ch: make(chan func(), 16)} }
func (q *queuedUI) do(f func()) { q.ch <- f }
func (q *queuedUI) next(t *testing.T) func() {
	t.Helper()
	select {
	case f := <-q.ch:
		return f
	case <-time.After(60 * time.Second):
		t.Fatal("no highlighting came back")
	}
	return nil
}

func bigPython(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "def f_%d(x):\n    return x + %d  # __init__\n", i, i)
	}
	return b.String()
}

func TestLongFileShowsPlainTextAtOnceThenHighlights(t *testing.T) {
	test.NewTempApp(t)
	q := newQueuedUI()
	c := NewCodePane()
	c.do = q.do
	text := bigPython(2000) // 4,000 lines
	c.ShowFile("big.py", text, "n", "f_1000", 1999, 2000)
	if c.area.spans != nil {
		t.Fatal("highlighting was computed on the UI goroutine")
	}
	if c.Text() != text || c.MarkedText() != "def f_1000(x):\n    return x + 1000  # __init__" {
		t.Fatalf("marked text %q", c.MarkedText())
	}
	q.next(t)() // the lines around the node
	if len(c.area.spans) != 4001 || len(c.area.spans[1998]) == 0 {
		t.Fatalf("the node's line is not highlighted first: %v", c.area.spans[1998])
	}
	if len(c.area.spans[10]) != 0 {
		t.Error("lines far from the node were highlighted in the first pass")
	}
	q.next(t)() // the whole file
	if len(c.area.spans[10]) == 0 {
		t.Error("the whole file is not highlighted in the second pass")
	}
	// A newer file drops a late highlighting of the older one.
	c.ShowFile("a.py", "x = 1\n", "m", "x", 1, 1)
	c.ShowFile("b.py", "def g():\n    pass\n", "k", "g", 1, 2)
	for len(c.area.spans) != 3 {
		q.next(t)() // a.py's late result (dropped), then b.py's
	}
	if c.area.buf.text() != "def g():\n    pass\n" || len(c.area.spans) != 3 || len(c.area.spans[0]) == 0 {
		t.Errorf("spans %v for b.py", c.area.spans)
	}
}

// drawnTexts returns the text objects the area draws, by content.
func drawnTexts(t *testing.T, a *codeArea) []*canvas.Text {
	t.Helper()
	var out []*canvas.Text
	for _, o := range test.WidgetRenderer(a).Objects() {
		if tx, ok := o.(*canvas.Text); ok {
			out = append(out, tx)
		}
	}
	return out
}

func TestEditingKeepsHighlightingAndLineNumbers(t *testing.T) {
	test.NewTempApp(t)
	c := NewCodePane()
	c.syncHighlight = true
	w := test.NewWindow(c.Object())
	defer w.Close()
	w.Resize(fyne.NewSize(700, 400))
	c.ShowFile("m.py", "class A:\n    def __init__(self):\n        pass\n", "n", "A", 1, 3)
	c.SetEditing(true)
	w.Canvas().Focus(c.area)
	c.area.buf.moveTo(textPos{2, 12}, false)
	for _, r := range "\nreturn 42" {
		if r == '\n' {
			c.area.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
			continue
		}
		c.area.TypedRune(r)
	}
	c.highlight(c.area.buf.text(), 0, false, 0) // what the delay would run
	if !c.Dirty() || !strings.Contains(c.Text(), "        pass\n        return 42\n") {
		t.Fatalf("edited text %q", c.Text())
	}
	var nums, keyword, init bool
	colors := map[string]any{}
	for _, tx := range drawnTexts(t, c.area) {
		colors[tx.Text] = tx.Color
	}
	for _, tx := range drawnTexts(t, c.area) {
		switch strings.TrimSpace(tx.Text) {
		case "4":
			nums = tx.Color == gutterText
		case "return":
			// coloured as the keywords that were there before the edit
			keyword = tx.Color == colors["def"] && tx.Color != colors["A"]
		}
		if strings.Contains(tx.Text, "__init__") {
			init = true
		}
	}
	if !nums {
		t.Error("no line number 4 in the gutter while editing")
	}
	if !keyword {
		t.Error("the typed keyword is not highlighted while editing")
	}
	if !init {
		t.Error("__init__ is not drawn as one run of text")
	}
}

func TestCodeAreaTakesWidthForHundredColumns(t *testing.T) {
	test.NewTempApp(t)
	a := newCodeArea()
	a.setText(strings.Repeat("x", 100))
	w := codePaneWidth(100)
	if got := a.MinSize().Width; got > w {
		t.Errorf("100 columns need %.0f px, the default pane width is %.0f", got, w)
	}
}

func TestViewKeepsEditsAndSetEditingFalseDiscards(t *testing.T) {
	test.NewTempApp(t)
	c := NewCodePane()
	c.syncHighlight = true
	saved := ""
	c.OnSave = func(s string) { saved = s }
	c.ShowFile("m.py", "x = 1\n", "n", "x", 1, 1)
	test.Tap(c.editBtn) // Edit
	c.area.buf.moveTo(textPos{0, 5}, false)
	c.area.TypedRune('2')
	test.Tap(c.editBtn) // View
	if c.Editing() || !c.Dirty() || c.Text() != "x = 12\n" {
		t.Fatalf("after View: editing %v dirty %v text %q", c.Editing(), c.Dirty(), c.Text())
	}
	c.area.TypedRune('9') // read-only now
	test.Tap(c.saveBtn)
	if saved != "x = 12\n" {
		t.Errorf("Save after View saved %q", saved)
	}
	c.SetEditing(false) // what the window does after "Discard them?"
	if c.Dirty() || c.Text() != "x = 1\n" {
		t.Errorf("discard left %q", c.Text())
	}
}
