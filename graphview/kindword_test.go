package graphview

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"codeloom/app/codegraph"
)

// TestGoTypesShownAsTypes: on a graph the code graph engine built, a Go
// struct's frame in the symbol view and its hover text say "type" (Go has
// no classes); a Python class's still say "class".
func TestGoTypesShownAsTypes(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module example.com/m\n\ngo 1.22\n",
		"lex.go":  "package m\n\ntype Input struct{ s string }\n\nfunc (i *Input) ExpectText() string { return i.s }\n\nfunc Use() string {\n\tin := &Input{}\n\treturn in.ExpectText()\n}\n",
		"tool.py": "class Store:\n    def add(self, x):\n        return x\n\ndef main():\n    Store().add(1)\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := codegraph.Open(context.Background(), root, codegraph.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ix := NewIndex(p.Graph())
	byName := map[string]*codegraph.Node{}
	for _, n := range p.Graph().Nodes() {
		byName[n.Name] = n
	}
	for _, c := range []struct{ method, caller, frame, hover string }{
		{"ExpectText", "Use", "type Input", "type example.com/m.Input"},
		{"add", "main", "class Store", "class tool.Store"},
	} {
		m, caller := byName[c.method], byName[c.caller]
		if m == nil || caller == nil {
			t.Fatalf("no node %s or %s", c.method, c.caller)
		}
		v := Symbol(ix, caller.ID, SymbolOptions{})
		vn, ok := v.Node(m.ID)
		if !ok {
			t.Fatalf("%s not in the symbol view of %s", c.method, c.caller)
		}
		if vn.Cluster != c.frame {
			t.Errorf("%s drawn in the frame %q, want %q", c.method, vn.Cluster, c.frame)
		}
		if got := Tooltip(byName[strings.Fields(c.frame)[1]]); !strings.HasPrefix(got, c.hover) {
			t.Errorf("hover text %q, want it to start with %q", got, c.hover)
		}
	}
}
