package ui

import "testing"

func TestCodeBufEditing(t *testing.T) {
	b := newCodeBuf("def f():\n    pass")
	b.moveTo(textPos{0, 8}, false)
	b.newline() // after ':' one level deeper
	b.insert("x", "type")
	b.insert("y", "type")
	if got := b.text(); got != "def f():\n    xy\n    pass" {
		t.Fatalf("after typing: %q", got)
	}
	b.backspace()
	b.backspace()
	b.backspace() // removes the indentation's last space
	if got := b.text(); got != "def f():\n   \n    pass" {
		t.Fatalf("after backspaces: %q", got)
	}
	b.moveTo(textPos{1, 0}, false)
	b.backspace() // joins with the line above
	if got := b.text(); got != "def f():   \n    pass" || b.cur != (textPos{0, 8}) {
		t.Fatalf("join: %q at %v", got, b.cur)
	}
	for b.undoLast() {
	}
	if got := b.text(); got != "def f():\n    pass" {
		t.Fatalf("undo all: %q", got)
	}
}

func TestCodeBufSelectionAndMoves(t *testing.T) {
	b := newCodeBuf("alpha\n\tbeta\ngamma")
	b.moveTo(textPos{0, 2}, false)
	b.move("down", true, 10)
	if b.cur != (textPos{1, 1}) { // display column 2 falls inside the tab: rune 1
		t.Fatalf("down from col 2: %v", b.cur)
	}
	if got := b.selectedText(); got != "pha\n\t" {
		t.Fatalf("selection %q", got)
	}
	b.insert("X", "type")
	if got := b.text(); got != "alXbeta\ngamma" {
		t.Fatalf("replace selection: %q", got)
	}
	b.selectWord(textPos{1, 2})
	if got := b.selectedText(); got != "gamma" {
		t.Fatalf("word %q", got)
	}
	b.move("home", false, 10)
	b.move("end", true, 10)
	b.deleteForward()
	if got := b.text(); got != "alXbeta\n" {
		t.Fatalf("delete selection: %q", got)
	}
	if displayCol([]rune("\tx"), 1) != 4 || runeCol([]rune("\tx"), 4) != 1 {
		t.Error("tab display columns")
	}
	c := newCodeBuf("a\r\nb")
	c.moveTo(textPos{1, 1}, false)
	c.insert("c", "type")
	if c.text() != "a\r\nbc" {
		t.Errorf("CRLF file: %q", c.text())
	}
}

func TestNewlineInsideALineOnlyBreaksIt(t *testing.T) {
	b := newCodeBuf("def g():\n    pass")
	b.moveTo(textPos{0, 0}, false)
	for _, r := range "def f():" {
		b.insert(string(r), "type")
	}
	b.newline()
	for _, r := range "    return 1" {
		b.insert(string(r), "type")
	}
	b.newline()
	b.newline()
	if got := b.text(); got != "def f():\n    return 1\n\ndef g():\n    pass" {
		t.Fatalf("typing above a line: %q", got)
	}
}

// TestCodeBufDeleteAtEdges: backspace and delete at the start and end of
// the text do nothing (no undo step either); at a line's edge they join
// the lines; consecutive deletes in both directions are one undo step.
func TestCodeBufDeleteAtEdges(t *testing.T) {
	b := newCodeBuf("ab\ncd")
	b.backspace() // at the start of the text
	b.moveTo(textPos{1, 2}, false)
	b.deleteForward() // at its end
	if got := b.text(); got != "ab\ncd" || len(b.undo) != 0 || b.cur != (textPos{1, 2}) {
		t.Fatalf("delete at the text's edges: %q at %v, %d undo steps", got, b.cur, len(b.undo))
	}
	b.moveTo(textPos{0, 2}, false)
	b.deleteForward() // joins the next line
	if got := b.text(); got != "abcd" || b.cur != (textPos{0, 2}) {
		t.Fatalf("delete at a line's end: %q at %v", got, b.cur)
	}
	b.deleteForward()
	b.backspace()
	if got := b.text(); got != "ad" || b.cur != (textPos{0, 1}) {
		t.Fatalf("delete then backspace: %q at %v", got, b.cur)
	}
	if !b.undoLast() || b.text() != "ab\ncd" || b.undoLast() {
		t.Fatalf("the deletes are not one undo step: %q", b.text())
	}
}
