package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"codeloom/app/codegraph"
)

// The prefilter the search box runs (codegraph.HoldsInOrder) only skips
// names wordStartMatch would reject.
func TestHoldsInOrderKeepsEveryWordStartMatch(t *testing.T) {
	names := []string{"store_json", "StoreJSON", "Popen", "_Popen", "parse_args", "HTTPServer", "line_total",
		"getattr", "__init__", "Ünïcode_name", "naïve_Ström", "x", "", "a.b.c", "camelCaseName", "ABC_def"}
	queries := []string{"storjson", "popen", "Popen", "pa", "httpserv", "ltot", "gat", "init", "ün", "naïve", "ström",
		"x", "abcd", "ccn", "cam", "ABC", "q", "  popen  ", "store_json"}
	for _, n := range names {
		for _, q := range queries {
			if wordStartMatch(q, n) > 0 && !codegraph.HoldsInOrder(n, lower(q)) {
				t.Errorf("HoldsInOrder(%q, %q) = false, but wordStartMatch = %d", n, q, wordStartMatch(q, n))
			}
		}
	}
	if codegraph.HoldsInOrder("parse_args", "popen") || codegraph.HoldsInOrder("Popen", "zz") {
		t.Error("HoldsInOrder keeps names that cannot be spelt")
	}
}

func lower(q string) string { return strings.ToLower(strings.TrimSpace(q)) }

// Among equal word-start matches the search box puts the name spelt as
// typed first, then the most referenced definition.
func TestSuggestionsPreferExactThenReferenced(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("aaa_boot.py", "class Popen:\n    pass\n\ndef popen():\n    pass\n")
	write("proc.py", "class Popen:\n    pass\n")
	write("users.py", "from proc import Popen\n\ndef a():\n    return Popen()\n\ndef b():\n    return Popen()\n\ndef c():\n    return Popen()\n")
	p, err := codegraph.Open(context.Background(), root, codegraph.Options{NoCache: true, NoUpdates: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g := cgGraph{p.Graph()}
	got := g.Search("Popen", 3)
	if len(got) < 3 {
		t.Fatalf("suggestions for Popen: %v", got)
	}
	want := []string{"proc.Popen", "aaa_boot.Popen", "aaa_boot.popen"}
	for i, id := range got[:3] {
		n, _ := p.Graph().Node(id)
		if n == nil || n.QualName != want[i] {
			t.Errorf("suggestion %d: %v, want %s", i, n, want[i])
		}
	}
	// A shorter list is the start of the longer one: the references are
	// counted for every hit that can make the cut, however small.
	for limit := 1; limit < 3; limit++ {
		ws := wordStartSearch(p.Graph(), "Popen", limit)
		if len(ws) != limit {
			t.Fatalf("limit %d: %v", limit, ws)
		}
		for i, id := range ws {
			if n, _ := p.Graph().Node(id); n == nil || n.QualName != want[i] {
				t.Errorf("limit %d, suggestion %d: %v, want %s", limit, i, n, want[i])
			}
		}
	}
}
