package graphview

import (
	"context"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// shownView lays out a small overview and shows it in a headless window.
func shownView(t *testing.T) (*GraphView, fyne.Window) {
	t.Helper()
	test.NewTempApp(t)
	l := NewLayouter(newEngine(t))
	g := NewGraphView(l)
	g.Synchronous = true
	w := test.NewWindow(g)
	t.Cleanup(w.Close)
	w.Resize(fyne.NewSize(800, 600))
	g.ShowView(Overview(NewIndex(smallGraph()), OverviewOptions{Expanded: map[string]bool{"f:a": true}}))
	if g.CurrentLayout() == nil {
		t.Fatal("no layout after ShowView")
	}
	return g, w
}

func near(a, b fyne.Position) bool {
	return math.Abs(float64(a.X-b.X)) < 0.5 && math.Abs(float64(a.Y-b.Y)) < 0.5
}

func TestWidgetFitTapAndHitTest(t *testing.T) {
	g, _ := shownView(t)
	s := g.Size()
	for id := range g.CurrentLayout().Nodes {
		c, ok := g.NodeCenter(id)
		if !ok || c.X < 0 || c.Y < 0 || c.X > s.Width || c.Y > s.Height {
			t.Errorf("after fit, node %s at %v is outside the %v widget", id, c, s)
		}
		if got := g.NodeAt(c); got != id {
			t.Errorf("NodeAt(centre of %s) = %q", id, got)
		}
	}
	var selected string
	g.OnSelect = func(id string) { selected = id }
	c, _ := g.NodeCenter("m:add")
	test.TapAt(g, c)
	if selected != "m:add" || g.Selected() != "m:add" {
		t.Errorf("tap selected %q / %q", selected, g.Selected())
	}
	var focused string
	g.OnFocus = func(id string) { focused = id }
	g.DoubleTapped(&fyne.PointEvent{Position: c})
	if focused != "m:add" {
		t.Errorf("double tap focused %q", focused)
	}
}

func TestWidgetPanAndZoomAroundPointer(t *testing.T) {
	g, _ := shownView(t)
	before, _ := g.NodeCenter("c:Store")
	g.Dragged(&fyne.DragEvent{Dragged: fyne.NewDelta(30, -20)})
	after, _ := g.NodeCenter("c:Store")
	if !near(after, before.Add(fyne.NewPos(30, -20))) {
		t.Errorf("pan moved node from %v to %v, want +30,-20", before, after)
	}
	// Zooming around a node's centre keeps that node under the pointer.
	sc := g.Scale()
	g.Scrolled(&fyne.ScrollEvent{PointEvent: fyne.PointEvent{Position: after}, Scrolled: fyne.NewDelta(0, 120)})
	if g.Scale() <= sc {
		t.Fatalf("scroll up did not zoom in: %v → %v", sc, g.Scale())
	}
	still, _ := g.NodeCenter("c:Store")
	if !near(still, after) {
		t.Errorf("node under the pointer moved from %v to %v while zooming", after, still)
	}
	for i := 0; i < 50; i++ {
		g.ZoomBy(0.5)
	}
	if g.Scale() < MinScale-1e-6 {
		t.Errorf("zoom went below the minimum: %v", g.Scale())
	}
	g.Fit()
	c, _ := g.NodeCenter("c:Store")
	if c.X < 0 || c.X > g.Size().Width {
		t.Errorf("fit did not bring the node back: %v", c)
	}
}

func TestWidgetNewViewDropsStaleSelection(t *testing.T) {
	g, _ := shownView(t)
	g.Select("m:add")
	v, err := Focus(NewIndex(smallGraph()), "f:b", FocusOptions{Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	g.ShowView(v)
	if _, ok := g.CurrentLayout().Nodes["m:add"]; !ok && g.Selected() != "" {
		t.Errorf("selection %q kept although the node is not drawn", g.Selected())
	}
}

func TestShowViewSupersedesEarlierLayout(t *testing.T) {
	test.NewTempApp(t)
	l := NewLayouter(newEngine(t))
	g := NewGraphView(l)
	w := test.NewWindow(g)
	defer w.Close()
	w.Resize(fyne.NewSize(600, 400))
	big, _ := Focus(NewIndex(starGraph(400)), "hub", FocusOptions{Budget: 300})
	small := Overview(NewIndex(smallGraph()), OverviewOptions{})
	done := make(chan *View, 4)
	g.OnLayout = func(v *View, err error) { done <- v }
	g.ShowView(big)
	g.ShowView(small)
	got := <-done
	if got != small {
		t.Fatalf("first finished view is %q, want the later one", got.Title)
	}
	if _, err := l.Layout(context.Background(), small); err != nil {
		t.Fatal(err)
	}
	if g.View() != small {
		t.Errorf("view shown is %q", g.View().Title)
	}
}
