package codegraph

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// pySubPatterns are pythonQuery's sub query (after subQueryMarker) and the
// @sub markers of its main part.
func pySubPatterns(t *testing.T, l *language) (markers []string, sub string) {
	t.Helper()
	main, sub, ok := strings.Cut(l.query, subQueryMarker)
	if !ok {
		t.Fatal("pythonQuery has no sub query")
	}
	for _, line := range strings.Split(main, "\n") {
		if strings.HasSuffix(strings.TrimSpace(line), "@"+subCapture) {
			markers = append(markers, line)
		}
	}
	return markers, sub
}

// pyWithoutSub returns Python with its sub query's patterns in the main
// query (where they were before) and no @sub markers.
func pyWithoutSub(t *testing.T) *language {
	t.Helper()
	l := newPython()
	markers, sub := pySubPatterns(t, l)
	if len(markers) == 0 {
		t.Fatal("pythonQuery has no @sub markers")
	}
	main, _, _ := strings.Cut(l.query, subQueryMarker)
	for _, m := range markers {
		main = strings.Replace(main, m+"\n", "", 1)
	}
	l.query = main + "\n" + sub
	return l
}

// subExtract extracts src with l, set changing the runner first, and
// returns its references (in order) and globals as text.
func subExtract(t *testing.T, l *language, src []byte, set func(*tsRunner)) (refs, globals []string) {
	t.Helper()
	ex, err := newExtractor(l)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	if set != nil {
		set(ex.run)
	}
	fd := &fileData{Path: "s.py", Lang: "python"}
	if err := ex.extract(context.Background(), src, fd, nil, false); err != nil {
		t.Fatal(err)
	}
	for _, r := range fd.Refs.Unpack() {
		kind := fmt.Sprint(r.Kind)
		if r.Kind == refValue {
			kind = "value"
		}
		refs = append(refs, fmt.Sprintf("%s %s %s line %d def %d", kind, r.Name, r.Object, r.Line, r.Def))
	}
	for _, g := range fd.Globals {
		globals = append(globals, fmt.Sprintf("%s %d-%d", g.Name, g.Start, g.End))
	}
	return refs, globals
}

// TestPythonSubQuerySameAsMain: the patterns of pythonQuery's sub query
// (module-level assignments, class-body assignments from a call) find the
// same globals and references, in the same order, as when they are in the
// main query: at module level, in nested classes, classes inside functions
// and under decorators, with syntax errors, in a class nested deeper than a
// query band (CL_BAND), in one pass, and in a file parsed in parts (each
// part's module runs the sub query). Dropping a @sub marker, or running the
// sub query without its depth bound or with the wrong capture ids, fails it.
func TestPythonSubQuerySameAsMain(t *testing.T) {
	var b strings.Builder
	b.WriteString(`import os
x = 1
y: int = 2
a = b = f(x)
if x:
    z = 3
def f(p):
    q = g(p)
    class L:
        w = g(p)
    return q
class C:
    u = f(x)
    v = f(os.sep)
    w = f(os.sep, "s")
    t = f(x, y)
    s = f(x.y.z)
    class D:
        r = f(x)
        def m(self):
            k = f(x)
    (p) = f(x)
@dec
class E(C):
    e = f(E)
class Broken:
    b = f(x
    c = f(x)
n = f(
m = 4
`)
	// Classes nested past a band of the query's passes.
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "%sclass N%d:\n%s    n%d = f(x)\n", strings.Repeat("    ", i), i, strings.Repeat("    ", i), i)
	}
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "g%d = f(x%d)\nclass K%d:\n    k = f(y)\n", i, i, i)
	}
	src := []byte(b.String())
	old := pyWithoutSub(t)
	for _, mode := range []struct {
		name string
		set  func(*tsRunner)
	}{
		{"bands", nil},
		{"one pass", func(r *tsRunner) { r.onePass = true }},
		{"parts", func(r *tsRunner) { r.chunkAt, r.chunkLen, r.maxPart = 1, 2<<10, 64<<10 }},
	} {
		gotRefs, gotGlobals := subExtract(t, newPython(), src, mode.set)
		wantRefs, wantGlobals := subExtract(t, old, src, mode.set)
		if !slices.Equal(gotGlobals, wantGlobals) {
			t.Errorf("%s: globals\n got %q\nwant %q", mode.name, gotGlobals, wantGlobals)
		}
		if !slices.Equal(gotRefs, wantRefs) {
			t.Errorf("%s: references differ (%d, want %d)", mode.name, len(gotRefs), len(wantRefs))
			for i := range min(len(gotRefs), len(wantRefs)) {
				if gotRefs[i] != wantRefs[i] {
					t.Errorf("%s: first difference at %d: got %q, want %q", mode.name, i, gotRefs[i], wantRefs[i])
					break
				}
			}
		}
		// The source still covers what the sub query finds.
		if len(wantGlobals) < 300 || !slices.Contains(wantGlobals, "x 10-15") {
			t.Errorf("%s: %d globals, want the module's: the source no longer covers them", mode.name, len(wantGlobals))
		}
		for _, must := range []string{"value u f(x)", "value v f(os.sep)", "value r f(x)", "value w g(p)", "value n59 f(x)", "value k f(y)"} {
			if !slices.ContainsFunc(wantRefs, func(r string) bool { return strings.HasPrefix(r, must+" line") }) {
				t.Errorf("%s: no %q among the references: the source no longer covers it", mode.name, must)
			}
		}
	}
}

// TestSubQueryErrors: a sub query without @sub markers, or with a filter
// capture, is an error, not patterns that never run or run unfiltered.
func TestSubQueryErrors(t *testing.T) {
	g := newPython().grammar()
	if _, err := compileQuery(g, "(identifier) @x"+subQueryMarker+"(module) @y"); err == nil {
		t.Error("a sub query without @sub markers compiled")
	}
	if _, err := compileQuery(g, "(module) @sub"+subQueryMarker+"(module (nope)) @y"); err == nil || !strings.Contains(err.Error(), "offset") {
		t.Errorf("a bad sub query: %v", err)
	}
	l := newPython()
	l.query = "(module) @sub" + subQueryMarker + "(module (expression_statement) @object.operand)"
	if _, err := newExtractor(l); err == nil {
		t.Error("a sub query with a filter capture was accepted")
	}
}
