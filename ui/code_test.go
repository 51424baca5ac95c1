package ui

import (
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

func TestLongFileShowsAWindowAroundTheNode(t *testing.T) {
	test.NewTempApp(t)
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "x_%d = %d\n", i, i)
	}
	c := NewCodePane()
	c.ShowFile("big.py", b.String(), "n", "x_2000", 2000, 2002)
	if n := len(c.grid.Rows); n > gridWindow {
		t.Fatalf("grid holds %d rows, want at most %d", n, gridWindow)
	}
	row := c.grid.Rows[2000-1-c.gridFirst]
	var text strings.Builder
	for _, cell := range row.Cells {
		text.WriteRune(cell.Rune)
	}
	if got := strings.TrimSpace(text.String()); got != "2000 x_2000 = 2000" {
		t.Errorf("row of line 2000 reads %q", got)
	}
	if c.MarkedText() != "x_2000 = 2000\nx_2001 = 2001\nx_2002 = 2002" {
		t.Errorf("marked text %q", c.MarkedText())
	}
	c.SetEditing(true)
	if c.Text() != b.String() || c.Dirty() {
		t.Error("the editor does not hold the whole file")
	}
}
