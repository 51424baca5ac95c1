package codegraph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// extractWith extracts src as Python with the extractor adjusted by set.
func extractWith(t *testing.T, src []byte, set func(e *extractor)) *fileData {
	t.Helper()
	ex, err := newExtractor(newPython())
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	set(ex)
	fd := &fileData{Path: "huge.py", Lang: "python"}
	if err := ex.extract(context.Background(), src, fd, nil, false); err != nil {
		t.Fatal(err)
	}
	return fd
}

// TestArgCursorMatchesFullScan: argument positions counted incrementally
// (one call with many arguments was quadratic) are those of a full rescan,
// with nested calls, strings holding commas, keywords and starred arguments.
func TestArgCursorMatchesFullScan(t *testing.T) {
	src := []byte(`def g(*a, **k):
    return a

def h():
    g(1, "a,b", g(2, 3), [4, 5], {6: 7}, x=8, y=g(9, 10))
    g(1, *rest, 2, 3)
    g((1, 2), 'q,(', g(g(1), 2), 3)
    g(
        1,
        2,  # a, comment
        3,
    )
def k(v):
    g(` + strings.Repeat("v, ", 2000) + `v)
`)
	inc := extractWith(t, src, func(*extractor) {})
	full := extractWith(t, src, func(e *extractor) { e.fullArgScan = true })
	ij, _ := json.Marshal(inc.Refs.Unpack())
	fj, _ := json.Marshal(full.Refs.Unpack())
	if string(ij) != string(fj) {
		t.Fatalf("incremental argument positions differ from a full scan")
	}
	n := 0
	for _, r := range inc.Refs.All() {
		if r.Kind == refArg && strings.HasPrefix(r.Name, "2000"+argSep) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("want the 2001st argument at slot 2000 once, got %d", n)
	}
}

// TestFileBudgetsReported: past the per-file budgets definitions and
// references are left out, and the file's caveat says how many and where.
func TestFileBudgetsReported(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "def f%d(a):\n    return g(a) + h(a)\n\n", i)
	}
	src := []byte(b.String())
	whole := extractWith(t, src, func(*extractor) {})
	capped := extractWith(t, src, func(e *extractor) { e.maxDefs, e.maxRefs = 50, 100 })
	if len(whole.Defs) != 200 || whole.Caveat != "" {
		t.Fatalf("uncapped: %d defs, caveat %q", len(whole.Defs), whole.Caveat)
	}
	if len(capped.Defs) != 50 {
		t.Errorf("capped: %d defs, want 50", len(capped.Defs))
	}
	if capped.Refs.Len() > 100 || capped.Refs.Len() == 0 {
		t.Errorf("capped: %d refs, want 1..100", capped.Refs.Len())
	}
	for _, want := range []string{"more than 50 definitions: 150 left out", "more than 100 references:", "the first at line "} {
		if !strings.Contains(capped.Caveat, want) {
			t.Errorf("caveat %q lacks %q", capped.Caveat, want)
		}
	}
	if p := cachedProblem(capped); p == nil || !strings.Contains(p.Reason, "definitions") || p.Skipped {
		t.Errorf("the caveat is not reported as a problem of an indexed file: %+v", p)
	}
}

// TestGiantNodeCutInParts: one top-level definition bigger than the largest
// part is cut inside (bounded parser memory) instead of being parsed whole;
// its references are all found and the caveat says so.
func TestGiantNodeCutInParts(t *testing.T) {
	var b strings.Builder
	b.WriteString("import os\n\ndef giant(a):\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "    x%d = call%d(a, os.path.join(a, 'b'))\n", i, i)
	}
	b.WriteString("    return a\n\ndef after():\n    return giant(1)\n")
	src := []byte(b.String())
	whole := extractWith(t, src, func(*extractor) {})
	parts := extractWith(t, src, func(e *extractor) { e.run.chunkAt, e.run.chunkLen, e.run.maxPart = 1, 16<<10, 32<<10 })
	if whole.Caveat != "" || whole.Syntax {
		t.Fatalf("whole parse: caveat %q syntax %v", whole.Caveat, whole.Syntax)
	}
	if parts.Syntax {
		t.Errorf("the cuts' syntax errors reported as the file's")
	}
	if !strings.Contains(parts.Caveat, "a single top-level statement of more than 0 MB at line 3 was cut inside") {
		t.Errorf("caveat: %q", parts.Caveat)
	}
	calls := func(fd *fileData) map[string]int {
		m := map[string]int{}
		for _, r := range fd.Refs.All() {
			if r.Kind == refCall {
				m[r.Name]++
			}
		}
		return m
	}
	wc, pc := calls(whole), calls(parts)
	for name, n := range wc {
		if pc[name] != n {
			t.Errorf("call %s: %d in parts, %d whole", name, pc[name], n)
		}
	}
	names := func(fd *fileData) string {
		var s []string
		for _, d := range fd.Defs {
			s = append(s, d.Name)
		}
		return strings.Join(s, " ")
	}
	if got := names(parts); got != "giant after" {
		t.Errorf("definitions in parts: %q, want giant after", got)
	}
}
