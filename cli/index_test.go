package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"codeloom/assets"
)

// graphSample extracts the bundled sample project to a temp dir.
func graphSample(t *testing.T) string {
	t.Helper()
	root, err := assets.ExtractSample(filepath.Join(t.TempDir(), "sample"))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func graphCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestIndexCLI(t *testing.T) {
	root := graphSample(t)
	code, out, errs := graphCLI("index", root)
	if code != ExitOK || !strings.Contains(out, "files by language: python=") || !strings.Contains(out, "edges:") {
		t.Fatalf("index: code %d\n%s\n%s", code, out, errs)
	}
	// Flags after the folder; node-link JSON.
	code, out, errs = graphCLI("index", root, "--json")
	if code != ExitOK {
		t.Fatalf("index --json: %d %s", code, errs)
	}
	var nl struct {
		Nodes []struct {
			ID, Kind, Name, Path string
			StartLine            int `json:"start_line"`
		} `json:"nodes"`
		Edges []struct{ Source, Target, Kind string } `json:"edges"`
	}
	if err := json.Unmarshal([]byte(out), &nl); err != nil {
		t.Fatalf("index --json output is not JSON: %v", err)
	}
	ids := map[string]bool{}
	for _, n := range nl.Nodes {
		ids[n.ID] = true
	}
	if len(nl.Nodes) < 20 || len(nl.Edges) < 20 {
		t.Errorf("json: %d nodes, %d edges", len(nl.Nodes), len(nl.Edges))
	}
	for _, e := range nl.Edges {
		if !ids[e.Source] || !ids[e.Target] || e.Kind == "" {
			t.Errorf("dangling edge %+v", e)
		}
	}
	code, out, _ = graphCLI("index", "--dot", root)
	if code != ExitOK || !strings.HasPrefix(out, "digraph codegraph {") || !strings.Contains(out, "-> ") {
		t.Errorf("index --dot: %d %.200s", code, out)
	}
}

func TestIndexCLIErrors(t *testing.T) {
	for _, args := range [][]string{
		{"index"},
		{"index", filepath.Join(t.TempDir(), "missing")},
		{"index", "a", "b"},
		{"index", t.TempDir(), "--json", "--dot"},
		{"index", "--bogus", t.TempDir()},
		{"query", t.TempDir()},
		{"query", filepath.Join(t.TempDir(), "missing"), "deps", "x"},
		{"query", t.TempDir(), "frobnicate", "x"},
		{"query", t.TempDir(), "path", "onlyone"},
	} {
		code, _, errs := graphCLI(args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(errs), "\n") > 0 && !strings.Contains(errs, "usage") {
			t.Errorf("%v: code %d, stderr %q", args, code, errs)
		}
		if strings.TrimSpace(errs) == "" {
			t.Errorf("%v: no reason on stderr", args)
		}
	}
}

func TestQueryCLI(t *testing.T) {
	root := graphSample(t)
	code, out, errs := graphCLI("query", root, "deps", "inventory.pricing.line_total")
	if code != ExitOK || !strings.Contains(out, "inventory.pricing.tax_rate") {
		t.Errorf("deps: %d\n%s%s", code, out, errs)
	}
	code, out, _ = graphCLI("query", root, "rdeps", "tax_rate", "--json")
	var rd struct {
		Target struct {
			QualName string `json:"qualname"`
		} `json:"target"`
		Nodes []struct {
			QualName string `json:"qualname"`
		} `json:"nodes"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &rd) != nil || rd.Target.QualName != "inventory.pricing.tax_rate" || len(rd.Nodes) == 0 {
		t.Errorf("rdeps --json: %d %s", code, out)
	}
	code, out, _ = graphCLI("query", root, "slice", "line_total")
	if code != ExitOK || !strings.Contains(out, "def tax_rate") || !strings.Contains(out, "TAX_RATE=0.20") {
		t.Errorf("slice: %d\n%s", code, out)
	}
	code, out, _ = graphCLI("query", root, "search", "invntory", "--limit", "3")
	if code != ExitOK || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "Inventory") {
		t.Errorf("search: %d\n%s", code, out)
	}
	code, out, _ = graphCLI("query", root, "rank", "--limit", "5")
	if code != ExitOK || strings.Count(out, "\n") != 5 {
		t.Errorf("rank: %d\n%s", code, out)
	}
	code, out, _ = graphCLI("query", root, "path", "inventory.cli.main", "inventory.pricing.tax_rate")
	if code != ExitOK || !strings.Contains(out, "-calls->") {
		t.Errorf("path: %d\n%s", code, out)
	}
	code, _, errs = graphCLI("query", root, "path", "inventory.pricing.tax_rate", "inventory.cli.main")
	if code != ExitFailure || !strings.Contains(errs, "no path") {
		t.Errorf("reverse path: %d %s", code, errs)
	}
	code, _, errs = graphCLI("query", root, "deps", "no_such_node")
	if code != ExitUsage || !strings.Contains(errs, "no node") {
		t.Errorf("unknown node: %d %s", code, errs)
	}
}
