package graphview

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"codeloom/app/codegraph"
)

// Budgets of one view: an overview or a focus view never draws more than
// about this many nodes and edges (the rest is summarised).
const (
	// DefaultNodeBudget is the number of nodes a folder summary aims at.
	DefaultNodeBudget = 60
	// DefaultEdgeBudget is the number of edges a view keeps (the heaviest).
	DefaultEdgeBudget = 150
	// OverviewEdgeBudget is the edges a folder summary keeps: a summary's
	// nodes are far apart, so each edge costs more room than in a focus view.
	OverviewEdgeBudget = 90
	// minOpenCap is how many items an opened folder shows at least, even
	// when the view is already at its node budget.
	minOpenCap = 12
)

// KindGroup is the kind of a node standing for several items of a folder
// that did not fit ("+170 more files in asyncio/").
const KindGroup codegraph.Kind = "group"

// ExternalNodeID is the ID of the node standing for all external packages in
// a folder summary.
const ExternalNodeID = "ext:packages"

// RestNodeID is the ID of the node standing for the items of folder dir cut
// by the budget; expanding it (ExpandedFolders[RestNodeID(dir)]) shows more.
func RestNodeID(dir string) string { return "rest:" + dir }

// folderTree is the folder hierarchy of a project's files.
type folderTree struct {
	files map[string][]string // folder → file node IDs directly in it
	subs  map[string][]string // folder → child folders
	count map[string]int      // folder → files beneath it
}

func dirOf(p string) string {
	d := path.Dir(p)
	if d == "." || d == "/" {
		return ""
	}
	return d
}

func (ix *Index) folders() *folderTree {
	t := &folderTree{files: map[string][]string{}, subs: map[string][]string{}, count: map[string]int{}}
	seen := map[string]bool{"": true}
	for _, n := range ix.order {
		if n.Kind != codegraph.KindFile {
			continue
		}
		d := dirOf(n.Path)
		t.files[d] = append(t.files[d], n.ID)
		for cur := d; ; cur = dirOf(cur) {
			t.count[cur]++
			if cur == "" {
				break
			}
			if !seen[cur] {
				seen[cur] = true
				p := dirOf(cur)
				t.subs[p] = append(t.subs[p], cur)
			}
		}
	}
	for _, s := range t.subs {
		sort.Strings(s)
	}
	return t
}

// weights counts, for every file, the references (non-contains edges) that
// start or end in it or in its definitions: the ranking of what to show.
func (ix *Index) weights() map[string]int {
	count := make([]int32, len(ix.all)) // by file node position
	for from := range ix.all {
		for _, ei := range ix.outList[ix.outOff[from]:ix.outOff[from+1]] {
			e := &ix.edges[ei]
			if e.Kind == codegraph.EdgeContains {
				continue
			}
			if f := ix.fileOf[from]; f >= 0 {
				count[f]++
			}
			if f := ix.fileOf[ix.pos[e.To]]; f >= 0 {
				count[f]++
			}
		}
	}
	w := map[string]int{}
	for p, c := range count {
		if c > 0 {
			w[ix.all[p].ID] = int(c)
		}
	}
	return w
}

// summaryItem is one candidate node of a folder summary.
type summaryItem struct {
	id     string // file ID or FolderNodeID
	folder string // for folders: the path
	weight int
}

// folderSummary builds the overview of a big project: folders as nodes,
// opened greedily (largest first) while the node budget allows, files of
// opened folders as nodes, what does not fit grouped into one "+k more"
// node per folder, and one edge per pair of nodes carrying the number of
// references beneath it.
func folderSummary(ix *Index, opts OverviewOptions) *View {
	budget := opts.Budget
	if budget <= 0 {
		budget = DefaultNodeBudget
	}
	t := ix.folders()
	wt := ix.weights()
	folderWeight := map[string]int{}
	for d, fs := range t.files {
		s := 0
		for _, f := range fs {
			s += wt[f]
		}
		for cur := d; ; cur = dirOf(cur) {
			folderWeight[cur] += s
			if cur == "" {
				break
			}
		}
	}
	// children lists the items directly in folder d, heaviest first.
	children := func(d string) []summaryItem {
		var out []summaryItem
		for _, s := range t.subs[d] {
			out = append(out, summaryItem{id: FolderNodeID(s), folder: s, weight: folderWeight[s]})
		}
		if opts.Filter.nodeOK(codegraph.KindFile) {
			for _, f := range t.files[d] {
				out = append(out, summaryItem{id: f, weight: wt[f]})
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].weight > out[j].weight })
		return out
	}
	open := map[string]bool{"": true}
	// Folders with a single child are opened: a chain like src/main/java
	// says nothing on its own.
	var openChain func(d string)
	openChain = func(d string) {
		if len(t.subs[d]) == 1 && len(t.files[d]) == 0 {
			open[t.subs[d][0]] = true
			openChain(t.subs[d][0])
		}
	}
	openChain("")
	for id, on := range opts.ExpandedFolders {
		if on && strings.HasPrefix(id, "dir:") {
			d := strings.TrimPrefix(id, "dir:")
			for cur := d; cur != ""; cur = dirOf(cur) {
				open[cur] = true // an opened folder inside a closed one opens both
			}
		}
	}
	// shown computes the items of the current opening (with the per-folder caps).
	type shownItem struct {
		summaryItem
		cluster string
		rest    int // for a rest node: how many items it stands for
	}
	var shown func() []shownItem
	shown = func() []shownItem {
		var out []shownItem
		var walk func(d string)
		walk = func(d string) {
			kids := children(d)
			limit := budget
			if d != "" {
				limit = max(minOpenCap, budget-len(out))
			}
			if opts.ExpandedFolders[RestNodeID(d)] {
				limit = max(limit, len(kids))
			}
			cluster := d
			if d == "" {
				cluster = ""
			}
			for i, k := range kids {
				if i >= limit-1 && len(kids) > limit {
					out = append(out, shownItem{summaryItem: summaryItem{id: RestNodeID(d), folder: d}, cluster: cluster, rest: len(kids) - i})
					return
				}
				if k.folder != "" && open[k.folder] {
					walk(k.folder)
					continue
				}
				out = append(out, shownItem{summaryItem: k, cluster: cluster})
			}
		}
		walk("")
		return out
	}
	items := shown()
	// Open the heaviest closed folders while the budget allows.
	for {
		best := ""
		for _, it := range items {
			if it.rest > 0 || it.folder == "" || open[it.folder] {
				continue
			}
			n := len(t.subs[it.folder]) + len(t.files[it.folder])
			if len(items)-1+n > budget || n < 2 {
				continue
			}
			if best == "" || t.count[it.folder] > t.count[best] {
				best = it.folder
			}
		}
		if best == "" {
			break
		}
		open[best] = true
		items = shown()
	}

	v := &View{Title: "Overview", Layout: LayoutGrid}
	visible := map[string]bool{}
	rep := map[string]string{} // file ID → the item standing for it
	for _, it := range items {
		var vn ViewNode
		switch {
		case it.rest > 0:
			where := it.folder + "/"
			if it.folder == "" {
				where = "the project root"
			}
			vn = ViewNode{ID: it.id, Kind: KindGroup, Label: fmt.Sprintf("+%d more in %s", it.rest, shortDir(it.folder)),
				Tooltip: fmt.Sprintf("%d more items in %s (cut by the node budget)\ndouble-click to show them", it.rest, where)}
		case it.folder != "":
			vn = ViewNode{ID: it.id, Kind: KindFolder, Label: fmt.Sprintf("%s/ · %d files", path.Base(it.folder), t.count[it.folder]),
				Tooltip: fmt.Sprintf("folder %s: %d files, %d references\ndouble-click to open it", it.folder, t.count[it.folder], folderWeight[it.folder])}
		default:
			n := ix.node(it.id)
			vn = ix.viewNode(n, "")
		}
		vn.Cluster = clusterTitle(it.cluster)
		v.Nodes = append(v.Nodes, vn)
		visible[vn.ID] = true
	}
	// Map every file to what stands for it: itself, its closest shown
	// folder, or the rest node of the opened folder it sits in.
	var repOfDir func(d string) string
	dirRep := map[string]string{}
	repOfDir = func(d string) string {
		if r, ok := dirRep[d]; ok {
			return r
		}
		r := ""
		switch {
		case visible[FolderNodeID(d)]:
			r = FolderNodeID(d)
		case d == "":
			r = ""
		case open[dirOf(d)] && visible[RestNodeID(dirOf(d))]:
			r = RestNodeID(dirOf(d))
		default:
			r = repOfDir(dirOf(d))
		}
		dirRep[d] = r
		return r
	}
	for _, n := range ix.order {
		if n.Kind != codegraph.KindFile {
			continue
		}
		switch d := dirOf(n.Path); {
		case visible[n.ID]:
			rep[n.ID] = n.ID
		case open[d] && visible[RestNodeID(d)]:
			rep[n.ID] = RestNodeID(d)
		default:
			rep[n.ID] = repOfDir(d)
		}
	}
	// Expanded files show their definitions, right after the file in its
	// own frame (the grid keeps them next to it, in view).
	defs := map[string][]ViewNode{}
	for _, n := range ix.order {
		if n.Kind == codegraph.KindFile || n.Kind == codegraph.KindPackage {
			continue
		}
		f := ix.FileOf(n.ID)
		if f == "" || !visible[f] || !opts.Expanded[f] || !opts.Filter.nodeOK(n.Kind) {
			continue
		}
		defs[f] = append(defs[f], ix.viewNode(n, ""))
		visible[n.ID] = true
	}
	if len(defs) > 0 {
		var nodes []ViewNode
		for _, vn := range v.Nodes {
			nodes = append(nodes, vn)
			for _, d := range defs[vn.ID] {
				d.Cluster = vn.Cluster
				nodes = append(nodes, d)
			}
		}
		v.Nodes = nodes
	}
	// External packages: one node, or (expanded) the most used ones. A
	// package whose import path names a folder of the project (Go's
	// standard library, a monorepo's own packages) stands for that folder.
	pkgRep := map[string]string{}
	var ext []summaryItem
	pw := map[string]int{}
	for _, n := range ix.order {
		if n.Kind != codegraph.KindPackage {
			continue
		}
		name := strings.Trim(n.Name, "\"'")
		if _, ok := t.count[name]; ok && name != "" {
			if fs := t.files[name]; len(fs) > 0 {
				pkgRep[n.ID] = rep[fs[0]]
			} else {
				pkgRep[n.ID] = repOfDir(name)
			}
			continue
		}
		for e := range ix.inEdges(n.ID) {
			if e.Kind != codegraph.EdgeContains {
				pw[n.ID]++
			}
		}
		ext = append(ext, summaryItem{id: n.ID, weight: pw[n.ID]})
	}
	if len(ext) > 0 && opts.Filter.nodeOK(codegraph.KindPackage) {
		if opts.ExpandedFolders[ExternalNodeID] {
			sort.SliceStable(ext, func(i, j int) bool { return ext[i].weight > ext[j].weight })
			show := min(len(ext), max(minOpenCap, budget-len(v.Nodes)))
			for i, it := range ext {
				if i < show {
					v.Nodes = append(v.Nodes, ix.viewNode(ix.node(it.id), "external packages"))
					visible[it.id] = true
					pkgRep[it.id] = it.id
				} else {
					pkgRep[it.id] = ExternalNodeID
				}
			}
			if len(ext) > show {
				v.Nodes = append(v.Nodes, ViewNode{ID: ExternalNodeID, Kind: KindGroup, Cluster: "external packages",
					Label: fmt.Sprintf("+%d more packages", len(ext)-show), Tooltip: "external packages cut by the node budget"})
				visible[ExternalNodeID] = true
			}
		} else {
			v.Nodes = append(v.Nodes, ViewNode{ID: ExternalNodeID, Kind: codegraph.KindPackage,
				Label:   fmt.Sprintf("external packages · %d", len(ext)),
				Tooltip: fmt.Sprintf("%d external packages the project uses\ndouble-click to show the most used", len(ext))})
			visible[ExternalNodeID] = true
			for _, it := range ext {
				pkgRep[it.id] = ExternalNodeID
			}
		}
	}
	represent := func(id string) string {
		if visible[id] {
			return id
		}
		if r, ok := pkgRep[id]; ok {
			return r
		}
		return rep[ix.FileOf(id)]
	}
	eb := opts.EdgeBudget
	if eb <= 0 {
		eb = OverviewEdgeBudget
	}
	// The "+k more" nodes stand for what was left out: their references
	// (often the most, as they gather the most files) would turn them into
	// hubs that every other edge crosses, so they get none.
	drawn := func(id string) string {
		if r := represent(id); !strings.HasPrefix(r, "rest:") {
			return r
		}
		return ""
	}
	v.Edges, v.HiddenEdges = ix.countedEdges(visible, drawn, opts.Filter, eb)
	return v
}

func edgeBudget(b int) int {
	if b <= 0 {
		return DefaultEdgeBudget
	}
	return b
}

// shortDir abbreviates a folder path for a label ("a/b/c/d" → "…/c/d").
func shortDir(d string) string {
	if d == "" {
		return "/"
	}
	parts := strings.Split(d, "/")
	if len(parts) > 2 {
		return "…/" + strings.Join(parts[len(parts)-2:], "/") + "/"
	}
	return d + "/"
}

func clusterTitle(d string) string {
	if d == "" {
		return ""
	}
	return d + "/"
}

// countedEdges maps every edge to its endpoints' representatives (contains
// edges only between nodes both visible), merges edges joining the same pair
// into one carrying their number (its kind the highest-ranked among them),
// and keeps the budget heaviest; it returns them and how many were dropped.
func (ix *Index) countedEdges(visible map[string]bool, represent func(string) string, f Filter, budget int) ([]ViewEdge, int) {
	type pair struct{ from, to string }
	at := map[pair]int{}
	var out []ViewEdge
	for _, n := range ix.order {
		for e := range ix.outEdges(n.ID) {
			if !f.edgeOK(e.Kind) {
				continue
			}
			var from, to string
			if e.Kind == codegraph.EdgeContains {
				if !visible[e.From] || !visible[e.To] {
					continue
				}
				from, to = e.From, e.To
			} else {
				from, to = represent(e.From), represent(e.To)
			}
			if from == "" || to == "" || from == to {
				continue
			}
			p := pair{from, to}
			if i, ok := at[p]; ok {
				out[i].Count++
				if kindRank(e.Kind) < kindRank(out[i].Kind) {
					out[i].Kind = e.Kind
				}
				continue
			}
			at[p] = len(out)
			out = append(out, ViewEdge{From: from, To: to, Kind: e.Kind, Count: 1})
		}
	}
	if len(out) <= budget {
		return out, 0
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ea, eb := out[idx[a]], out[idx[b]]
		// Contains edges hold expanded files together: keep them first.
		ca, cb := ea.Kind == codegraph.EdgeContains, eb.Kind == codegraph.EdgeContains
		if ca != cb {
			return ca
		}
		return ea.Count > eb.Count
	})
	keep := make([]bool, len(out))
	for _, i := range idx[:budget] {
		keep[i] = true
	}
	kept := make([]ViewEdge, 0, budget)
	for i, e := range out {
		if keep[i] {
			kept = append(kept, e)
		}
	}
	return kept, len(out) - budget
}
