package codegraph

import "testing"

// setTestNodes makes nodes the only nodes builder b knows (tests of the
// hierarchy walks, which read nodes through b.node): each in a file of its
// own, as that file's node.
func setTestNodes(b *builder, nodes map[string]*Node) {
	b.locs = newNodeLocs(len(nodes))
	for id, n := range nodes {
		b.locs.addFile(&fileBuild{fileID: id, nodes: []*Node{n}}, nil)
	}
}

// TestNodeAndDefAt checks the builder's one table of node locations
// against the graph it built: every node of the graph (files, definitions,
// a Go method attached to its receiver type in another file, a manifest's
// package) is what b.node returns for its ID, and b.defAt finds exactly the
// definitions, each at the file and index whose ID it is. It fails if a
// lookup answers with another node object (an attached method's copy), a
// file or package node passes for a definition, or a definition is missed.
func TestNodeAndDefAt(t *testing.T) {
	root := writeTree(t, map[string]string{
		"requirements.txt": "requests>=2.31\n",
		"pkg/__init__.py":  "",
		"pkg/a.py":         "class A:\n    def m(self):\n        pass\n\ndef f():\n    return A()\n",
		"b.py":             "from pkg.a import A, f\n\nclass B(A):\n    def m(self):\n        f()\n",
		"go.mod":           "module example.com/m\n\ngo 1.22\n",
		"t.go":             "package m\n\ntype T struct{}\n",
		"u.go":             "package m\n\nfunc (t *T) M() int { return 0 }\n",
	})
	p := openT(t, root, Options{NoCache: true})
	g := p.Graph()
	b := p.b
	defs, files, pkgs, attached := 0, 0, 0, 0
	for _, n := range g.Nodes() {
		if got := b.node(n.ID); got != viewOf(n) {
			t.Fatalf("node(%s) = %+v, want the graph's %+v", n.ID, got, n)
		}
		loc, ok := b.defAt(n.ID)
		switch n.Kind {
		case KindFile:
			files++
			if ok {
				t.Fatalf("defAt(%s) found the file node %s", n.ID, n.Path)
			}
			continue
		case KindPackage:
			pkgs++
			if ok {
				t.Fatalf("defAt(%s) found the package node %s", n.ID, n.QualName)
			}
			continue
		}
		defs++
		if !ok || loc.fb.ids[loc.idx] != n.ID || loc.fb.fd.Path != n.Path {
			t.Fatalf("defAt(%s) (%s) = %v, %v", n.ID, n.QualName, loc, ok)
		}
		if n.Name == "M" && n.Parent != loc.fb.fileID {
			attached++ // T.M, attached to T of t.go
		}
	}
	if files != 7 || pkgs != 1 || defs != 7 || attached != 1 {
		t.Fatalf("files %d, packages %d, definitions %d, attached methods %d: want 7, 1, 7, 1", files, pkgs, defs, attached)
	}
	for _, id := range []string{"", "no such node", g.Nodes()[0].ID + "x"} {
		if b.node(id).found() {
			t.Fatalf("node(%q) found a node", id)
		}
		if _, ok := b.defAt(id); ok {
			t.Fatalf("defAt(%q) found a definition", id)
		}
	}
}

// TestNodeLocs checks the node table's encoding: an ID is found only as
// nodeID spells it (upper-case hex, another length or other text are
// other IDs), a file replaced by an update keeps its number (the table
// does not grow with every edit), and packages have no file.
func TestNodeLocs(t *testing.T) {
	a := &fileBuild{fileID: hex16(1), ids: []string{hex16(2), hex16(0xabcdef0123456789)}}
	locs := newNodeLocs(4)
	locs.addFile(a, nil)
	locs.addPackage(hex16(3))
	locs.addFile(&fileBuild{fileID: "not hex", ids: []string{"x"}}, nil)
	for _, c := range []struct {
		id   string
		file bool
		idx  int32
	}{{hex16(1), true, -1}, {hex16(2), true, 0}, {"abcdef0123456789", true, 1}, {hex16(3), false, -1}, {"x", true, 0}} {
		l, ok := locs.get(c.id)
		if !ok || (l.fb != nil) != c.file || l.idx != c.idx {
			t.Fatalf("get(%q) = %+v, %v; want file %v, index %d", c.id, l, ok, c.file, c.idx)
		}
	}
	for _, id := range []string{"", "ABCDEF0123456789", "abcdef012345678", "abcdef01234567890", "abcdef012345678g", hex16(4)} {
		if _, ok := locs.get(id); ok {
			t.Fatalf("get(%q) found a node", id)
		}
	}
	b := &fileBuild{fileID: hex16(1), ids: []string{hex16(2), hex16(5)}}
	n := len(locs.files)
	locs.addFile(b, a)
	if l, ok := locs.get(hex16(5)); !ok || l.fb != b || l.idx != 1 || len(locs.files) != n || b.locNum != a.locNum {
		t.Fatalf("after replacing a file: %+v, %v, %d files (was %d), number %d (was %d)", l, ok, len(locs.files), n, b.locNum, a.locNum)
	}
	if l, _ := locs.get(hex16(2)); l.fb != b {
		t.Fatalf("a replaced file's definition still points at the old file")
	}
}
