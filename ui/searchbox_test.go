package ui

import (
	"testing"
	"unicode/utf8"

	"codeloom/app/codegraph"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

func TestSearchSuggestsWhileTypingAndKeysPick(t *testing.T) {
	test.NewTempApp(t)
	nodes := []string{"store_json", "store_big_json_file", "line_total", "load"}
	q := newQueuedUI()
	var picked string
	e := newSearchEntry(func(query string, show func([]suggestion)) {
		var out []suggestion
		for _, n := range nodes {
			if wordStartMatch(query, n) > 0 {
				out = append(out, suggestion{id: "id:" + n, label: n})
			}
		}
		show(out)
	}, func(id string) { picked = id })
	e.do = q.do
	w := test.NewWindow(e)
	defer w.Close()
	w.Resize(fyne.NewSize(500, 400))
	w.Canvas().Focus(e)
	test.Type(e, "storjson")
	// The keystrokes settle, then one search runs (earlier ones are dropped).
	for e.suggestions() == nil {
		q.next(t)()
	}
	got := e.suggestions()
	if len(got) != 2 || got[0].label != "store_json" {
		t.Fatalf("suggestions for storjson: %v", got)
	}
	// Typing goes on while the list is open (the overlay has the focus).
	focused, ok := w.Canvas().Focused().(*suggestKeys)
	if !ok {
		t.Fatalf("keys go to %T, not the list's key catcher", w.Canvas().Focused())
	}
	focused.TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown})
	focused.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if picked != "id:store_big_json_file" {
		t.Errorf("Down, Enter picked %q", picked)
	}
	if e.suggestions() != nil {
		t.Error("the list stays open after a pick")
	}
	// Esc closes the list without picking.
	picked = ""
	e.SetText("lintot")
	for e.suggestions() == nil {
		q.next(t)()
	}
	focused.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if e.suggestions() != nil || picked != "" {
		t.Errorf("Esc: list %v, picked %q", e.suggestions(), picked)
	}
	focused.TypedRune('x')
	if e.Text != "lintotx" {
		t.Errorf("typing with the list open: %q", e.Text)
	}
}

// A long qualified name or path is shortened at the left, whole
// components where it can, so the node's own name (and file) stay in
// sight; short ones are shown as they are.
func TestSuggestionLabelKeepsTheName(t *testing.T) {
	for _, c := range []struct {
		s, seps string
		max     int
		want    string
	}{
		{"json.decoder.JSONDecoder", "./", 56, "json.decoder.JSONDecoder"},
		{"site-packages.jsonschema.tests.test_cli.TestParser.test_find_validator_in_default", "./", 56, "…test_cli.TestParser.test_find_validator_in_default"},
		{"a.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "./", 10, "…bbbbbbbbb"},
		{"pkg.naïve_ström_überlänge", "./", 12, "…m_überlänge"},
		{"site-packages/moto/stepfunctions/parser/asl/component/state.py", "/", 32, "…parser/asl/component/state.py"},
	} {
		got := elideLeft(c.s, c.max, c.seps)
		if got != c.want {
			t.Errorf("elideLeft(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > c.max {
			t.Errorf("elideLeft(%q, %d) has %d runes", c.s, c.max, n)
		}
	}
	n := &codegraph.Node{Name: "test_find_validator_in_default", QualName: "site-packages.jsonschema.tests.test_cli.TestParser.test_find_validator_in_default",
		Kind: codegraph.KindMethod, Path: "site-packages/jsonschema/tests/test_cli.py", StartLine: 42}
	if l := suggestionLabel(n); l != "…TestParser.test_find_validator_in_default  (method, …tests/test_cli.py:42)" {
		t.Errorf("label %q", l)
	}
}
