package patch

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary answers to the parser and applies whatever parses
// to a fixed file: neither may panic, and every error must be a typed,
// explained error. Seeds live in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
	f.Add("x.py\n<<<<<<< SEARCH\nb\n=======\nc\n>>>>>>> REPLACE\n")
	f.Add("FILE: y.py\n```\nprint(1)\n```\n")
	const file = "a\nb\nc\nd\n"
	f.Fuzz(func(t *testing.T, answer string) {
		p, err := Parse(answer)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error text")
			}
			return
		}
		if len(p.Edits) == 0 {
			t.Fatal("Parse returned no edits and no error")
		}
		for _, e := range p.Edits {
			if e.Block <= 0 || e.AnswerLine <= 0 {
				t.Fatalf("edit without a position: %+v", e)
			}
			for _, exists := range []bool{true, false} {
				content := ""
				if exists {
					content = file
				}
				if _, _, err := applyEdit(e, content, exists, Options{}); err != nil && err.Error() == "" {
					t.Fatal("empty apply error text")
				}
			}
		}
	})
}

// FuzzDiffRoundTrip checks that the diffs UnifiedDiff writes parse and apply
// back to the new text.
func FuzzDiffRoundTrip(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\n")
	f.Add("x", "x\n")
	f.Add("", "new\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		if strings.ContainsRune(old, 0) || strings.ContainsRune(new, 0) || strings.Contains(old, "\r") || strings.Contains(new, "\r") {
			return
		}
		if old == new {
			return
		}
		d, _, _ := UnifiedDiff("f.txt", old, new, true, true)
		p, err := Parse(d)
		if err != nil {
			t.Fatalf("own diff does not parse: %v\n%s", err, d)
		}
		if len(p.Edits) != 1 {
			t.Fatalf("own diff parsed into %d edits\n%s", len(p.Edits), d)
		}
		got, _, err := applyEdit(p.Edits[0], old, true, Options{})
		if err != nil {
			t.Fatalf("own diff does not apply: %v\n%s", err, d)
		}
		if got != new {
			t.Fatalf("round trip: got %q want %q\n%s", got, new, d)
		}
	})
}
