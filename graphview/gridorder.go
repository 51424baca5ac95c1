package graphview

import (
	"math"
	"sort"
)

// maxEmbedNodes bounds the views whose grid cells are ordered by a force
// embedding (O(n²) per round); bigger views keep their order.
const maxEmbedNodes = 400

// embed places v's nodes in the plane so that nodes joined by heavy edges
// end up close (a few rounds of Fruchterman–Reingold, edges weighted by
// the log of their count, nodes of a cluster pulled together): the grid
// layout then fills its cells in that order, which keeps connected nodes
// next to each other and uncrosses most of the edges of a summary.
// Deterministic; nil for views too big or without edges.
func embed(v *View) map[string]Point {
	n := len(v.Nodes)
	if n < 3 || n > maxEmbedNodes || len(v.Edges) == 0 {
		return nil
	}
	idx := make(map[string]int, n)
	for i, vn := range v.Nodes {
		idx[vn.ID] = i
	}
	type link struct {
		a, b int
		w    float64
	}
	var links []link
	for _, e := range v.Edges {
		a, ok1 := idx[e.From]
		b, ok2 := idx[e.To]
		if !ok1 || !ok2 || a == b {
			continue
		}
		links = append(links, link{a, b, 1 + math.Log(float64(max(1, e.Count)))})
	}
	if len(links) == 0 {
		return nil
	}
	// Start on a circle in view order (deterministic).
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		t := 2 * math.Pi * float64(i) / float64(n)
		xs[i], ys[i] = math.Cos(t), math.Sin(t)
	}
	k := math.Sqrt(4.0 / float64(n)) // ideal distance in a 2×2 box
	dx, dy := make([]float64, n), make([]float64, n)
	temp := 0.2
	const rounds = 120
	for r := 0; r < rounds; r++ {
		for i := range dx {
			dx[i], dy[i] = 0, 0
		}
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				ddx, ddy := xs[i]-xs[j], ys[i]-ys[j]
				d2 := ddx*ddx + ddy*ddy + 1e-9
				f := k * k / d2 // repulsion / distance
				if v.Nodes[i].Cluster == v.Nodes[j].Cluster {
					f *= 0.6
				}
				dx[i] += ddx * f
				dy[i] += ddy * f
				dx[j] -= ddx * f
				dy[j] -= ddy * f
			}
		}
		for _, l := range links {
			ddx, ddy := xs[l.a]-xs[l.b], ys[l.a]-ys[l.b]
			d := math.Sqrt(ddx*ddx + ddy*ddy + 1e-12)
			f := d / k * l.w // attraction / distance
			dx[l.a] -= ddx * f
			dy[l.a] -= ddy * f
			dx[l.b] += ddx * f
			dy[l.b] += ddy * f
		}
		for i := 0; i < n; i++ {
			d := math.Hypot(dx[i], dy[i])
			if d > 0 {
				s := math.Min(d, temp) / d
				xs[i] += dx[i] * s
				ys[i] += dy[i] * s
			}
		}
		temp *= 0.97
	}
	out := make(map[string]Point, n)
	for i, vn := range v.Nodes {
		out[vn.ID] = Point{xs[i], ys[i]}
	}
	return out
}

// gridOrder reorders the nodes of one grid block, filled column by column
// with perCol nodes a column, so that each node's cell follows its place
// in the embedding: columns by x, then each column by y.
func gridOrder(nodes []ViewNode, pos map[string]Point, perCol int) []ViewNode {
	if pos == nil || len(nodes) < 3 || perCol < 1 {
		return nodes
	}
	out := append([]ViewNode(nil), nodes...)
	sort.SliceStable(out, func(i, j int) bool { return pos[out[i].ID].X < pos[out[j].ID].X })
	for c := 0; c < len(out); c += perCol {
		col := out[c:min(len(out), c+perCol)]
		sort.SliceStable(col, func(i, j int) bool { return pos[col[i].ID].Y < pos[col[j].ID].Y })
	}
	return out
}

// refineOrder improves a block's order by swapping pairs of cells while
// that shortens the block's edges (weighted by the log of their count),
// cells being perCol to a column, cellW × cellH apart. A few passes over
// all pairs: cheap at summary sizes.
func refineOrder(nodes []ViewNode, edges []ViewEdge, perCol int, cellW, cellH float64) []ViewNode {
	n := len(nodes)
	if n < 3 || n > maxEmbedNodes || perCol < 1 {
		return nodes
	}
	at := make(map[string]int, n)
	for i, vn := range nodes {
		at[vn.ID] = i
	}
	type half struct {
		other int
		w     float64
	}
	adj := make([][]half, n)
	for _, e := range edges {
		a, ok1 := at[e.From]
		b, ok2 := at[e.To]
		if !ok1 || !ok2 || a == b {
			continue
		}
		w := 1 + math.Log(float64(max(1, e.Count)))
		adj[a] = append(adj[a], half{b, w})
		adj[b] = append(adj[b], half{a, w})
	}
	cell := make([]int, n) // node → cell
	for i := range cell {
		cell[i] = i
	}
	xy := func(c int) (float64, float64) { return float64(c/perCol) * cellW, float64(c%perCol) * cellH }
	cost := func(i, ci int, skip int) float64 {
		x, y := xy(ci)
		s := 0.0
		for _, h := range adj[i] {
			if h.other == skip {
				continue
			}
			ox, oy := xy(cell[h.other])
			s += h.w * math.Hypot(x-ox, y-oy)
		}
		return s
	}
	for pass := 0; pass < 4; pass++ {
		improved := false
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				ci, cj := cell[i], cell[j]
				// The edge between i and j (if any) keeps its length.
				before := cost(i, ci, j) + cost(j, cj, i)
				after := cost(i, cj, j) + cost(j, ci, i)
				if after < before-1e-9 {
					cell[i], cell[j] = cj, ci
					improved = true
				}
			}
		}
		if !improved {
			break
		}
	}
	out := make([]ViewNode, n)
	for i, c := range cell {
		out[c] = nodes[i]
	}
	return out
}
