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

// A final (NoUpdates) build makes no definition nodes before its
// assembly, and what the resolution reads of a node (builder.node) is then
// what it reads in a normal build: kinds, names, parents (a Go method's
// receiver type, in its file or another of the package), signatures. Its
// graph, with the nodes made at the assembly, is a normal build's. It fails
// if a final build makes the nodes early again, if a view drifts from the
// node fillFileBuild and attachReceivers make, or if makeDefNodes makes
// another node (a qualified name or hash made by another rule).
func TestFinalBuildDefersNodes(t *testing.T) {
	tree := nodeTextFixture()
	tree["lib/u.go"] = "package lib\n\nfunc (t *T) Put(n int) { t.n = n }\n"
	root := writeTree(t, tree)
	ref := openT(t, root, Options{NoCache: true}).Graph()
	deferred, checked, attached := 0, 0, 0
	hook := func(b *builder) {
		for path, fb := range b.fbs {
			if !fb.nodesLater {
				continue
			}
			deferred++
			if len(fb.nodes) != 1 {
				t.Errorf("%s: %d nodes made before the assembly", path, len(fb.nodes))
			}
		}
		for _, n := range ref.Nodes() {
			if got := b.node(n.ID); got != viewOf(n) {
				t.Errorf("node(%s) = %+v before the assembly, want %+v", n.ID, got, viewOf(n))
			}
			if fn, _ := ref.FileNode(n.Path); n.Language == "go" && n.Kind == KindMethod && n.Parent != fn.ID {
				attached++
			}
			checked++
		}
	}
	final := openT(t, root, Options{NoCache: true, NoUpdates: true, testResolved: hook})
	if deferred < 4 || checked < 15 || attached != 3 {
		t.Fatalf("%d files with deferred nodes, %d nodes checked, %d Go methods attached to their type: want >= 4, >= 15, 3", deferred, checked, attached)
	}
	graphsEqual(t, "NoUpdates", final.Graph(), ref)
}
