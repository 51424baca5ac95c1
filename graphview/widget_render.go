package graphview

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"

	"codeloom/app/codegraph"
)

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
