package graphview

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"log/slog"
	"math"
	"sort"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/driver/software"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/codegraph"
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

type nodeObj struct {
	id    string
	box   *canvas.Rectangle
	label *canvas.Text
}

type edgeObj struct {
	idx   int        // index into layout edges
	segs  [][2]Point // drawn segments in layout space (dashes for dashed kinds)
	lines []*canvas.Line
	head  *canvas.Polygon
	count *canvas.Text      // the number of references it stands for (nil for 1)
	badge *canvas.Rectangle // behind count: keeps it readable over other edges
	mid   Point             // where the count is drawn
}

type clusterObj struct {
	box   *canvas.Rectangle
	label *canvas.Text
}

type graphRenderer struct {
	g          *GraphView
	builtFor   *Layout
	bg         *canvas.Rectangle
	statusText *canvas.Text
	clusters   []clusterObj
	edges      []edgeObj
	byCount    []int // indexes of edges, heaviest first (whose count label wins)
	nodes      []nodeObj
	tipBox     *canvas.Rectangle
	tipLines   [4]*canvas.Text
	objects    []fyne.CanvasObject
}

func (r *graphRenderer) Destroy() {}

func (r *graphRenderer) Objects() []fyne.CanvasObject {
	if r.builtFor != r.g.lay || r.objects == nil {
		r.build()
	}
	return r.objects
}

func (r *graphRenderer) MinSize() fyne.Size { return r.g.MinSize() }

// build creates the canvas objects of the current layout.
func (r *graphRenderer) build() {
	g := r.g
	r.builtFor = g.lay
	r.clusters, r.edges, r.nodes = nil, nil, nil
	objs := []fyne.CanvasObject{r.bg}
	if lay := g.lay; lay != nil {
		for _, c := range lay.Clusters {
			box := canvas.NewRectangle(color.NRGBA{0xf1, 0xf5, 0xf9, 0xff})
			box.StrokeColor = color.NRGBA{0xcb, 0xd5, 0xe1, 0xff}
			box.StrokeWidth = 1
			box.CornerRadius = 6
			t := canvas.NewText(c.Label, color.NRGBA{0x64, 0x74, 0x8b, 0xff})
			t.TextStyle = fyne.TextStyle{Italic: true}
			r.clusters = append(r.clusters, clusterObj{box, t})
			objs = append(objs, box, t)
		}
		var counts []fyne.CanvasObject // drawn over every edge
		for i, e := range lay.Edges {
			eo := edgeObj{idx: i, segs: edgeSegments(e.Points, Dashed(e.Kind))}
			col := EdgeColor(e.Kind)
			for range eo.segs {
				l := canvas.NewLine(col)
				eo.lines = append(eo.lines, l)
				objs = append(objs, l)
			}
			if e.Tip != nil {
				eo.head = &canvas.Polygon{FillColor: col, Sides: 3}
				objs = append(objs, eo.head)
			}
			if e.Count > 1 {
				eo.count = canvas.NewText(fmt.Sprint(e.Count), color.NRGBA{0x33, 0x41, 0x55, 0xff})
				eo.count.TextSize = 10
				eo.count.TextStyle = fyne.TextStyle{Bold: true}
				eo.mid = polylineMid(e.Points)
				eo.badge = canvas.NewRectangle(color.NRGBA{0xff, 0xff, 0xff, 0xe0})
				eo.badge.CornerRadius = 3
				counts = append(counts, eo.badge, eo.count)
			}
			r.edges = append(r.edges, eo)
		}
		r.byCount = make([]int, len(r.edges))
		for i := range r.byCount {
			r.byCount[i] = i
		}
		sort.SliceStable(r.byCount, func(a, b int) bool {
			return lay.Edges[r.edges[r.byCount[a]].idx].Count > lay.Edges[r.edges[r.byCount[b]].idx].Count
		})
		objs = append(objs, counts...)
		for _, n := range g.view.Nodes {
			fill, line := NodeColors(n)
			box := canvas.NewRectangle(fill)
			box.StrokeColor = line
			box.StrokeWidth = 1.2
			box.CornerRadius = 5
			t := canvas.NewText(n.Label, color.NRGBA{0x11, 0x18, 0x27, 0xff})
			t.Alignment = fyne.TextAlignCenter
			if n.Stub {
				t.TextStyle = fyne.TextStyle{Italic: true}
			}
			r.nodes = append(r.nodes, nodeObj{n.ID, box, t})
			objs = append(objs, box, t)
		}
	}
	objs = append(objs, r.statusText, r.tipBox)
	for _, t := range r.tipLines {
		objs = append(objs, t)
	}
	r.objects = objs
}

func (r *graphRenderer) Layout(s fyne.Size) {
	g := r.g
	if g.lay != nil && !g.fitted {
		g.fit(s)
	}
	r.place(s)
}

// place positions and styles every object for the current pan, zoom,
// selection and hover.
func (r *graphRenderer) place(s fyne.Size) {
	g := r.g
	if r.builtFor != g.lay || r.objects == nil {
		r.build()
	}
	r.bg.Resize(s)
	r.bg.Move(fyne.Position{})
	if g.lay == nil {
		r.statusText.Text = g.status
		if r.statusText.Text == "" {
			r.statusText.Text = "No graph yet: open a folder"
		}
		r.statusText.Show()
		r.statusText.Refresh()
		ts := r.statusText.MinSize()
		r.statusText.Move(fyne.NewPos((s.Width-ts.Width)/2, (s.Height-ts.Height)/2))
	} else if g.status != "" {
		r.statusText.Text = g.status
		r.statusText.Show()
		r.statusText.Refresh()
		r.statusText.Move(fyne.NewPos(8, 4))
	} else {
		r.statusText.Hide()
	}
	sc := g.scale
	lay := g.lay
	if lay == nil {
		r.placeTooltip(s)
		return
	}
	textSize := fontSize * sc * 1.05
	showText := textSize >= MinTextSize
	for i, c := range lay.Clusters {
		co := r.clusters[i]
		p0 := g.toScreen(Point{c.X0, c.Y0})
		p1 := g.toScreen(Point{c.X1, c.Y1})
		co.box.Move(p0)
		co.box.Resize(fyne.NewSize(p1.X-p0.X, p1.Y-p0.Y))
		// Cluster titles stay readable at every zoom: never smaller than
		// MinTextSize+2, shortened to the frame's width, hidden only when
		// the frame is too small to hold a word.
		ts := max(float32(9)*sc*1.05, MinTextSize+2)
		ts = min(ts, 16)
		if co.label.TextSize != ts {
			co.label.TextSize = ts
		}
		co.label.Text = fitText(c.Label, ts, p1.X-p0.X-6)
		co.label.Refresh()
		if co.label.Text != "" {
			co.label.Move(fyne.NewPos(p0.X+4, p0.Y+1))
			co.label.Show()
		} else {
			co.label.Hide()
		}
	}
	// Count labels that would overlap a heavier edge's label are hidden
	// (hubs gather many edges; a pile of numbers reads as none).
	var labelled []fyne.Position
	free := func(p fyne.Position) bool {
		for _, q := range labelled {
			if dx, dy := p.X-q.X, p.Y-q.Y; dx > -26 && dx < 26 && dy > -13 && dy < 13 {
				return false
			}
		}
		return true
	}
	for _, i := range r.byCount {
		eo := r.edges[i]
		e := lay.Edges[eo.idx]
		hl := g.selected != "" && (e.From == g.selected || e.To == g.selected)
		col := EdgeColor(e.Kind)
		width := EdgeWidth(e.Count)
		if hl {
			col = selectColor
			width = max(width, 2.4)
		} else if g.selected != "" {
			col.A = 0x90
		}
		for j, l := range eo.lines {
			l.Position1 = g.toScreen(eo.segs[j][0])
			l.Position2 = g.toScreen(eo.segs[j][1])
			if l.StrokeColor != col || l.StrokeWidth != width {
				l.StrokeColor, l.StrokeWidth = col, width
			}
		}
		if eo.count != nil {
			p := g.toScreen(eo.mid)
			if sc >= 0.4 && (hl || free(p)) {
				labelled = append(labelled, p)
				ms := eo.count.MinSize()
				eo.count.Move(fyne.NewPos(p.X-ms.Width/2, p.Y-ms.Height/2))
				eo.badge.Move(fyne.NewPos(p.X-ms.Width/2-2, p.Y-ms.Height/2+1))
				eo.badge.Resize(fyne.NewSize(ms.Width+4, ms.Height-2))
				eo.count.Color = color.NRGBA{0x1e, 0x29, 0x3b, 0xff}
				eo.badge.StrokeWidth = 0
				if hl {
					eo.count.Color = selectColor
					eo.badge.StrokeColor, eo.badge.StrokeWidth = selectColor, 1
				}
				eo.count.Show()
				eo.badge.Show()
			} else {
				eo.count.Hide()
				eo.badge.Hide()
			}
		}
		if eo.head != nil && len(e.Points) > 0 {
			from := g.toScreen(e.Points[len(e.Points)-1])
			tip := g.toScreen(*e.Tip)
			dx, dy := tip.X-from.X, tip.Y-from.Y
			length := float32(math.Hypot(float64(dx), float64(dy)))
			size := max(length, 3, width*2.5)
			eo.head.Resize(fyne.NewSize(size, size))
			mid := fyne.NewPos((from.X+tip.X)/2, (from.Y+tip.Y)/2)
			eo.head.Move(fyne.NewPos(mid.X-size/2, mid.Y-size/2))
			// A regular triangle points up at Angle 0; rotate it clockwise to dx,dy.
			eo.head.Angle = float32(math.Atan2(float64(dx), float64(-dy)) * 180 / math.Pi)
			eo.head.FillColor = col
		}
	}
	for _, no := range r.nodes {
		b := lay.Nodes[no.id]
		p := g.toScreen(Point{b.X - b.W/2, b.Y - b.H/2})
		sz := fyne.NewSize(float32(b.W)*sc, float32(b.H)*sc)
		no.box.Move(p)
		no.box.Resize(sz)
		fill, line := NodeColors(mustNode(g.view, no.id))
		switch g.marks[no.id] {
		case MarkPass:
			fill, line = color.NRGBA{0xdc, 0xfc, 0xe7, 0xff}, color.NRGBA{0x16, 0xa3, 0x4a, 0xff}
		case MarkFail:
			fill, line = color.NRGBA{0xfe, 0xe2, 0xe2, 0xff}, color.NRGBA{0xdc, 0x26, 0x26, 0xff}
		}
		if g.NodeColor != nil {
			if f, l, ok := g.NodeColor(no.id); ok {
				fill, line = f, l
			}
		}
		no.box.FillColor = fill
		switch {
		case no.id == g.selected:
			no.box.StrokeColor, no.box.StrokeWidth = selectColor, 3
		case no.id == g.hovered:
			no.box.StrokeColor, no.box.StrokeWidth = line, 2.4
		default:
			no.box.StrokeColor, no.box.StrokeWidth = line, 1.2
		}
		no.box.CornerRadius = 5 * sc
		if showText {
			if no.label.TextSize != textSize {
				no.label.TextSize = textSize
				no.label.Refresh()
			}
			ts := no.label.MinSize()
			no.label.Move(fyne.NewPos(p.X, p.Y+(sz.Height-ts.Height)/2))
			no.label.Resize(fyne.NewSize(sz.Width, ts.Height))
			no.label.Show()
		} else {
			no.label.Hide()
		}
	}
	r.placeTooltip(s)
}

func mustNode(v *View, id string) ViewNode {
	n, _ := v.Node(id)
	return n
}

func (r *graphRenderer) placeTooltip(s fyne.Size) {
	tip := r.g.Tooltip()
	if tip == "" {
		r.tipBox.Hide()
		for _, t := range r.tipLines {
			t.Hide()
		}
		return
	}
	lines := strings.Split(tip, "\n")
	var w, h float32
	for i, t := range r.tipLines {
		if i < len(lines) {
			t.Text = lines[i]
			t.Refresh()
			ms := t.MinSize()
			w = max(w, ms.Width)
			h += ms.Height
		}
	}
	pos := r.g.hoverPos.Add(fyne.NewPos(14, 14))
	if pos.X+w+12 > s.Width {
		pos.X = max(0, s.Width-w-12)
	}
	if pos.Y+h+8 > s.Height {
		pos.Y = max(0, r.g.hoverPos.Y-h-14)
	}
	r.tipBox.Move(pos)
	r.tipBox.Resize(fyne.NewSize(w+12, h+8))
	r.tipBox.Show()
	y := pos.Y + 4
	for i, t := range r.tipLines {
		if i >= len(lines) {
			t.Hide()
			continue
		}
		t.Move(fyne.NewPos(pos.X+6, y))
		t.Show()
		y += t.MinSize().Height
	}
}

func (r *graphRenderer) Refresh() {
	if r.builtFor != r.g.lay {
		r.build()
	}
	r.Layout(r.g.Size())
	canvas.Refresh(r.g)
}

// MinTextSize is the smallest text the graph draws (fyne units, pixels at
// scale 1): node labels smaller than this are hidden, cluster titles never
// get smaller.
const MinTextSize = 7

// EdgeWidth is the stroke width of an edge standing for count references:
// thicker for more, logarithmically, up to 6.
func EdgeWidth(count int) float32 {
	if count <= 1 {
		return 1.1
	}
	return float32(min(6, 1.1+0.8*math.Log2(float64(count))))
}

// Dashed reports whether edges of kind k are drawn dashed (dynamic dispatch
// and interface implementation: possible, not certain, targets).
func Dashed(k codegraph.EdgeKind) bool {
	return k == codegraph.EdgeDispatches || k == codegraph.EdgeImplements
}

// edgeSegments turns a polyline into the segments to draw: all of them, or
// for a dashed edge 5-point dashes with 4-point gaps.
func edgeSegments(pts []Point, dashed bool) [][2]Point {
	var out [][2]Point
	if !dashed {
		for j := 1; j < len(pts); j++ {
			out = append(out, [2]Point{pts[j-1], pts[j]})
		}
		return out
	}
	const dash, gap = 5.0, 4.0
	on, left := true, dash
	for j := 1; j < len(pts); j++ {
		a, b := pts[j-1], pts[j]
		l := math.Hypot(b.X-a.X, b.Y-a.Y)
		pos := 0.0
		for l-pos > 1e-9 {
			step := math.Min(left, l-pos)
			p0 := Point{a.X + (b.X-a.X)*pos/l, a.Y + (b.Y-a.Y)*pos/l}
			p1 := Point{a.X + (b.X-a.X)*(pos+step)/l, a.Y + (b.Y-a.Y)*(pos+step)/l}
			if on {
				out = append(out, [2]Point{p0, p1})
			}
			pos += step
			left -= step
			if left <= 1e-9 {
				on = !on
				left = dash
				if !on {
					left = gap
				}
			}
		}
	}
	return out
}

// polylineMid is the point halfway along a polyline.
func polylineMid(pts []Point) Point {
	if len(pts) == 0 {
		return Point{}
	}
	total := 0.0
	for j := 1; j < len(pts); j++ {
		total += math.Hypot(pts[j].X-pts[j-1].X, pts[j].Y-pts[j-1].Y)
	}
	half := total / 2
	for j := 1; j < len(pts); j++ {
		l := math.Hypot(pts[j].X-pts[j-1].X, pts[j].Y-pts[j-1].Y)
		if half <= l && l > 0 {
			t := half / l
			return Point{pts[j-1].X + (pts[j].X-pts[j-1].X)*t, pts[j-1].Y + (pts[j].Y-pts[j-1].Y)*t}
		}
		half -= l
	}
	return pts[len(pts)-1]
}

// fitText shortens s (with a leading "…", keeping the end: the most specific
// part of a path) to fit width at text size ts; "" when not even a few
// characters fit.
func fitText(s string, ts, width float32) string {
	per := ts * 0.6 // average glyph width of the UI font
	n := int(width / per)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n < 5 {
		return ""
	}
	return "…" + string(r[len(r)-n+1:])
}

// ---- PNG export ---------------------------------------------------------------

// exportMargin is the blank border around an exported drawing.
const exportMargin = 16

// maxExportPixels bounds an exported image's longer side.
const maxExportPixels = 8000

// RenderImage draws the whole current view off screen, exactly as the
// widget draws it (clusters, node borders and colours, test marks, curved
// and dashed edges with arrowheads, reference counts, the selection), at
// zoom scale (lowered so the longer side stays within 8,000 px). It returns
// nil before the first layout. Call it on the UI goroutine.
func (g *GraphView) RenderImage(scale float32) image.Image {
	if g.lay == nil || g.view == nil {
		return nil
	}
	w, h := float32(g.lay.Width), float32(g.lay.Height)
	if longest := max(w, h) * scale; longest > maxExportPixels {
		scale *= maxExportPixels / longest
	}
	c := &GraphView{layouter: g.layouter, view: g.view, lay: g.lay, marks: g.marks, NodeColor: g.NodeColor,
		selected: g.selected, scale: scale, fitted: true,
		offset: fyne.NewPos(exportMargin, exportMargin)}
	c.ExtendBaseWidget(c)
	cv := software.NewCanvas()
	cv.SetPadded(false)
	cv.SetContent(c)
	cv.Resize(fyne.NewSize(w*scale+2*exportMargin, h*scale+2*exportMargin))
	return cv.Capture()
}
