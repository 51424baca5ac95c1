package ui

import (
	"os"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// turtle returns /usr/lib/python3.11/turtle.py (4,157 lines), the file of
// issue 12's click → code figure.
func turtle(b *testing.B) string {
	data, err := os.ReadFile("/usr/lib/python3.11/turtle.py")
	if err != nil {
		b.Skip("no /usr/lib/python3.11/turtle.py")
	}
	return string(data)
}

// BenchmarkClickCodeBefore is what a click cost on the UI goroutine before:
// chroma on the 600 lines around the node, as TextGrid rows.
func BenchmarkClickCodeBefore(b *testing.B) {
	text := turtle(b)
	lines := strings.Split(text, "\n")
	window := strings.Join(lines[1800:2400], "\n")
	for b.Loop() {
		HighlightRows("turtle.py", window, 200, 240)
	}
}

// BenchmarkClickCodeAfter is what a click costs on the UI goroutine now:
// the plain text into the code area (highlighting follows off it).
func BenchmarkClickCodeAfter(b *testing.B) {
	test.NewTempApp(b)
	text := turtle(b)
	c := NewCodePane()
	c.do = func(func()) {} // drop the background highlighting's results
	for b.Loop() {
		c.ShowFile("turtle.py", text, "n", "x", 2000, 2040)
	}
}

// BenchmarkHighlightFirstWindow is the first background pass (the lines
// around the node); BenchmarkHighlightWholeFile the second.
func BenchmarkHighlightFirstWindow(b *testing.B) {
	text := turtle(b)
	h := newHighlighter()
	for b.Loop() {
		prepareWith(h, "turtle.py", text, 2000)
	}
}

func BenchmarkHighlightWholeFile(b *testing.B) {
	text := turtle(b)
	h := newHighlighter()
	for b.Loop() {
		h.spans("turtle.py", text)
	}
}
