package graphview

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"codeloom/app/codegraph"
)

// LayoutSymbol is View.Layout for a symbol view: laid out in columns by
// SymbolLayout, not by Graphviz.
const LayoutSymbol = "symbol"

// LayoutGrid is View.Layout for a view drawn with GridLayout (a folder
// summary: Graphviz's ranks make a dense summary a long, thin drawing that
// no readable zoom shows whole).
const LayoutGrid = "grid"

// Sides of a symbol view node (ViewNode.Side).
const (
	SideCaller = -1
	SideCenter = 0
	SideCallee = 1
)

// SymbolOptions choose what a symbol view shows.
type SymbolOptions struct {
	// PerSide is the most callers (and callees) drawn; 0 means 24.
	PerSide int
	Filter  Filter
}

// Reference is one line of a symbol's references panel.
type Reference struct {
	Relation string // "caller", "callee", "implementation", "member", …
	ID       string
	Name     string
	Path     string
	Line     int
	Kind     codegraph.EdgeKind
}

// refKinds are the edge kinds a symbol view follows.
func refKind(k codegraph.EdgeKind) bool {
	switch k {
	case codegraph.EdgeCalls, codegraph.EdgeDispatches, codegraph.EdgeUses, codegraph.EdgeInherits, codegraph.EdgeImplements:
		return true
	}
	return false
}

// members lists the definitions inside id (a class's methods).
func (ix *Index) members(id string) []string {
	var out []string
	for n := range ix.children(id) {
		if n.Kind != codegraph.KindFile {
			out = append(out, n.ID)
		}
	}
	return out
}

// References lists who refers to id and what id refers to (for a class, its
// members' references too), with file:line, callers first. A node of a large
// project can have tens of thousands (typing.py: 26,233 callers), so the
// panel calls it off the UI goroutine.
func References(ix *Index, id string) []Reference {
	self := map[string]bool{id: true}
	for _, m := range ix.members(id) {
		self[m] = true
	}
	type seenKey struct {
		rel   string
		other string
	}
	var out []Reference
	var order []uint8 // out[i]'s relation as its place in the list
	seen := map[seenKey]bool{}
	add := func(rel string, rank uint8, other string, k codegraph.EdgeKind) {
		key := seenKey{rel, other}
		if seen[key] || self[other] {
			return
		}
		seen[key] = true
		n := ix.node(other)
		out = append(out, Reference{Relation: rel, ID: other, Name: firstNonEmpty(n.QualName, n.Name), Path: n.Path, Line: n.StartLine, Kind: k})
		order = append(order, rank)
	}
	for s := range self {
		for e := range ix.inEdges(s) {
			switch {
			case e.Kind == codegraph.EdgeImplements || e.Kind == codegraph.EdgeInherits:
				add("implementation", 2, e.From, e.Kind)
			case refKind(e.Kind):
				add("caller", 0, e.From, e.Kind)
			}
		}
		for e := range ix.outEdges(s) {
			if refKind(e.Kind) {
				add("callee", 1, e.To, e.Kind)
			}
		}
	}
	// Sort positions, then permute: the comparison reads a byte, not a map,
	// and ties keep the order found (the position is the last key, so an
	// unstable sort gives the stable order without SortStable's merges).
	idx := make([]int32, len(out))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := cmp.Compare(order[a], order[b]); c != 0 {
			return c
		}
		if c := strings.Compare(out[a].Path, out[b].Path); c != 0 {
			return c
		}
		if c := cmp.Compare(out[a].Line, out[b].Line); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	sorted := make([]Reference, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted
}

// Symbol builds the Sourcetrail-style view of a function, method or class:
// the symbol in the centre (a class with its members), the nodes that refer
// to it on the left, those it refers to on the right, methods grouped under
// their class. Each side keeps PerSide nodes; the rest is one "+k more" stub.
func Symbol(ix *Index, id string, opts SymbolOptions) *View {
	root := ix.node(id)
	if root == nil {
		return &View{Title: "Symbol: (gone)"}
	}
	per := opts.PerSide
	if per <= 0 {
		per = 24
	}
	v := &View{Title: "Symbol: " + firstNonEmpty(root.QualName, root.Name), Center: id, Layout: LayoutSymbol}
	visible := map[string]bool{}
	groupOf := func(n *codegraph.Node) string {
		if p := ix.node(n.Parent); p != nil && p.Kind == codegraph.KindClass {
			return KindWord(p) + " " + p.Name
		}
		return n.Path
	}
	addNode := func(nid string, side int) {
		n := ix.node(nid)
		vn := ix.viewNode(n, groupOf(n))
		vn.Side = side
		v.Nodes = append(v.Nodes, vn)
		visible[nid] = true
	}
	centre := map[string]bool{id: true}
	cn := ix.viewNode(root, groupOf(root))
	if root.Kind == codegraph.KindClass {
		cn.Cluster = KindWord(root) + " " + root.Name
	}
	v.Nodes = append(v.Nodes, cn)
	visible[id] = true
	if root.Kind == codegraph.KindClass {
		for i, m := range ix.members(id) {
			if i >= per {
				break
			}
			if n := ix.node(m); opts.Filter.nodeOK(n.Kind) {
				addNode(m, SideCenter)
				centre[m] = true
			}
		}
	}
	type link struct {
		from, to string
		kind     codegraph.EdgeKind
	}
	var links []link
	callers, callees := map[string]bool{}, map[string]bool{}
	var callerOrder, calleeOrder []string
	centreIDs := make([]string, 0, len(centre))
	for c := range centre {
		centreIDs = append(centreIDs, c)
	}
	sort.Strings(centreIDs)
	for _, c := range centreIDs {
		for e := range ix.inEdges(c) {
			if !refKind(e.Kind) || !opts.Filter.edgeOK(e.Kind) || centre[e.From] {
				continue
			}
			if n := ix.node(e.From); n == nil || !opts.Filter.nodeOK(n.Kind) {
				continue
			}
			if !callers[e.From] {
				callers[e.From] = true
				callerOrder = append(callerOrder, e.From)
			}
			links = append(links, link{e.From, c, e.Kind})
		}
		for e := range ix.outEdges(c) {
			if !refKind(e.Kind) || !opts.Filter.edgeOK(e.Kind) || centre[e.To] {
				continue
			}
			if n := ix.node(e.To); n == nil || !opts.Filter.nodeOK(n.Kind) {
				continue
			}
			if !callees[e.To] {
				callees[e.To] = true
				calleeOrder = append(calleeOrder, e.To)
			}
			links = append(links, link{c, e.To, e.Kind})
		}
	}
	place := func(order []string, side int, what string) {
		sort.SliceStable(order, func(i, j int) bool {
			a, b := ix.node(order[i]), ix.node(order[j])
			if groupOf(a) != groupOf(b) {
				return groupOf(a) < groupOf(b)
			}
			return a.StartLine < b.StartLine
		})
		for i, nid := range order {
			if i >= per {
				stub := fmt.Sprintf("more:%s:%d", id, side)
				v.Nodes = append(v.Nodes, ViewNode{ID: stub, Label: fmt.Sprintf("+%d more %s", len(order)-per, what), Stub: true, More: len(order) - per, Side: side})
				return
			}
			if !visible[nid] {
				addNode(nid, side)
			}
		}
	}
	// A node both calling and called goes to the callers' side only.
	var onlyCallees []string
	for _, c := range calleeOrder {
		if !callers[c] {
			onlyCallees = append(onlyCallees, c)
		}
	}
	place(callerOrder, SideCaller, "callers")
	place(onlyCallees, SideCallee, "callees")
	seen := map[ViewEdge]bool{}
	for _, l := range links {
		if !visible[l.from] || !visible[l.to] {
			continue
		}
		e := ViewEdge{From: l.from, To: l.to, Kind: l.kind}
		if !seen[e] {
			seen[e] = true
			v.Edges = append(v.Edges, e)
		}
	}
	if len(v.Edges) > DefaultEdgeBudget {
		v.HiddenEdges = len(v.Edges) - DefaultEdgeBudget
		v.Edges = v.Edges[:DefaultEdgeBudget]
	}
	return v
}

// SymbolLayout lays a symbol view out in three columns (callers, the
// symbol, callees), each a stack of groups framed with their class or file,
// the middle column centred on the symbol.
func SymbolLayout(v *View) *Layout {
	const (
		colGap  = 110.0
		rowGap  = 10.0
		pad     = 10.0
		title   = 16.0
		groupGp = 14.0
	)
	h := nodeHeight * 72
	lay := &Layout{Nodes: map[string]NodeBox{}}
	cols := map[int][]ViewNode{}
	for _, n := range v.Nodes {
		cols[n.Side] = append(cols[n.Side], n)
	}
	width := map[int]float64{}
	for side, ns := range cols {
		for _, n := range ns {
			width[side] = math.Max(width[side], nodeWidth(n.Label)*72)
		}
		width[side] += 2 * pad
	}
	x := map[int]float64{SideCaller: 0}
	x[SideCenter] = width[SideCaller] + colGap
	if width[SideCaller] == 0 {
		x[SideCenter] = 0
	}
	x[SideCallee] = x[SideCenter] + width[SideCenter] + colGap
	heights := map[int]float64{}
	type placed struct {
		y0, y1 float64
		label  string
	}
	groups := map[int][]placed{}
	for _, side := range []int{SideCaller, SideCenter, SideCallee} {
		y := 0.0
		cur := "\x00"
		for _, n := range cols[side] {
			if n.Cluster != cur {
				if cur != "\x00" {
					groups[side][len(groups[side])-1].y1 = y - rowGap + pad
					y += pad + groupGp
				}
				cur = n.Cluster
				groups[side] = append(groups[side], placed{y0: y, label: n.Cluster})
				y += title
			}
			w := nodeWidth(n.Label) * 72
			lay.Nodes[n.ID] = NodeBox{ID: n.ID, X: x[side] + width[side]/2, Y: y + h/2, W: w, H: h}
			y += h + rowGap
		}
		if len(groups[side]) > 0 {
			groups[side][len(groups[side])-1].y1 = y - rowGap + pad
		}
		heights[side] = y
	}
	total := math.Max(heights[SideCaller], math.Max(heights[SideCenter], heights[SideCallee]))
	// Centre each column vertically.
	for _, side := range []int{SideCaller, SideCenter, SideCallee} {
		dy := (total - heights[side]) / 2
		for _, n := range cols[side] {
			b := lay.Nodes[n.ID]
			b.Y += dy
			lay.Nodes[n.ID] = b
		}
		for _, g := range groups[side] {
			if g.label == "" {
				continue
			}
			lay.Clusters = append(lay.Clusters, ClusterBox{Label: g.label, X0: x[side], Y0: g.y0 + dy, X1: x[side] + width[side], Y1: g.y1 + dy})
		}
	}
	lay.Width = x[SideCallee] + width[SideCallee]
	if width[SideCallee] == 0 {
		lay.Width = x[SideCenter] + width[SideCenter]
	}
	lay.Height = total + pad
	for _, e := range v.Edges {
		a, ok1 := lay.Nodes[e.From]
		b, ok2 := lay.Nodes[e.To]
		if !ok1 || !ok2 {
			continue
		}
		// Left to right: from the right side of a to the left side of b.
		p0 := Point{a.X + a.W/2, a.Y}
		p1 := Point{b.X - b.W/2, b.Y}
		if p1.X < p0.X { // same column (a member calling its class): go around
			p0 = Point{a.X - a.W/2, a.Y}
		}
		tip := p1
		end := Point{p1.X - 7, p1.Y}
		mx := (p0.X + end.X) / 2
		pts := flattenBezier([]Point{p0, {mx, p0.Y}, {mx, end.Y}, end}, 10)
		lay.Edges = append(lay.Edges, EdgePath{From: e.From, To: e.To, Kind: e.Kind, Count: e.Count, Points: pts, Tip: &tip})
	}
	return lay
}
