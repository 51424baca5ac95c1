package codegraph

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// kidsOldPatterns are the patterns pythonQuery's children captures replace
// (language.captureKids), each after the pattern replacing it.
var kidsOldPatterns = [][2]string{
	{`(assignment left: (identifier) @name right: (_) @object.pops) @ref.value`,
		`(assignment left: (identifier) @name right: [(boolean_operator (_) @object.ref) (conditional_expression (_) @object.ref) (parenthesized_expression (_) @object.ref) (parenthesized_expression [(boolean_operator (_) @object.ref) (conditional_expression (_) @object.ref)])]) @ref.value`},
	{`(assignment left: (attribute object: (identifier) attribute: (identifier)) @name right: (_) @object.ops2) @ref.value`,
		`(assignment left: (attribute object: (identifier) attribute: (identifier)) @name right: [(boolean_operator (_) @object.ref) (conditional_expression (_) @object.ref) (parenthesized_expression [(boolean_operator (_) @object.ref) (conditional_expression (_) @object.ref)])]) @ref.value`},
	{`(return_statement (_) @object.ops) @ref.value`,
		`(return_statement [(boolean_operator (_) @object.ref) (conditional_expression (_) @object.ref)]) @ref.value`},
	{`(class_definition superclasses: (_) @name.kid) @ref.inherit`, `(class_definition superclasses: (argument_list (identifier) @name)) @ref.inherit`},
	{`(return_statement) @ref.use @name.kid`, `(return_statement (identifier) @name) @ref.use`},
	{`(decorator) @ref.use @name.kid`, `(decorator (identifier) @name) @ref.use`},
	{`(type) @ref.use @name.kid`, `(type (identifier) @name) @ref.use`},
	{`(except_clause) @ref.use @name.kid`, `(except_clause (identifier) @name) @ref.use`},
	{`alias: (_) @name.kid)) @ref.assign`, `alias: (as_pattern_target (identifier) @name))) @ref.assign`},
	{`(decorator) @ref.decorator @name.kid`, `(decorator (identifier) @name) @ref.decorator`},
	{`(parameters) @local @name.kid`, `(parameters (identifier) @name) @local`},
	{`(typed_parameter) @local @name.kid`, `(typed_parameter (identifier) @name) @local`},
	{`(lambda_parameters) @local @name.kid`, `(lambda_parameters (identifier) @name) @local`},
	{`(as_pattern alias: (_) @name.kid) @local`, `(as_pattern alias: (as_pattern_target (identifier) @name)) @local`},
}

// TestPythonCaptureKidsSameAsPatterns: the children captures find the same
// references as the nested patterns they replace, on code with every shape
// they cover (operands of "or"/"and", of "if … else", inside parentheses,
// nested, with literals, calls, comments and syntax errors among them; the
// identifiers among arguments, parameters, bases, decorators, annotations,
// except clauses and with … as targets, and a class with 3,000 bases).
// A missing rule ("(parenthesized_expression)" for `x = (a)`), a rule too
// many (the same for `self.x = (a)`) or a filter not applied to the children
// fails it.
func TestPythonCaptureKidsSameAsPatterns(t *testing.T) {
	old := newPython()
	for _, p := range kidsOldPatterns {
		if !strings.Contains(old.query, p[0]) {
			t.Fatalf("pattern not in pythonQuery: %s", p[0])
		}
		old.query = strings.Replace(old.query, p[0], p[1], 1)
	}
	old.captureKids = nil
	src := []byte(`import os
x = a or b
x = a and b.c
x = a if c else b.d
x = (a)
x = (a.b)
x = (a or b)
x = (a if c else d)
x = (a or (b or c))
x = a or b or c
x = f() or b
x = "s" or b
x = a or # note
    b
x = ((a or b))
x: int = a or b
x = y = a or b
self.x = a or b
self.x = a if c else d
self.x = (a)
self.x = (a or b)
self.x = (a if c else d)
o.y = b or c
def f(a, b, c):
    return a or b
def g(a, b, c):
    return a if b else c.d
def h(a, b):
    return (a or b)
def i(a):
    return a
def j(a, b):
    return a or
def k(a, b):
    x = a or ) b
    return not a or b
class C(B, m.D, E, metaclass=M):
    @dec
    @m.dec
    def f(self, a, b: int, c: T = 1, *args, d, **kw) -> R:
        g(a, b, c.d, *args, k=a, **kw)
        h = lambda p, q, *r: p
        g(p, q)
        with open(a) as fh, g(b) as (u, v):
            return fh
        try:
            pass
        except (E, F) as err:
            raise err
        except G:
            return a
        return a
    def g(self, x: List[int]) -> x.y:
        return x
        return (x)
from m import E, F, G, T, R, List, B, M, D, dec, p
`)
	var many strings.Builder
	many.WriteString("class Many(")
	for i := 0; i < 3000; i++ {
		many.WriteString("B, ")
	}
	many.WriteString("E):\n    pass\n")
	src = append(src, many.String()...)
	got := kidsRefs(t, newPython(), src)
	want := kidsRefs(t, old, src)
	if !slices.Equal(got, want) {
		t.Errorf("children captures:\n got %q\nwant %q", got, want)
	}
	if len(want) < 3100 {
		t.Errorf("%d references: the test's source no longer has its class of many bases", len(want))
	}
	for _, must := range []string{"value x a line 2", "value x b line 2", "value x a line 5", "value x a line 9", "value x b line 12", "value self.x a line 18", "value self.x c line 22", "value <return> a line 25", "value <return> c.d line 27"} {
		if !slices.ContainsFunc(want, func(w string) bool { return strings.HasPrefix(w, must+" def") }) {
			t.Errorf("the old patterns do not find %q: the test's source no longer covers them", must)
		}
	}
	if slices.ContainsFunc(want, func(w string) bool { return strings.HasPrefix(w, "value self.x a line 20 def") }) {
		t.Errorf("the old patterns find self.x = (a): the test's source no longer tells ops2 from pops")
	}
}

// kidsRefs returns the references of src as l extracts them.
func kidsRefs(t *testing.T, l *language, src []byte) []string {
	t.Helper()
	ex, err := newExtractor(l)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	fd := &fileData{Path: "k.py", Lang: "python"}
	if err := ex.extract(context.Background(), src, fd, nil, false); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range fd.Refs.Unpack() {
		kind := fmt.Sprint(r.Kind)
		if r.Kind == refValue {
			kind = "value"
		}
		out = append(out, fmt.Sprintf("%s %s %s line %d def %d", kind, r.Name, r.Object, r.Line, r.Def))
	}
	return out
}

// TestCaptureKidRulesErrors: a children rule naming a type the grammar
// lacks, or not a named type, is an error, not a rule that never applies.
func TestCaptureKidRulesErrors(t *testing.T) {
	q, err := compileQuery(newPython().grammar(), "(identifier) @x")
	if err != nil {
		t.Fatal(err)
	}
	defer q.close()
	for _, bad := range []string{"(no_such_node)", `"or"`, "(boolean_operator) (nope)", "(a) (b) (c)", ""} {
		if _, err := captureKidRules(q, []string{bad}); err == nil {
			t.Errorf("rule %q accepted", bad)
		}
	}
	rs, err := captureKidRules(q, []string{"(boolean_operator)", "(parenthesized_expression) (conditional_expression)"})
	if err != nil || len(rs) != 2 || rs[0].outer == 0 || rs[0].inner != 0 || rs[1].inner == 0 {
		t.Errorf("rules = %v, %v", rs, err)
	}
}
