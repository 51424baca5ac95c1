package codegraph

import (
	"testing"
)

// nodeTextFixture has what a qualified name is made of: nested Python
// classes and functions, duplicate names (a property's getter and setter),
// a Go method with a receiver, a generic receiver and a Go package.
func nodeTextFixture() map[string]string {
	return map[string]string{
		"pkg/__init__.py": "",
		"pkg/mod.py": "class Outer:\n    class Inner:\n        def m(self):\n            return 1\n" +
			"    @property\n    def v(self):\n        return 2\n    @v.setter\n    def v(self, x):\n        pass\n\n" +
			"def top():\n    def nested():\n        return Outer.Inner().m()\n    return nested()\n",
		"go.mod":    "module example.com/m\n\ngo 1.22\n",
		"lib/t.go":  "package lib\n\ntype T struct{ n int }\n\nfunc (t *T) Get() int { return t.n }\n\ntype L[K any] struct{ k K }\n\nfunc (l L[K]) Key() K { return l.k }\n\nfunc New() *T { return &T{} }\n",
		"main.go":   "package main\n\nimport \"example.com/m/lib\"\n\nfunc main() { _ = lib.New().Get() }\n",
		"script.js": "class A { run() { return 1 } }\nfunction f() { return new A().run() }\n",
	}
}

// restoreNodeText makes the qualified names and hashes shedNodeText cleared
// exactly as fillFileBuild made them (a change to one without the other
// fails here), and a NoUpdates index, which sheds them through its
// resolution, gives the graph of a normal one.
func TestNodeTextShedAndRestored(t *testing.T) {
	root := writeTree(t, nodeTextFixture())
	p := openT(t, root, Options{NoCache: true})
	p.mu.Lock()
	fbs := p.b.fbs
	p.mu.Unlock()
	checked := 0
	for path, fb := range fbs {
		if len(fb.nodes) <= 1 {
			continue
		}
		want := make([]Node, len(fb.nodes))
		for i, n := range fb.nodes {
			want[i] = *n
		}
		shedNodeText(fb)
		for _, n := range fb.nodes[1:] {
			if n.QualName != "" || n.Hash != "" {
				t.Fatalf("%s: %s kept its qualified name or hash", path, n.Name)
			}
		}
		restoreNodeText(fb)
		for i, n := range fb.nodes {
			if *n != want[i] {
				t.Errorf("%s: node %d restored as %+v, made as %+v", path, i, *n, want[i])
			}
			if i > 0 && (n.QualName == "" || len(n.Hash) != 16) {
				t.Errorf("%s: node %s has no qualified name or hash", path, n.Name)
			}
			checked++
		}
	}
	if checked < 12 {
		t.Fatalf("only %d nodes checked", checked)
	}
	ref := p.Graph()
	final := openT(t, root, Options{NoCache: true, NoUpdates: true})
	graphsEqual(t, "NoUpdates", final.Graph(), ref)
}
