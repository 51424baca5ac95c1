package codegraph

import (
	"fmt"
	"slices"
	"testing"
)

// TestPythonFilterCaptures: the query's filter captures (`(_) @object.operand`
// and the like, see language.captureTypes) keep exactly the node types the
// alternations they replace matched. A literal operand, an "in" test read as
// a comparison, or a second argument must not become an implicit call, and
// len(x)-style calls keep the old pattern's reading (an identifier only as the
// sole argument, an attribute, call or subscript as the first of any).
func TestPythonFilterCaptures(t *testing.T) {
	src := []byte(`def f(a, b, s, p):
    a == b
    "x" == b
    a in b
    a is b
    a + b
    "x" + b
    s += 1
    (a) -= 1
    int(a)
    int(a, 16)
    int(p.q, 16)
    int("7")
    for x in a.items():
        pass
    for y in "ab":
        pass
    return a
`)
	fd := extractT(t, src, false)
	var got []string
	for _, r := range fd.Refs.Unpack() {
		switch {
		case r.Kind == refImplicit && r.Name != pyAttrToken:
			got = append(got, fmt.Sprintf("implicit %s %s line %d", r.Name, r.Object, r.Line))
		case r.Kind == refValue && r.Name == returnHint:
			got = append(got, fmt.Sprintf("return %s", r.Object))
		}
	}
	want := []string{
		"implicit == a line 2",
		"implicit in b line 4",
		"implicit + a line 6",
		"implicit += s line 8",
		"implicit int a line 10",
		"implicit int p.q line 12",
		"implicit for a.items() line 14",
		"return a",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("implicit calls and returns:\n got %q\nwant %q", got, want)
	}
}
