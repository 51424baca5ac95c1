package codegraph

import (
	"context"
	"strings"
	"testing"
)

// After the snapshot writer compacts an update's graph, every file's
// results point into the compacted edge list, not into the list the update
// was made over (which they kept alive until the next edit: a second copy
// of every edge); and the next update, starting from there, still equals a
// fresh index.
func TestWriterCompactionReleasesPreviousEdges(t *testing.T) {
	files := map[string]string{"alone.py": "def f():\n    return g()\n\n\ndef g():\n    return 1\n"}
	for k, v := range pyFixture {
		files[k] = v
	}
	root := writeTree(t, files) // alone.py: results no update touches
	p := openT(t, root, Options{})
	ctx := context.Background()
	edit := func(from, to string) *Graph {
		t.Helper()
		path := rewriteFile(t, root, "pkg/util.py", func(s string) string {
			if !strings.Contains(s, from) {
				t.Fatalf("%q not in pkg/util.py", from)
			}
			return strings.Replace(s, from, to, 1)
		})
		g, err := p.UpdateFiles(ctx, []string{path})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := edit("it.save()", "it.save()\n    it.save()")
	if g.ov == nil {
		t.Fatal("the body edit made a flat graph; the test needs an overlay")
	}
	p.mu.Lock()
	p.snapGen++
	p.mu.Unlock()
	p.flushSnapshot()
	_, f := g.ov.view()
	if f == nil {
		t.Fatal("the snapshot writer did not compact the update's graph")
	}
	homes := [][]Edge{f.edges}
	p.mu.Lock()
	for _, fb := range p.b.ordered {
		for _, r := range []*fileResult{fb.inh, fb.res} {
			if r != nil && len(r.edges) > 0 && !inHomes(homes, &r.edges[0]) {
				t.Errorf("%s: results still point into the list the update was made over (%d edges)", fb.fd.Path, len(r.edges))
			}
		}
	}
	p.mu.Unlock()
	g = edit("it.save()\n    it.save()", "it.save()")
	graphsEqual(t, "edit after the writer's compaction", g, openT(t, root, Options{NoCache: true}).Graph())
}
