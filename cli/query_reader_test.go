package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"codeloom/app/codegraph"
)

// A warm query answered from the persisted graph in place prints exactly
// what the same query prints from a fresh index, for every query the
// Reader serves, with and without --json, and for bad names.
func TestQueryFromPersistedGraphEqualsFreshIndex(t *testing.T) {
	root := graphSample(t)
	if code, _, errs := graphCLI("index", root); code != ExitOK {
		t.Fatalf("index: %d %s", code, errs)
	}
	if r, err := codegraph.OpenReader(t.Context(), root, codegraph.Options{}); r == nil || err != nil {
		t.Fatalf("no current persisted graph after index: %v", err)
	} else {
		r.Close()
	}
	for _, q := range [][]string{
		{"deps", "inventory.pricing.line_total"}, {"rdeps", "tax_rate"}, {"rdeps", "tax_rate", "--json"},
		{"neighbors", "inventory.pricing.line_total"}, {"neighbors", "inventory/pricing.py", "--json"},
		{"search", "invntory", "--limit", "3"}, {"search", "pricing.line", "--json"}, {"rank", "--limit", "5"},
		{"rank", "--json", "--limit", "0"}, {"deps", "no_such_node"}, {"deps", "inventory/pricing.py:3"},
	} {
		args := append([]string{"query", root}, q...)
		c1, o1, e1 := graphCLI(args...)
		c2, o2, e2 := graphCLI(append(args, "--no-cache")...)
		if c1 != c2 || o1 != o2 || e1 != e2 {
			t.Errorf("%v: warm %d %q %q\nfresh %d %q %q", q, c1, o1, e1, c2, o2, e2)
		}
	}
}

// An edit after the graph was persisted is never answered from it.
func TestQueryAfterEditIsNotStale(t *testing.T) {
	root := graphSample(t)
	if code, _, errs := graphCLI("index", root); code != ExitOK {
		t.Fatalf("index: %d %s", code, errs)
	}
	f := filepath.Join(root, "inventory", "extra_caller.py")
	if err := os.WriteFile(f, []byte("from inventory.pricing import tax_rate\n\ndef brand_new_caller():\n    return tax_rate()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := graphCLI("query", root, "rdeps", "inventory.pricing.tax_rate")
	if code != ExitOK || !strings.Contains(out, "brand_new_caller") {
		t.Errorf("rdeps after adding a caller: %d\n%s%s", code, out, errs)
	}
}
