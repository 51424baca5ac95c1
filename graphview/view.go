// Package graphview turns a code graph into bounded, laid-out views and draws
// them as an interactive Fyne widget.
//
// The package is split so that behaviour can be tested without a window:
// view.go builds a small view model (nodes and edges) from a code graph at a
// level of detail (overview, expanded files, focus on a neighbourhood),
// layout.go lays a view out with Graphviz, and widget.go draws a laid-out view
// with Fyne canvas objects and handles pan, zoom, hover and taps.
package graphview

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"codeloom/app/codegraph"
)

// Source is the part of a code graph a view is built from. *codegraph.Graph
// satisfies it.
type Source interface {
	Nodes() []*codegraph.Node
	Edges() []codegraph.Edge
}

// ViewNode is one drawn node.
type ViewNode struct {
	ID      string         // code graph node ID, or a stub ID ("more:<parent>")
	Label   string         // text drawn in the node
	Kind    codegraph.Kind // colour and filter key; empty for stubs
	Tooltip string         // hover text: kind, qualified name, signature, file:line
	Cluster string         // folder or file the node is drawn inside ("" for none)
	Stub    bool           // a "+k more" placeholder for nodes cut by the budget
	More    int            // for stubs: how many nodes were cut
	Side    int            // symbol views: SideCaller, SideCenter or SideCallee
}

// ViewEdge is one drawn edge.
type ViewEdge struct {
	From, To string
	Kind     codegraph.EdgeKind
	// Count is how many code graph edges this edge stands for (edges lifted
	// to folders or files are merged); 0 or 1 for a single edge.
	Count int
}

// View is a bounded subgraph ready for layout.
type View struct {
	Title string
	Nodes []ViewNode
	Edges []ViewEdge
	// Center is the node to keep in sight when the whole view does not fit
	// at a readable zoom (the focus node of a focus view).
	Center string
	// HiddenEdges is how many (weaker) edges the edge budget left out.
	HiddenEdges int
	// Layout names a layout computed in Go instead of Graphviz
	// (LayoutSymbol); "" means Graphviz.
	Layout string
}

// Key identifies the view's content; equal keys lay out identically, so it is
// the layout cache key.
func (v *View) Key() string {
	h := sha256.New()
	fmt.Fprintf(h, "l%s\n", v.Layout)
	for _, n := range v.Nodes {
		fmt.Fprintf(h, "n%s\x00%s\x00%s\x00%s\x00%d\x00%d\n", n.ID, n.Label, n.Kind, n.Cluster, n.More, n.Side)
	}
	for _, e := range v.Edges {
		fmt.Fprintf(h, "e%s\x00%s\x00%s\x00%d\n", e.From, e.To, e.Kind, e.Count)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// Node returns the view node with this ID.
func (v *View) Node(id string) (ViewNode, bool) {
	for _, n := range v.Nodes {
		if n.ID == id {
			return n, true
		}
	}
	return ViewNode{}, false
}

// Mark is a run result drawn on a node (colour by last run).
type Mark int

// Marks.
const (
	MarkNone Mark = iota
	MarkPass
	MarkFail
)

// Filter says which node and edge kinds are hidden. The zero value shows all.
type Filter struct {
	HideNodes map[codegraph.Kind]bool
	HideEdges map[codegraph.EdgeKind]bool
}

func (f Filter) nodeOK(k codegraph.Kind) bool { return !f.HideNodes[k] }
func (f Filter) edgeOK(k codegraph.EdgeKind) bool {
	return !f.HideEdges[k]
}

// KindWord is the word a node's kind is shown with: its kind, except that
// Go has types where other languages have classes.
func KindWord(n *codegraph.Node) string {
	if n.Kind == codegraph.KindClass && n.Language == "go" {
		return "type"
	}
	return string(n.Kind)
}

// Tooltip is the hover text of a node: kind, qualified name, signature, file:line.
func Tooltip(n *codegraph.Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", KindWord(n), firstNonEmpty(n.QualName, n.Name))
	if n.Signature != "" {
		fmt.Fprintf(&b, "\n%s", n.Signature)
	}
	if n.Path != "" {
		if n.StartLine > 0 {
			fmt.Fprintf(&b, "\n%s:%d", n.Path, n.StartLine)
		} else {
			fmt.Fprintf(&b, "\n%s", n.Path)
		}
	}
	return b.String()
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// label is the short text drawn in a node.
func label(n *codegraph.Node) string {
	switch n.Kind {
	case codegraph.KindFile:
		return path.Base(n.Path)
	case codegraph.KindMethod:
		if n.Name != "" {
			return n.Name + "()"
		}
	case codegraph.KindFunction:
		return n.Name + "()"
	}
	return firstNonEmpty(n.Name, n.QualName, n.ID)
}

func (ix *Index) viewNode(n *codegraph.Node, cluster string) ViewNode {
	return ViewNode{ID: n.ID, Label: label(n), Kind: n.Kind, Tooltip: Tooltip(n), Cluster: cluster}
}

// folderOf is the cluster name of a file: its folder ("." for the root).
func folderOf(p string) string {
	d := path.Dir(p)
	if d == "" || d == "." {
		return "(project root)"
	}
	return d
}

// OverviewOptions choose what the overview shows.
type OverviewOptions struct {
	Expanded map[string]bool // file node IDs whose classes and functions are shown
	// ExpandedFolders lists collapsed-folder node IDs ("dir:<path>") opened by
	// the user.
	ExpandedFolders map[string]bool
	// FolderThreshold: with more files than this, each top-level folder is
	// drawn as one node until expanded. 0 means DefaultFolderThreshold; a
	// negative value never collapses.
	FolderThreshold int
	Filter          Filter
	// Budget is the maximum number of nodes: 0 means DefaultNodeBudget for a
	// folder summary and DefaultBudget*2 for a small project's files.
	Budget int
	// EdgeBudget is the maximum number of edges (the heaviest are kept); 0
	// means DefaultEdgeBudget.
	EdgeBudget int
}

// KindFolder is the kind of a collapsed folder node in an overview.
const KindFolder codegraph.Kind = "folder"

// DefaultFolderThreshold is the file count above which an overview is a
// folder summary instead of every file.
const DefaultFolderThreshold = 60

// FolderNodeID is the view ID of a collapsed folder.
func FolderNodeID(dir string) string { return "dir:" + dir }

// DefaultBudget is the default node budget of a focus view.
const DefaultBudget = 150

// DefaultDepth is the default neighbourhood depth of a focus view.
const DefaultDepth = 2

// Overview builds the level-of-detail overview: files and packages clustered
// by folder (each top-level folder collapsed into one node when the project
// has many files), with the definitions of expanded files shown inside their
// file. Edges between hidden nodes are lifted to the nearest visible
// ancestor (so a call between two collapsed files becomes a file→file edge).
func Overview(ix *Index, opts OverviewOptions) *View {
	threshold := opts.FolderThreshold
	if threshold == 0 {
		threshold = DefaultFolderThreshold
	}
	files := 0
	for _, n := range ix.order {
		if n.Kind == codegraph.KindFile {
			files++
		}
	}
	if threshold > 0 && files > threshold {
		return folderSummary(ix, opts)
	}
	return fileOverview(ix, opts)
}

// fileOverview is the overview of a small project: every file, clustered by
// folder.
func fileOverview(ix *Index, opts OverviewOptions) *View {
	budget := opts.Budget
	if budget <= 0 {
		budget = DefaultBudget * 2
	}
	v := &View{Title: "Overview"}
	visible := map[string]bool{}
	cut := 0
	add := func(vn ViewNode) bool {
		if len(v.Nodes) >= budget {
			cut++
			return false
		}
		v.Nodes = append(v.Nodes, vn)
		visible[vn.ID] = true
		return true
	}
	for _, n := range ix.order {
		switch n.Kind {
		case codegraph.KindFile:
			if opts.Filter.nodeOK(n.Kind) {
				add(ix.viewNode(n, folderOf(n.Path)))
			}
		case codegraph.KindPackage:
			if opts.Filter.nodeOK(n.Kind) {
				add(ix.viewNode(n, "external packages"))
			}
		}
	}
	for _, n := range ix.order {
		if n.Kind == codegraph.KindFile || n.Kind == codegraph.KindPackage {
			continue
		}
		f := ix.FileOf(n.ID)
		if f == "" || !visible[f] || !opts.Expanded[f] || !opts.Filter.nodeOK(n.Kind) {
			continue
		}
		add(ix.viewNode(n, n.Path))
	}
	if cut > 0 {
		v.Nodes = append(v.Nodes, ViewNode{ID: "more:overview", Label: fmt.Sprintf("+%d more", cut), Stub: true, More: cut})
	}
	v.Edges, v.HiddenEdges = ix.countedEdges(visible, func(id string) string {
		return ix.representative(id, visible)
	}, opts.Filter, edgeBudget(opts.EdgeBudget))
	return v
}

// representative is the nearest visible node containing id (id itself when
// visible).
func (ix *Index) representative(id string, visible map[string]bool) string {
	for cur, i := id, 0; cur != "" && i < 64; cur, i = ix.parentOf(cur), i+1 {
		if visible[cur] {
			return cur
		}
	}
	return ""
}

// kindRank orders edge kinds for merging: when several kinds join the same
// pair of overview nodes, the lowest rank is drawn.
func kindRank(k codegraph.EdgeKind) int {
	switch k {
	case codegraph.EdgeContains:
		return 0
	case codegraph.EdgeImports:
		return 1
	case codegraph.EdgeInherits:
		return 2
	case codegraph.EdgeCalls:
		return 3
	case codegraph.EdgeRequires:
		return 4
	case codegraph.EdgeDispatches, codegraph.EdgeImplements:
		return 5
	}
	return 6
}

// FocusOptions choose the neighbourhood a focus view shows.
type FocusOptions struct {
	Depth  int // hops from the focus, both directions; 0 means DefaultDepth
	Budget int // maximum number of real nodes; 0 means DefaultBudget
	Filter Filter
}

// Focus builds the neighbourhood of id: every node within Depth hops along
// visible edge kinds (either direction), breadth first, up to Budget nodes.
// A node whose neighbours were cut gets a "+k more" stub. The focus node is
// always shown, even when its kind is filtered out.
func Focus(ix *Index, id string, opts FocusOptions) (*View, error) {
	root := ix.node(id)
	if root == nil {
		return nil, fmt.Errorf("focus %q: no such node", id)
	}
	depth, budget := opts.Depth, opts.Budget
	if depth <= 0 {
		depth = DefaultDepth
	}
	if budget <= 0 {
		budget = DefaultBudget
	}
	v := &View{Title: "Focus: " + firstNonEmpty(root.QualName, root.Name), Center: id}
	visible := map[string]bool{id: true}
	order := []string{id}
	level := map[string]int{id: 0}
	cutFrom := map[string]map[string]bool{} // visible node → neighbours cut by the budget
	for q := 0; q < len(order); q++ {
		cur := order[q]
		if level[cur] >= depth {
			continue
		}
		for _, nb := range ix.neighbours(cur, opts.Filter) {
			if visible[nb] {
				continue
			}
			if len(order) >= budget {
				if cutFrom[cur] == nil {
					cutFrom[cur] = map[string]bool{}
				}
				cutFrom[cur][nb] = true
				continue
			}
			visible[nb] = true
			level[nb] = level[cur] + 1
			order = append(order, nb)
		}
	}
	for _, nid := range order {
		n := ix.node(nid)
		v.Nodes = append(v.Nodes, ix.viewNode(n, clusterOf(n)))
	}
	v.Edges = ix.directEdges(visible, opts.Filter)
	// Stubs, in BFS order so the result is deterministic.
	for _, nid := range order {
		cut := 0
		for nb := range cutFrom[nid] {
			if !visible[nb] {
				cut++
			}
		}
		if cut == 0 {
			continue
		}
		sid := "more:" + nid
		v.Nodes = append(v.Nodes, ViewNode{ID: sid, Label: fmt.Sprintf("+%d more", cut), Stub: true, More: cut, Cluster: clusterOf(ix.node(nid))})
		v.Edges = append(v.Edges, ViewEdge{From: nid, To: sid})
	}
	return v, nil
}

// clusterOf is the file a definition is drawn in, or the folder of a file.
func clusterOf(n *codegraph.Node) string {
	switch n.Kind {
	case codegraph.KindFile:
		return folderOf(n.Path)
	case codegraph.KindPackage:
		return "external packages"
	}
	return n.Path
}

// neighbours lists the nodes joined to id by a visible edge kind whose kind
// is not hidden, in a stable order (out-edges first).
func (ix *Index) neighbours(id string, f Filter) []string {
	var out []string
	seen := map[string]bool{}
	addE := func(other string, k codegraph.EdgeKind) {
		if !f.edgeOK(k) || seen[other] {
			return
		}
		if n := ix.node(other); n == nil || !f.nodeOK(n.Kind) {
			return
		}
		seen[other] = true
		out = append(out, other)
	}
	for e := range ix.outEdges(id) {
		addE(e.To, e.Kind)
	}
	for e := range ix.inEdges(id) {
		addE(e.From, e.Kind)
	}
	return out
}

// directEdges lists edges whose both ends are visible (no lifting).
func (ix *Index) directEdges(visible map[string]bool, f Filter) []ViewEdge {
	seen := map[ViewEdge]bool{}
	var out []ViewEdge
	for _, n := range ix.order {
		if !visible[n.ID] {
			continue
		}
		for e := range ix.outEdges(n.ID) {
			if !f.edgeOK(e.Kind) || !visible[e.To] || e.From == e.To {
				continue
			}
			ve := ViewEdge{From: e.From, To: e.To, Kind: e.Kind}
			if !seen[ve] {
				seen[ve] = true
				out = append(out, ve)
			}
		}
	}
	return out
}
