package codegraph

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// determinismProject has, in Python, Go and JavaScript, the shapes whose
// edges the builder finds through maps: a base class with many subclasses
// (dispatches edges), getattr with a name prefix (members of a class) and a
// decorator applied to several functions (values of its parameter).
func determinismProject() map[string]string {
	files := map[string]string{
		"go.mod": "module ex.com/det\n\ngo 1.22\n",
		"py/base.py": `
class Base:
    def run(self):
        return self.step()

    def step(self):
        return 0

    def get_a(self):
        return 1

    def get_b(self):
        return 2

    def get_c(self):
        return 3

    def get_d(self):
        return 4

    def describe(self, what):
        return getattr(self, "get_" + what)()


def deco(f):
    f()
    return f
`,
		"shapes/shape.go": "package shapes\n\n// Shape has an area.\ntype Shape interface{ Area() int }\n\nfunc total(s Shape) int { return s.Area() }\n",
		"web/base.js":     "export class Base {\n  run() { return this.step() }\n  step() { return 0 }\n}\n",
	}
	var py, js, deco strings.Builder
	py.WriteString("from py.base import Base\n")
	js.WriteString("import { Base } from './base'\n")
	for _, k := range []string{"A", "B", "C", "D", "E", "F", "G"} {
		fmt.Fprintf(&py, "\n\nclass %s(Base):\n    def step(self):\n        return 1\n\n    def get_a(self):\n        return 5\n", k)
		fmt.Fprintf(&deco, "\n\n@deco\ndef make_%s():\n    return 0\n", strings.ToLower(k))
		fmt.Fprintf(&js, "\nexport class %s extends Base {\n  step() { return 1 }\n}\n", k)
		files["shapes/"+strings.ToLower(k)+".go"] = fmt.Sprintf(
			"package shapes\n\n// %s is a Shape.\ntype %s struct{}\n\n// Area is its area.\nfunc (%s) Area() int { return 1 }\n", k, k, k)
	}
	files["py/base.py"] += deco.String()
	files["py/kinds.py"] = py.String()
	files["web/kinds.js"] = js.String()
	return files
}

// graphLines lists g's nodes (all exported fields) and edges in the order
// Nodes and Edges give them.
func graphLines(g *Graph) []string {
	var out []string
	for _, n := range g.Nodes() {
		out = append(out, fmt.Sprintf("N %+v", *n))
	}
	for _, e := range g.Edges() {
		out = append(out, fmt.Sprintf("E %s -%s-> %s @%d", e.From, e.Kind, e.To, e.Line))
	}
	return out
}

// TestIndexOrderIsDeterministic indexes one project several times, with
// GOMAXPROCS from 1 up and Go's map iteration order random on each run,
// and wants the same nodes and edges in the same order every time: the
// graph's order reaches persisted files, exports and the views, and an
// order taken from a map iteration would make them differ run to run.
func TestIndexOrderIsDeterministic(t *testing.T) {
	root := writeTree(t, determinismProject())
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first []string
	for run := range 8 {
		runtime.GOMAXPROCS(1 + run%4)
		g := openT(t, root, Options{NoCache: true}).Graph()
		lines := graphLines(g)
		if run == 0 {
			// The shapes are there, so a varying order would show.
			for _, c := range []struct {
				from string
				kind EdgeKind
				n    int
			}{
				{"py.base.Base.run", EdgeDispatches, 7},
				{"py.base.Base.describe", EdgeCalls, 4},
				{"py.base.deco", EdgeCalls, 7},
				{"ex.com/det/shapes.total", EdgeDispatches, 7},
				{"web/base:Base.run", EdgeDispatches, 7},
			} {
				if got := outEdges(t, g, c.from, c.kind); len(got) < c.n {
					t.Fatalf("%s -%s-> %v: want at least %d", c.from, c.kind, got, c.n)
				}
			}
			first = lines
			continue
		}
		if !slices.Equal(lines, first) {
			i := 0
			for i < min(len(lines), len(first)) && lines[i] == first[i] {
				i++
			}
			t.Fatalf("run %d (GOMAXPROCS %d): %d lines, first differing at %d (%q), run 0 had %d lines (%q)",
				run, runtime.GOMAXPROCS(0), len(lines), i, at(lines, i), len(first), at(first, i))
		}
	}
}

// at returns s[i], or "" past its end.
func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}
