package graphview

import (
	"context"
	"fmt"
	"image/color"
	"log/slog"
	"math"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// selectColor outlines the selected node and its edges.
var selectColor = color.NRGBA{0xea, 0x58, 0x0c, 0xff}

// Zoom bounds.
const (
	MinScale = 0.1
	MaxScale = 4.0
)

// GraphView is an interactive Fyne widget that draws a laid-out View: nodes
// are rounded boxes with labels, edges are polylines following Graphviz's
// splines with arrowheads, clusters are framed. Drag pans, the scroll wheel
// zooms around the pointer, a tap selects a node (OnSelect), a double tap
// focuses it (OnFocus), hovering shows a tooltip.
//
// All methods must be called on the Fyne UI goroutine; layouts run in the
// background and come back through fyne.Do.
type GraphView struct {
	widget.BaseWidget

	// OnSelect is called when a node is tapped (stubs included; their IDs start with "more:").
	OnSelect func(id string)
	// OnFocus is called when a node is double-tapped.
	OnFocus func(id string)
	// OnLayout is called after a new view is shown (or failed to lay out: err set).
	OnLayout func(v *View, err error)
	// Synchronous lays views out on the calling goroutine (headless tests
	// and benchmarks); the app leaves it false.
	Synchronous bool
	// NodeColor, when set, overrides the fill and outline of node id when it
	// returns ok (e.g. a workflow step coloured by its state); call Refresh
	// after what it reports changes.
	NodeColor func(id string) (fill, line color.NRGBA, ok bool)

	layouter *Layouter
	marks    map[string]Mark
	view     *View
	lay      *Layout
	status   string // shown when there is no layout: "laying out…", errors
	selected string
	hovered  string
	hoverPos fyne.Position
	scale    float32
	offset   fyne.Position // screen position of the layout's origin
	fitted   bool          // fit to the widget on the next Resize of a new layout
	anchor   *anchor       // where the next layout keeps a node (expanding in place)
	pressed  string        // node selected by the last press (its Tapped is not repeated)

	mu     sync.Mutex // guards cancel and gen (touched from layout goroutines)
	cancel context.CancelFunc
	gen    int
}

// NewGraphView returns an empty graph view that lays views out with l.
func NewGraphView(l *Layouter) *GraphView {
	g := &GraphView{layouter: l, scale: 1}
	g.ExtendBaseWidget(g)
	return g
}

// View returns the view currently shown (nil before the first layout).
func (g *GraphView) View() *View { return g.view }

// Layout returns the geometry currently shown.
func (g *GraphView) CurrentLayout() *Layout { return g.lay }

// Selected returns the ID of the selected node ("" for none).
func (g *GraphView) Selected() string { return g.selected }

// Scale returns the current zoom factor (screen units per layout point).
func (g *GraphView) Scale() float32 { return g.scale }

// ShowView lays v out in the background (cancelling any layout still running for
// an earlier view) and draws it when done. A cached layout is shown at once.
func (g *GraphView) ShowView(v *View) {
	g.mu.Lock()
	if g.cancel != nil {
		g.cancel()
	}
	g.gen++
	gen := g.gen
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	g.mu.Unlock()

	if lay, ok := g.layouter.Cached(v); ok {
		cancel()
		g.apply(v, lay)
		return
	}
	if g.Synchronous {
		defer cancel()
		lay, err := g.layouter.Layout(ctx, v)
		if err != nil {
			g.failed(v, err)
			return
		}
		g.apply(v, lay)
		return
	}
	g.status = fmt.Sprintf("Laying out %d nodes…", len(v.Nodes))
	g.Refresh()
	go func() {
		defer cancel()
		lay, err := g.layouter.Layout(ctx, v)
		g.mu.Lock()
		current := gen == g.gen
		g.mu.Unlock()
		if !current || ctx.Err() != nil {
			return // superseded
		}
		fyne.Do(func() {
			g.mu.Lock()
			current := gen == g.gen
			g.mu.Unlock()
			if !current {
				return
			}
			if err != nil {
				g.failed(v, err)
				return
			}
			g.apply(v, lay)
		})
	}()
}

// Status returns the message shown over the graph ("" for none).
func (g *GraphView) Status() string { return g.status }

// SetStatus shows s over the graph (e.g. "Building the view…") until the
// next view is shown.
func (g *GraphView) SetStatus(s string) {
	g.status = s
	g.Refresh()
}

func (g *GraphView) failed(v *View, err error) {
	slog.Error("graph layout failed", "view", v.Title, "err", err)
	g.status = "Layout failed: " + err.Error()
	g.Refresh()
	if g.OnLayout != nil {
		g.OnLayout(v, err)
	}
}

// SetLayout shows an already laid-out view (used by tests and benchmarks).
func (g *GraphView) SetLayout(v *View, lay *Layout) { g.apply(v, lay) }

func (g *GraphView) apply(v *View, lay *Layout) {
	g.view, g.lay, g.status = v, lay, ""
	if _, ok := lay.Nodes[g.selected]; !ok {
		g.selected = ""
	}
	g.hovered = ""
	g.fitted = false
	if s := g.Size(); s.Width > 0 && s.Height > 0 {
		if !g.keepAnchor() {
			g.fit(s)
		}
	}
	g.anchor = nil
	g.Refresh()
	if g.OnLayout != nil {
		g.OnLayout(v, nil)
	}
}

// SetMarks colours nodes by a run result (nil clears); IDs not drawn are ignored.
func (g *GraphView) SetMarks(m map[string]Mark) {
	g.marks = m
	g.Refresh()
}

// MarkOf returns the run mark of node id.
func (g *GraphView) MarkOf(id string) Mark { return g.marks[id] }

// Select marks id as selected and highlights its edges without calling OnSelect.
func (g *GraphView) Select(id string) {
	g.selected = id
	g.Refresh()
}

// Fit scales and centres the drawing to fill the widget, but never below
// ReadableScale: a drawing bigger than that is shown around its centre node
// (or its middle) and the user pans to the rest.
func (g *GraphView) Fit() {
	g.fit(g.Size())
	g.Refresh()
}

func (g *GraphView) fit(s fyne.Size) {
	if g.lay == nil || s.Width <= 0 || s.Height <= 0 {
		return
	}
	const margin = 16
	w, h := float32(g.lay.Width)+2*margin, float32(g.lay.Height)+2*margin
	sc := min(s.Width/w, s.Height/h)
	sc = clamp(sc, ReadableScale, 1.6)
	g.scale = sc
	g.offset = fyne.NewPos((s.Width-float32(g.lay.Width)*sc)/2, (s.Height-float32(g.lay.Height)*sc)/2)
	g.fitted = true
	fits := float32(g.lay.Width)*sc <= s.Width && float32(g.lay.Height)*sc <= s.Height
	// A focus or symbol view centres its node, whatever fits.
	if b, ok := g.lay.Nodes[g.view.Center]; ok {
		g.offset = fyne.NewPos(s.Width/2-float32(b.X)*g.scale, s.Height/2-float32(b.Y)*g.scale)
		return
	}
	if !fits {
		// Start at the top-left corner (where a reader starts), not in the
		// middle of the drawing.
		if float32(g.lay.Width)*sc > s.Width {
			g.offset.X = margin
		}
		if float32(g.lay.Height)*sc > s.Height {
			g.offset.Y = margin
		}
	}
}

// ReadableScale is the smallest zoom Fit picks: node labels are drawn at
// about 9 px and nodes about 21 px high.
const ReadableScale = 0.85

// anchor keeps a node (or the cluster that replaces it) under the same
// screen position across a change of view, at the same zoom.
type anchor struct {
	id, cluster string
	pos         fyne.Position
	scale       float32
}

// KeepInPlace makes the next view that is shown keep the current zoom and
// node id where it is on screen now; when id is not in that view, the
// cluster titled cluster (what id was expanded into) takes its place.
func (g *GraphView) KeepInPlace(id, cluster string) {
	pos, ok := g.NodeCenter(id)
	if !ok {
		g.anchor = nil
		return
	}
	g.anchor = &anchor{id: id, cluster: cluster, pos: pos, scale: g.scale}
}

// keepAnchor applies the anchor to a new layout; false when there is none
// or it is not in the layout.
func (g *GraphView) keepAnchor() bool {
	a := g.anchor
	if a == nil || g.lay == nil {
		return false
	}
	var x, y float64
	if b, ok := g.lay.Nodes[a.id]; ok {
		x, y = b.X, b.Y
	} else {
		found := false
		for _, c := range g.lay.Clusters {
			if a.cluster != "" && c.Label == a.cluster {
				// The cluster's top-left part (its first nodes) under the pointer.
				x, y = c.X0+min((c.X1-c.X0)/2, 120), c.Y0+min((c.Y1-c.Y0)/2, 60)
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	g.scale = a.scale
	g.offset = fyne.NewPos(a.pos.X-float32(x)*a.scale, a.pos.Y-float32(y)*a.scale)
	g.fitted = true
	// Then pan as little as needed to bring what was opened (the cluster)
	// into view, its top-left corner first.
	s := g.Size()
	for _, c := range g.lay.Clusters {
		if a.cluster == "" || c.Label != a.cluster {
			continue
		}
		const m = 8
		p0, p1 := g.toScreen(Point{c.X0, c.Y0}), g.toScreen(Point{c.X1, c.Y1})
		dx, dy := float32(0), float32(0)
		if p1.X > s.Width-m {
			dx = s.Width - m - p1.X
		}
		if p0.X+dx < m {
			dx = m - p0.X
		}
		if p1.Y > s.Height-m {
			dy = s.Height - m - p1.Y
		}
		if p0.Y+dy < m {
			dy = m - p0.Y
		}
		g.offset = g.offset.Add(fyne.NewPos(dx, dy))
		break
	}
	return true
}

// ZoomBy multiplies the zoom by f around the widget's centre.
func (g *GraphView) ZoomBy(f float32) {
	s := g.Size()
	g.zoomAt(fyne.NewPos(s.Width/2, s.Height/2), f)
}

func (g *GraphView) zoomAt(p fyne.Position, f float32) {
	ns := clamp(g.scale*f, MinScale, MaxScale)
	r := ns / g.scale
	g.offset = fyne.NewPos(p.X-(p.X-g.offset.X)*r, p.Y-(p.Y-g.offset.Y)*r)
	g.scale = ns
	g.Refresh()
}

// CenterOn pans so that node id is in the middle of the widget.
func (g *GraphView) CenterOn(id string) {
	pos, ok := g.NodeCenter(id)
	if !ok {
		return
	}
	s := g.Size()
	g.offset = g.offset.Add(fyne.NewPos(s.Width/2-pos.X, s.Height/2-pos.Y))
	g.Refresh()
}

func clamp(v, lo, hi float32) float32 { return max(lo, min(hi, v)) }

func (g *GraphView) toScreen(p Point) fyne.Position {
	return fyne.NewPos(g.offset.X+float32(p.X)*g.scale, g.offset.Y+float32(p.Y)*g.scale)
}

// NodeCenter returns the centre of node id in widget coordinates.
func (g *GraphView) NodeCenter(id string) (fyne.Position, bool) {
	if g.lay == nil {
		return fyne.Position{}, false
	}
	b, ok := g.lay.Nodes[id]
	if !ok {
		return fyne.Position{}, false
	}
	return g.toScreen(Point{b.X, b.Y}), true
}

// NodeAt returns the node under p (widget coordinates), or "".
func (g *GraphView) NodeAt(p fyne.Position) string {
	if g.lay == nil || g.scale == 0 {
		return ""
	}
	x := float64((p.X - g.offset.X) / g.scale)
	y := float64((p.Y - g.offset.Y) / g.scale)
	for _, n := range g.view.Nodes {
		b := g.lay.Nodes[n.ID]
		if math.Abs(x-b.X) <= b.W/2 && math.Abs(y-b.Y) <= b.H/2 {
			return n.ID
		}
	}
	return ""
}

// MouseDown implements desktop.Mouseable: a press on a node selects it at
// once (OnSelect). Fyne delays Tapped on a double-tappable widget until the
// double-tap interval has passed; selecting on the press makes a click show
// its code without that wait.
func (g *GraphView) MouseDown(ev *desktop.MouseEvent) {
	if ev.Button != desktop.MouseButtonPrimary {
		return
	}
	id := g.NodeAt(ev.Position)
	if id == "" {
		return
	}
	g.pressed = id
	g.selected = id
	g.Refresh()
	if g.OnSelect != nil {
		g.OnSelect(id)
	}
}

// MouseUp implements desktop.Mouseable.
func (g *GraphView) MouseUp(*desktop.MouseEvent) {}

// Tapped implements fyne.Tappable: select the node under the pointer (when
// the press did not already).
func (g *GraphView) Tapped(ev *fyne.PointEvent) {
	id := g.NodeAt(ev.Position)
	if id == "" {
		return
	}
	if id == g.pressed {
		g.pressed = ""
		return
	}
	g.selected = id
	g.Refresh()
	if g.OnSelect != nil {
		g.OnSelect(id)
	}
}

// DoubleTapped implements fyne.DoubleTappable: focus the node under the pointer.
func (g *GraphView) DoubleTapped(ev *fyne.PointEvent) {
	id := g.NodeAt(ev.Position)
	if id == "" {
		return
	}
	g.pressed = ""
	g.selected = id
	if g.OnFocus != nil {
		g.OnFocus(id)
	}
}

// Dragged implements fyne.Draggable: pan.
func (g *GraphView) Dragged(ev *fyne.DragEvent) {
	g.offset = g.offset.Add(ev.Dragged)
	g.Refresh()
}

// DragEnd implements fyne.Draggable.
func (g *GraphView) DragEnd() {}

// Scrolled implements fyne.Scrollable: zoom around the pointer.
func (g *GraphView) Scrolled(ev *fyne.ScrollEvent) {
	d := ev.Scrolled.DY
	if d == 0 {
		d = ev.Scrolled.DX
	}
	g.zoomAt(ev.Position, float32(math.Exp(float64(d)*0.004)))
}

// MouseIn implements desktop.Hoverable.
func (g *GraphView) MouseIn(ev *desktop.MouseEvent) { g.MouseMoved(ev) }

// MouseMoved implements desktop.Hoverable: tooltip for the node under the pointer.
func (g *GraphView) MouseMoved(ev *desktop.MouseEvent) {
	id := g.NodeAt(ev.Position)
	if id == g.hovered && (id == "" || ev.Position == g.hoverPos) {
		return
	}
	g.hovered, g.hoverPos = id, ev.Position
	g.Refresh()
}

// MouseOut implements desktop.Hoverable.
func (g *GraphView) MouseOut() {
	if g.hovered != "" {
		g.hovered = ""
		g.Refresh()
	}
}

// Tooltip returns the tooltip text shown now ("" when none).
func (g *GraphView) Tooltip() string {
	if g.hovered == "" || g.view == nil {
		return ""
	}
	n, _ := g.view.Node(g.hovered)
	if n.Stub {
		return fmt.Sprintf("%d more nodes not shown (node budget)\ndouble-click the parent to focus on it", n.More)
	}
	return n.Tooltip
}

// MinSize keeps the view usable inside splits.
func (g *GraphView) MinSize() fyne.Size { return fyne.NewSize(120, 120) }

// CreateRenderer implements fyne.Widget.
func (g *GraphView) CreateRenderer() fyne.WidgetRenderer {
	r := &graphRenderer{g: g, bg: canvas.NewRectangle(color.NRGBA{0xfb, 0xfc, 0xfd, 0xff})}
	r.statusText = canvas.NewText("", color.NRGBA{0x47, 0x55, 0x69, 0xff})
	r.statusText.TextSize = 14
	r.tipBox = canvas.NewRectangle(color.NRGBA{0x1f, 0x29, 0x37, 0xf0})
	r.tipBox.CornerRadius = 4
	for i := range r.tipLines {
		t := canvas.NewText("", color.White)
		t.TextSize = 12
		r.tipLines[i] = t
	}
	return r
}
