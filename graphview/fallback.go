package graphview

import (
	"math"
	"sort"

	"codeloom/app/codegraph"
)

// Limits beyond which a view is not given to Graphviz: its layout time grows
// quickly with the number of edges (tens of seconds past ~1,000), so bigger
// views get the grid layout computed here instead.
const (
	MaxGraphvizNodes = 220
	MaxGraphvizEdges = 400
)

// GridLayout lays v out without Graphviz, in time linear in its size: the
// nodes of each cluster in a block of columns, the blocks in rows, edges as
// straight lines. It is the fallback when a view is too big for Graphviz or
// Graphviz runs past its time budget.
func GridLayout(v *View) *Layout { return gridLayout(v, true) }

// gridLayout is GridLayout; ordered false keeps the view's node order in
// every block (tests compare the two).
func gridLayout(v *View, ordered bool) *Layout {
	const (
		gapX, gapY = 28.0, 12.0 // between nodes, points
		pad        = 14.0       // inside a cluster frame
		title      = 16.0       // room for a cluster's title
		blockGap   = 30.0
	)
	h := nodeHeight * 72
	lay := &Layout{Nodes: map[string]NodeBox{}}
	var order []string
	groups := map[string][]ViewNode{}
	for _, n := range v.Nodes {
		if _, ok := groups[n.Cluster]; !ok {
			order = append(order, n.Cluster)
		}
		groups[n.Cluster] = append(groups[n.Cluster], n)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i] == "" && order[j] != "" })
	total := 0.0
	for _, n := range v.Nodes {
		total += (nodeWidth(n.Label)*72 + gapX) * (h + gapY)
	}
	rowWidth := math.Max(400, math.Sqrt(total*1.3)) // a landscape drawing
	var pos map[string]Point
	if ordered {
		pos = embed(v)
	}
	x, y, rowH := 0.0, 0.0, 0.0
	for _, c := range order {
		nodes := groups[c]
		// Columns as tall as make the block a little wider than high.
		avgW := 0.0
		for _, n := range nodes {
			avgW += nodeWidth(n.Label)*72 + gapX
		}
		avgW /= float64(len(nodes))
		perCol := max(1, int(math.Ceil(math.Sqrt(float64(len(nodes))*avgW/(1.3*(h+gapY))))))
		if ordered && summaryBlock(nodes) {
			// Connected nodes in neighbouring cells: short edges, few crossings.
			nodes = gridOrder(nodes, pos, perCol)
			nodes = refineOrder(nodes, v.Edges, perCol, avgW, h+gapY)
		}
		// Column widths.
		var cols [][]ViewNode
		for i := 0; i < len(nodes); i += perCol {
			cols = append(cols, nodes[i:min(len(nodes), i+perCol)])
		}
		bw, bh := 0.0, float64(perCol)*(h+gapY)-gapY
		colW := make([]float64, len(cols))
		for i, col := range cols {
			for _, n := range col {
				colW[i] = math.Max(colW[i], nodeWidth(n.Label)*72)
			}
			bw += colW[i] + gapX
		}
		bw -= gapX
		top := 0.0
		if c != "" {
			bw, bh, top = bw+2*pad, bh+2*pad+title, pad+title
		}
		if x > 0 && x+bw > rowWidth {
			x, y, rowH = 0, y+rowH+blockGap, 0
		}
		cx := x
		if c != "" {
			cx += pad
			lay.Clusters = append(lay.Clusters, ClusterBox{Label: c, X0: x, Y0: y, X1: x + bw, Y1: y + bh})
		}
		for i, col := range cols {
			for j, n := range col {
				w := nodeWidth(n.Label) * 72
				lay.Nodes[n.ID] = NodeBox{ID: n.ID, X: cx + colW[i]/2, Y: y + top + float64(j)*(h+gapY) + h/2, W: w, H: h}
			}
			cx += colW[i] + gapX
		}
		x += bw + blockGap
		rowH = math.Max(rowH, bh)
		lay.Width = math.Max(lay.Width, x-blockGap)
	}
	lay.Height = y + rowH
	for _, e := range v.Edges {
		a, ok1 := lay.Nodes[e.From]
		b, ok2 := lay.Nodes[e.To]
		if !ok1 || !ok2 {
			continue
		}
		p0, p1 := boxExit(a, b), boxExit(b, a)
		dx, dy := p1.X-p0.X, p1.Y-p0.Y
		l := math.Hypot(dx, dy)
		if l < 1 {
			continue
		}
		// Leave room for the arrowhead (7 points) before the target.
		head := math.Min(7, l/2)
		mid := Point{p1.X - dx/l*head, p1.Y - dy/l*head}
		tip := p1
		lay.Edges = append(lay.Edges, EdgePath{From: e.From, To: e.To, Kind: e.Kind, Count: e.Count, Points: []Point{p0, mid}, Tip: &tip})
	}
	return lay
}

// summaryBlock reports whether a grid block holds only summary items
// (folders, files, groups, packages), whose order carries no meaning; an
// expanded file's definitions stay right after it.
func summaryBlock(nodes []ViewNode) bool {
	for _, n := range nodes {
		switch n.Kind {
		case KindFolder, KindGroup, codegraph.KindFile, codegraph.KindPackage:
		default:
			return false
		}
	}
	return true
}

// boxExit is where the segment from a's centre to b's centre leaves a's box.
func boxExit(a, b NodeBox) Point {
	dx, dy := b.X-a.X, b.Y-a.Y
	if dx == 0 && dy == 0 {
		return Point{a.X, a.Y}
	}
	tx, ty := math.Inf(1), math.Inf(1)
	if dx != 0 {
		tx = (a.W / 2) / math.Abs(dx)
	}
	if dy != 0 {
		ty = (a.H / 2) / math.Abs(dy)
	}
	t := math.Min(tx, ty)
	return Point{a.X + dx*t, a.Y + dy*t}
}
