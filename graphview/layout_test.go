package graphview

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
)

// newEngine starts the in-process Graphviz once per test.
func newEngine(t testing.TB) *GraphvizEngine {
	t.Helper()
	e, err := NewGraphvizEngine(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func checkLayout(t *testing.T, v *View, lay *Layout) {
	t.Helper()
	if len(lay.Nodes) != len(v.Nodes) {
		t.Fatalf("%d nodes placed, want %d", len(lay.Nodes), len(v.Nodes))
	}
	for id, b := range lay.Nodes {
		if b.W <= 0 || b.H <= 0 || b.X-b.W/2 < -1 || b.Y-b.H/2 < -1 || b.X+b.W/2 > lay.Width+1 || b.Y+b.H/2 > lay.Height+1 {
			t.Errorf("node %s box %+v outside drawing %.0fx%.0f", id, b, lay.Width, lay.Height)
		}
	}
	if len(lay.Edges) != len(v.Edges) {
		t.Errorf("%d edges laid out, want %d", len(lay.Edges), len(v.Edges))
	}
	for _, e := range lay.Edges {
		if len(e.Points) < 2 || e.Tip == nil {
			t.Errorf("edge %s→%s: %d points, tip %v", e.From, e.To, len(e.Points), e.Tip)
		}
	}
}

func TestGraphvizLayoutPlacesEveryNodeAndCaches(t *testing.T) {
	ix := NewIndex(smallGraph())
	v := Overview(ix, OverviewOptions{Expanded: map[string]bool{"f:a": true}})
	l := NewLayouter(newEngine(t))
	lay, err := l.Layout(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	checkLayout(t, v, lay)
	if len(lay.Clusters) < 3 {
		t.Errorf("clusters = %+v, want folder and file clusters", lay.Clusters)
	}
	again, err := l.Layout(context.Background(), Overview(ix, OverviewOptions{Expanded: map[string]bool{"f:a": true}}))
	if err != nil || again != lay {
		t.Errorf("identical view not served from the cache (err %v)", err)
	}
	if _, ok := l.Cached(v); !ok {
		t.Error("Cached misses a laid-out view")
	}
}

func TestLayoutCancelled(t *testing.T) {
	l := NewLayouter(newEngine(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := Overview(NewIndex(smallGraph()), OverviewOptions{})
	if _, err := l.Layout(ctx, v); err == nil {
		t.Fatal("cancelled layout returned no error")
	}
	if _, ok := l.Cached(v); ok {
		t.Error("cancelled layout was cached")
	}
}

func TestNativeDotAgrees(t *testing.T) {
	if _, err := exec.LookPath("dot"); err != nil {
		t.Skip("native dot not installed")
	}
	v, err := Focus(NewIndex(starGraph(60)), "hub", FocusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lay, err := NewLayouter(NativeEngine{}).Layout(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	checkLayout(t, v, lay)
}

func TestParseJSONRejectsGarbage(t *testing.T) {
	v := Overview(NewIndex(smallGraph()), OverviewOptions{})
	_, ids := DOT(v)
	for _, in := range []string{"", "{", `{"bb":"x"}`, `{"bb":"0,0,10,10","objects":[]}`} {
		if _, err := ParseJSON([]byte(in), ids, v); err == nil {
			t.Errorf("ParseJSON(%q): no error", in)
		}
	}
}

func TestDOTQuotesLabels(t *testing.T) {
	v := &View{Nodes: []ViewNode{{ID: "x", Label: `say "hi" \ there`, Cluster: `we"ird`}}}
	dot, ids := DOT(v)
	if ids["n0"] != "x" {
		t.Fatalf("ids = %v", ids)
	}
	if !strings.Contains(string(dot), `label="say \"hi\" \\ there"`) {
		t.Errorf("label not escaped:\n%s", dot)
	}
	lay, err := NewLayouter(newEngine(t)).Layout(context.Background(), v)
	if err != nil {
		t.Fatalf("layout of a view with quotes: %v", err)
	}
	checkLayout(t, v, lay)
}

func TestExport(t *testing.T) {
	l := NewLayouter(newEngine(t))
	v := Overview(NewIndex(smallGraph()), OverviewOptions{})
	var svg bytes.Buffer
	if err := l.Export(context.Background(), v, "svg", &svg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "<svg") || !strings.Contains(svg.String(), "main.py") {
		t.Errorf("svg export lacks svg markup or labels: %.200s", svg.String())
	}
	var png bytes.Buffer
	if err := l.Export(context.Background(), v, "png", &png); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
		t.Errorf("png export is not a PNG: % x", png.Bytes()[:min(8, png.Len())])
	}
	if err := l.Export(context.Background(), v, "gif", &png); err == nil {
		t.Error("unsupported format accepted")
	}
}
