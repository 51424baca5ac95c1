package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestAssemblePatchEqualsFull checks that a snapshot patched from the previous
// one after body edits is exactly the snapshot a full assembly builds.
func TestAssemblePatchEqualsFull(t *testing.T) {
	root := writeTree(t, pyFixture)
	p := openT(t, root, Options{NoCache: true})
	edits := []struct{ file, from, to string }{
		{"pkg/util.py", `return make("x")`, "unknown_call(os.getenv(\"OTHER\"))\n    return make(\"y\")"},
		{"pkg/models.py", "return self.price()", "x = self.save() + missing()\n        return self.price()"},
		{"pkg/models.py", "return 2", "\n\n        return 3"}, // lines move
		{"app.py", "unknown_func()", "pkg.util.env()"},
	}
	for i, e := range edits {
		path := writeEdit(t, root, i, e.file, e.from, e.to)
		before := p.b.fastBuilds
		g, err := p.UpdateFiles(context.Background(), []string{path})
		if err != nil {
			t.Fatal(err)
		}
		if p.b.fastBuilds != before+1 {
			t.Fatalf("edit %d: body edit did not take the fast path", i)
		}
		ordered := make([]*fileBuild, 0, len(p.b.fbs))
		for _, n := range g.nodes {
			if n.Kind == KindFile {
				ordered = append(ordered, p.b.fbs[n.Path])
			}
		}
		full := p.b.assemble(ordered, g.envVals)
		gf := flatCopy(g)
		if !reflect.DeepEqual(ids(g.nodes), ids(full.nodes)) {
			t.Errorf("edit %d: node lists differ", i)
		}
		if !reflect.DeepEqual(g.Edges(), full.edges) {
			t.Errorf("edit %d: edges differ", i)
		}
		if !reflect.DeepEqual(g.stats, full.stats) {
			t.Errorf("edit %d: stats differ:\n%+v\n%+v", i, g.stats, full.stats)
		}
		for _, m := range []struct {
			name string
			a, b any
		}{{"byID", gf.byID, full.byID}, {"byFile", gf.byFile, full.byFile}, {"fileNode", gf.fileNode, full.fileNode},
			{"children", gf.children, full.children}, {"envNames", gf.envNames, full.envNames},
			{"imports", gf.imports, full.imports}, {"globals", gf.globals, full.globals}} {
			if !reflect.DeepEqual(m.a, m.b) {
				t.Errorf("edit %d: %s differs", i, m.name)
			}
		}
		sameGraph(t, g, openT(t, root, Options{NoCache: true}).Graph())
	}
	// An interface change (new definition) is assembled from scratch.
	util := filepath.Join(root, "pkg", "util.py")
	src, _ := os.ReadFile(util)
	os.WriteFile(util, append(src, "\n\ndef added():\n    pass\n"...), 0o644)
	before := p.b.fastBuilds
	g, err := p.UpdateFiles(context.Background(), []string{util})
	if err != nil {
		t.Fatal(err)
	}
	if p.b.fastBuilds != before {
		t.Error("a new definition took the fast path")
	}
	sameGraph(t, g, openT(t, root, Options{NoCache: true}).Graph())
}

func ids(ns []*Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.ID
	}
	return out
}
