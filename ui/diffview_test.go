package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/patch"
	"codeloom/app/pipeline"
)

func rowText(r widget.TextGridRow) string {
	var b strings.Builder
	for _, c := range r.Cells {
		b.WriteRune(c.Rune)
	}
	return b.String()
}

func TestDiffRowsAreColouredAndMonospace(t *testing.T) {
	test.NewTempApp(t)
	detail := "modify a.py +1 -1\n- a list item, not a removal\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
	body, isDiff := questionBody(detail)
	grid, ok := body.(*widget.TextGrid)
	if !isDiff || !ok {
		t.Fatalf("a diff is shown in %T", body)
	}
	want := map[string]*widget.CustomTextGridStyle{}
	for _, r := range grid.Rows {
		if len(r.Cells) == 0 {
			continue
		}
		if st, ok := r.Cells[0].Style.(*widget.CustomTextGridStyle); ok {
			want[rowText(r)] = st
			if !st.TextStyle.Monospace {
				t.Errorf("row %q is not monospace", rowText(r))
			}
		}
	}
	if st := want["-y = 2"]; st == nil || st.FGColor != diffDelFG || st.BGColor != diffDelBG {
		t.Errorf("removed line style %+v", st)
	}
	if st := want["+y = 3"]; st == nil || st.FGColor != diffAddFG || st.BGColor != diffAddBG {
		t.Errorf("added line style %+v", st)
	}
	if st := want["- a list item, not a removal"]; st == nil || st.FGColor != nil {
		t.Errorf("prose before the diff coloured: %+v", st)
	}
	if _, isDiff := questionBody("python -m pytest (timeout 60 s)"); isDiff {
		t.Error("plain text shown as a diff")
	}
}

func TestConfirmShowsTheTaskNetDiff(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "a.py")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tc := newTaskChanges(root, "make y 4")
	// Two patches: y 2 → 3, then 3 → 4, plus a file created then deleted.
	write("x = 1\ny = 3\n")
	tc.observe(pipeline.Event{Type: pipeline.EventApplied, Changes: &patch.Changeset{Changes: []patch.Change{
		{Path: "a.py", Old: []byte("x = 1\ny = 2\n"), OldExists: true},
		{Path: "tmp.py", OldExists: false},
	}}})
	write("x = 1\ny = 4\n")
	tc.observe(pipeline.Event{Type: pipeline.EventApplied, Changes: &patch.Changeset{Changes: []patch.Change{
		{Path: "a.py", Old: []byte("x = 1\ny = 3\n"), OldExists: true},
	}}})
	q := tc.explain(pipeline.Question{Kind: pipeline.AskConfirm, Title: "Is this what you wanted?", Detail: "modify a.py +1 -1\ngate test: passed"})
	if !strings.Contains(q.Detail, "-y = 2\n+y = 4") {
		t.Errorf("confirm lacks the net diff (first → last state):\n%s", q.Detail)
	}
	if strings.Contains(q.Detail, "+y = 3") {
		t.Errorf("confirm shows an intermediate state:\n%s", q.Detail)
	}
	if !strings.Contains(q.Detail, "modify a.py +1 -1") || !strings.Contains(q.Detail, "unchanged tmp.py") {
		t.Errorf("summary lines missing:\n%s", q.Detail)
	}
	next := tc.explain(pipeline.Question{Kind: pipeline.AskNext, Title: "Add another feature?"})
	for _, want := range []string{"Done: make y 4", "modify a.py +1 -1", "Yes: ", "No: "} {
		if !strings.Contains(next.Detail, want) {
			t.Errorf("'Add another feature?' body lacks %q:\n%s", want, next.Detail)
		}
	}
}
