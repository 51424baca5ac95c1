package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"codeloom/graphview"
)

// genLargeProject writes a Python project of packages × modules files in
// nested folders, each module calling functions of other packages, so the
// overview must summarise (folders, counted edges) instead of drawing files.
func genLargeProject(t *testing.T, root string, packages, modules int) {
	t.Helper()
	for p := 0; p < packages; p++ {
		for sub := 0; sub < 2; sub++ {
			dir := filepath.Join(root, fmt.Sprintf("pkg%02d", p), fmt.Sprintf("sub%d", sub))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "__init__.py"), nil, 0o644)
			for m := 0; m < modules; m++ {
				q := (p*7 + m + 1) % packages
				var b strings.Builder
				fmt.Fprintf(&b, "from pkg%02d.sub%d import mod%02d as other\n\n\n", q, sub, m)
				fmt.Fprintf(&b, "class Thing%d:\n    def run(self, x):\n        return helper_%d(x) + other.helper_%d(x)\n\n\n", m, m, m)
				fmt.Fprintf(&b, "def helper_%d(x):\n    return other.helper_%d(x - 1) if x > 0 else 0\n", m, m)
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("mod%02d.py", m)), []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestEndToEndLargeProject drives the real binary on a generated project of
// 40 packages (1,600 modules): open → overview (a folder summary within the
// node and edge budgets, readable node size) → drill down into a folder →
// a file → the symbol view of a function (callers left, callees right, the
// references panel filled, its code shown) → edit → save.
func TestEndToEndLargeProject(t *testing.T) {
	bin, tmp, out := e2eSetup(t)
	project := filepath.Join(tmp, "large")
	genLargeProject(t, project, 40, 20)
	app := startE2EApp(t, bin, project, tmp, out, e2eLaunch{Log: "e2e-large-app.log", TimeoutShot: "e2e-large-timeout.png"})
	x, shot, wait := app.x, app.shot, app.waitState
	// visible picks a drawn node inside the graph widget matching ok.
	visible := func(s AutomationState, ok func(AutoNode) bool) (AutoNode, bool) {
		g := s.Graph
		for _, n := range s.Nodes {
			if ok(n) && n.X > g.X+10 && n.X < g.X+g.W-10 && n.Y > g.Y+10 && n.Y < g.Y+g.H-10 {
				return n, true
			}
		}
		return AutoNode{}, false
	}
	// click clicks node n where it is once the view has stopped moving
	// (not where an earlier state saw it).
	click := func(n AutoNode, double bool) {
		t.Helper()
		s := app.steadyState(20 * time.Second)
		found := false
		for _, m := range s.Nodes {
			if m.ID == n.ID {
				n, found = m, true
				break
			}
		}
		if !found {
			t.Fatalf("%s (%s) is no longer drawn: %s", n.Label, n.ID, describeState(s))
		}
		app.clickAt(n.X, n.Y, double)
		time.Sleep(400 * time.Millisecond) // let the double-click timer lapse
	}

	// 1. Overview: a summary of folders within the budgets, readable.
	s := wait("the overview", 180*time.Second, func(s AutomationState) bool { return !s.Indexing && s.NodeCount > 0 })
	if s.NodeCount > graphview.DefaultNodeBudget+2 || s.EdgeCount > graphview.OverviewEdgeBudget {
		t.Errorf("overview draws %d nodes and %d edges; budgets %d and %d", s.NodeCount, s.EdgeCount, graphview.DefaultNodeBudget, graphview.OverviewEdgeBudget)
	}
	if s.EdgeCount == 0 {
		t.Error("overview draws no edges between its folders")
	}
	// The launch timeline: indexing started before the window was built
	// (it runs while the window is created), the overview was built from
	// the indexed graph and drawn after.
	tl := s.Timings
	for _, step := range []string{"workbench", "open_called", "window_built", "indexed", "overview_built", "graph_drawn"} {
		if _, ok := tl[step]; !ok {
			t.Errorf("timeline lacks %q: %v", step, tl)
		}
	}
	if !(tl["open_called"] <= tl["window_built"] && tl["indexed"] <= tl["overview_built"] && tl["overview_built"] <= tl["graph_drawn"]) {
		t.Errorf("timeline out of order: %v", tl)
	}
	metrics := map[string]any{"first_graph_ms": tl["graph_drawn"], "first_graph_cpu_ms": s.CPUTimings["graph_drawn"], "timings_ms": tl,
		"overview_nodes": s.NodeCount, "overview_edges": s.EdgeCount, "hidden_edges": s.HiddenEdges}
	folder, ok := visible(s, func(n AutoNode) bool { return n.Kind == "folder" })
	if !ok {
		t.Fatalf("no folder node on screen: %+v", s.Nodes)
	}
	var hs []float32
	for _, n := range s.Nodes {
		hs = append(hs, n.H)
	}
	med := median(hs)
	if med < 14 {
		t.Errorf("median node height %.1f px, want ≥ 14 (readable)", med)
	}
	metrics["median_node_px"] = med
	scale := s.Scale
	shot("e2e-large-1-overview.png")

	// 2. Drill down: double-click the folder; it opens in place, at the
	// same zoom, what it opened into under the pointer.
	before := map[string]bool{}
	for _, n := range s.Nodes {
		before[n.ID] = true
	}
	click(folder, true)
	s = wait("the folder opened", 30*time.Second, func(s AutomationState) bool {
		for _, n := range s.Nodes {
			if n.ID == folder.ID {
				return false
			}
		}
		return s.NodeCount > 0
	})
	if s.Scale != scale {
		t.Errorf("drilling down changed the zoom from %.2f to %.2f", scale, s.Scale)
	}
	near := false // a node the folder opened into, near where it was
	for _, n := range s.Nodes {
		if dx, dy := n.X-folder.X, n.Y-folder.Y; dx*dx+dy*dy < 250*250 && !before[n.ID] {
			near = true
		}
	}
	if !near {
		t.Errorf("nothing of %s within 250 px of where it was double-clicked (%.0f,%.0f)", folder.ID, folder.X, folder.Y)
	}
	s = wait("a file or subfolder of it on screen", 30*time.Second, func(s AutomationState) bool {
		_, ok := visible(s, func(n AutoNode) bool { return n.Kind == "file" || n.Kind == "folder" })
		return ok
	})
	shot("e2e-large-2-drilled.png")
	// Open subfolders until a file is on screen, then expand it.
	for i := 0; i < 3; i++ {
		if _, ok := visible(s, func(n AutoNode) bool { return n.Kind == "file" && strings.HasPrefix(n.Label, "mod") }); ok {
			break
		}
		sub, _ := visible(s, func(n AutoNode) bool { return n.Kind == "folder" })
		click(sub, true)
		s = wait("a subfolder opened", 30*time.Second, func(s AutomationState) bool {
			for _, n := range s.Nodes {
				if n.ID == sub.ID {
					return false
				}
			}
			return true
		})
	}
	file, ok := visible(s, func(n AutoNode) bool { return n.Kind == "file" && strings.HasPrefix(n.Label, "mod") })
	if !ok {
		t.Fatalf("no module file on screen after drilling down: %+v", s.Nodes)
	}
	click(file, true)
	s = wait("the file's functions", 30*time.Second, func(s AutomationState) bool {
		_, ok := visible(s, func(n AutoNode) bool { return strings.HasPrefix(n.Label, "helper_") })
		return ok && s.CodeNode == file.ID
	})

	// 3. Symbol view of a function: double-click it.
	fn, _ := visible(s, func(n AutoNode) bool { return strings.HasPrefix(n.Label, "helper_") })
	click(fn, true)
	s = wait("the symbol view", 30*time.Second, func(s AutomationState) bool {
		return strings.HasPrefix(s.ViewTitle, "Symbol:") && s.CodeNode == fn.ID && s.References > 0
	})
	if !strings.HasPrefix(strings.TrimSpace(s.Code), "def helper_") {
		t.Errorf("code pane shows %q", s.Code)
	}
	centre := s.Nodes[0]
	var left, right int
	for _, n := range s.Nodes[1:] {
		switch {
		case n.X < centre.X-20:
			left++
		case n.X > centre.X+20:
			right++
		}
	}
	if left == 0 || right == 0 {
		t.Errorf("symbol view: %d nodes left (callers), %d right (callees), want both", left, right)
	}
	metrics["symbol_view_ms"] = s.LayoutMs // asked → drawn (target 0.5 s; measured, not asserted)
	shot("e2e-large-3-symbol.png")

	// 4. Edit and save.
	click2 := func(b AutoBox) {
		x("mousemove", fmt.Sprint(int(b.X+b.W/2)), fmt.Sprint(int(b.Y+b.H/2)))
		x("click", "1")
	}
	click2(s.EditBtn)
	wait("the editor", 10*time.Second, func(s AutomationState) bool { return s.Editing })
	time.Sleep(300 * time.Millisecond)
	x("type", "--delay", "15", "# touched by e2e")
	x("key", "Return")
	wait("the edit", 10*time.Second, func(s AutomationState) bool { return s.Dirty })
	x("key", "ctrl+s")
	s = wait("the save", 60*time.Second, func(s AutomationState) bool { return !s.Dirty && !s.Editing && s.Versions >= 1 })
	disk, err := os.ReadFile(filepath.Join(project, s.CodePath))
	if err != nil || !strings.Contains(string(disk), "# touched by e2e") {
		t.Errorf("saved file lacks the edit (err %v)", err)
	}
	// The watchdog ran all along and reports its stalls (target: none over
	// 1 s; measured here and by the benchmark, not asserted on a shared machine).
	if s.StallMaxMs <= 0 {
		t.Error("the automation file reports no watchdog measurement (stall_max_ms 0)")
	}
	if s.PeakRSSMB <= 0 {
		t.Error("the automation file reports no peak RSS")
	}
	if s.StallMaxMs > 1000 {
		t.Logf("longest UI stall %.0f ms in %s", s.StallMaxMs, s.StallWhat)
	}
	metrics["stall_max_ms"], metrics["stalls_over_100ms"], metrics["peak_rss_mb"] = s.StallMaxMs, s.Stalls, s.PeakRSSMB
	if b, err := json.MarshalIndent(metrics, "", "  "); err == nil {
		os.WriteFile(filepath.Join(out, "e2e-large-metrics.json"), b, 0o644)
		t.Logf("metrics: %s", b)
	}
	shot("e2e-large-4-saved.png")
}

func median(xs []float32) float32 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float32(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}
