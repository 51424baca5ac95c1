package codegraph

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestIncrementalParseMatchesFresh edits one file many times through a kept
// tree and checks that every extraction equals a parse from scratch.
func TestIncrementalParseMatchesFresh(t *testing.T) {
	base := `"""Module doc."""
import os
from .util import helper as h

class Shop(Base):
    """A shop."""
    def __init__(self, name):
        self.name = name
        self.items = []

    def add(self, item):
        self.items.append(item)
        return h(item)

def main():
    s = Shop(os.getenv("SHOP"))
    s.add(1)
`
	edits := []string{
		base,
		strings.Replace(base, "return h(item)", "return h(item) or helper2(item)", 1),
		"# a comment\n\n" + strings.Replace(base, "return h(item)", "return h(item) or helper2(item)", 1),
		strings.Replace(base, "    def add(self, item):", "    def add(self, item, qty=1):\n        \"\"\"Add.\"\"\"", 1),
		strings.Replace(base, "class Shop(Base):", "class Shop(Base:", 1), // syntax error
		base, // fixed again
		strings.Replace(base, "Shop", "Магазин", -1), // multi-byte names
		base + "\ndef later():\n    return main()\n",
		base[:len(base)/2],
		"",
		base,
	}
	l := newPython()
	inc, err := newExtractor(l)
	if err != nil {
		t.Fatal(err)
	}
	defer inc.Close()
	fresh, err := newExtractor(l)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	kt := &keptTree{lang: l}
	defer kt.free()
	reused := 0
	for i, src := range edits {
		if kt.tree != nil {
			reused++
		}
		a := &fileData{Path: "shop.py", Lang: "python"}
		if err := inc.extract(context.Background(), []byte(src), a, kt, false); err != nil {
			t.Fatal(err)
		}
		b := &fileData{Path: "shop.py", Lang: "python"}
		if err := fresh.extract(context.Background(), []byte(src), b, nil, false); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(encodeFileData(a), encodeFileData(b)) {
			t.Errorf("edit %d: incremental extraction differs from a fresh parse:\n%+v\n%+v", i, a, b)
		}
		if (kt.tree == nil) != b.Syntax {
			t.Errorf("edit %d: tree kept=%v with syntax errors=%v", i, kt.tree != nil, b.Syntax)
		}
	}
	if reused < len(edits)-3 {
		t.Errorf("kept tree reused %d times, want most edits", reused)
	}
}
