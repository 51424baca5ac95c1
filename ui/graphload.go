package ui

import (
	"fmt"
	"maps"
	"path"
	"sort"
	"time"

	"codeloom/app/codegraph"
	"codeloom/graphview"
)

// prepared is a graph snapshot with what the window derives from it (the
// view index and the side tree), computed off the UI goroutine: on a large
// project NewIndex alone takes seconds.
type prepared struct {
	g    Graph
	ix   *graphview.Index
	tree *treeModel
	took time.Duration
}

// prepareGraph indexes g for views and builds its tree (filtered by
// treeFilter). It is safe to call from any goroutine.
func prepareGraph(g Graph, treeFilter string) *prepared {
	start := time.Now()
	p := &prepared{g: g, ix: graphview.NewIndex(g), tree: buildTree(g, treeFilter)}
	p.took = time.Since(start)
	return p
}

// applyGraph makes p the window's graph (UI goroutine; cheap).
func (w *Workbench) applyGraph(p *prepared) {
	w.snap, w.index, w.treeModel = p.g, p.ix, p.tree
	w.tree.Refresh()
	if w.treeFilter.Text != "" {
		w.tree.OpenAllBranches()
	}
}

// setGraphThen prepares g in the background and, back on the UI goroutine,
// applies it (unless a newer snapshot superseded it) and calls then (when
// the project is still the same).
func (w *Workbench) setGraphThen(g Graph, then func()) {
	project, filter := w.project, w.treeFilter.Text
	w.graphGen++
	gen := w.graphGen
	go func() {
		p := prepareGraph(g, filter)
		w.do(func() {
			if w.project != project {
				return
			}
			if w.graphGen == gen { // else a newer snapshot is on its way
				w.applyGraph(p)
			}
			if then != nil {
				then()
			}
		})
	}()
}

// viewParams is what a view is built from, copied so that it can be built
// on another goroutine while the user keeps clicking.
type viewParams struct {
	ix       *graphview.Index
	mode     viewMode
	focusID  string
	depth    int
	expanded map[string]bool
	folders  map[string]bool
	filter   graphview.Filter
}

func (w *Workbench) viewParams() viewParams {
	return viewParams{
		ix: w.index, mode: w.mode, focusID: w.focusID, depth: w.depthValue(),
		expanded: maps.Clone(w.expanded), folders: maps.Clone(w.folders),
		filter: graphview.Filter{HideNodes: maps.Clone(w.filter.HideNodes), HideEdges: maps.Clone(w.filter.HideEdges)},
	}
}

// build builds the view (nil without an index). A focus on a node that is
// gone falls back to the overview.
func (p viewParams) build() *graphview.View {
	if p.ix == nil {
		return nil
	}
	if p.mode == modeFocus && p.focusID != "" {
		if n, ok := p.ix.Node(p.focusID); ok && isSymbol(n.Kind) {
			return graphview.Symbol(p.ix, p.focusID, graphview.SymbolOptions{Filter: p.filter})
		}
		v, err := graphview.Focus(p.ix, p.focusID, graphview.FocusOptions{Depth: p.depth, Budget: graphview.DefaultNodeBudget, Filter: p.filter})
		if err == nil {
			return v
		}
	}
	return graphview.Overview(p.ix, graphview.OverviewOptions{Expanded: p.expanded, ExpandedFolders: p.folders, Filter: p.filter})
}

// isSymbol reports whether nodes of kind k get the symbol view (callers,
// callees, members) rather than a plain neighbourhood.
func isSymbol(k codegraph.Kind) bool {
	return k == codegraph.KindFunction || k == codegraph.KindMethod || k == codegraph.KindClass
}

// syncViewLimit is the graph size up to which views are built on the UI
// goroutine (well under a millisecond); bigger graphs build them in the
// background.
const syncViewLimit = 5000

// rebuildView shows the view of the current mode. On a big graph the view
// is built in the background; a newer rebuild supersedes an older one.
func (w *Workbench) rebuildView() {
	if w.index == nil {
		return
	}
	p := w.viewParams()
	w.viewAsked = time.Now()
	w.viewGen++
	gen := w.viewGen
	if w.index.Len() <= syncViewLimit {
		w.showBuilt(p.build())
		return
	}
	w.graph.SetStatus(fmt.Sprintf("Building the view of %d nodes…", w.index.Len()))
	layouter := w.layouter
	go func() {
		v := p.build()
		layouter.Prepare(v) // drawn at once when it comes back
		w.do(func() {
			if w.viewGen == gen && w.index == p.ix {
				w.showBuilt(v)
			}
		})
	}()
}

func (w *Workbench) showBuilt(v *graphview.View) {
	if v == nil {
		return
	}
	if v.Center == "" && w.mode == modeFocus {
		w.mode = modeOverview // the focused node is gone
	}
	w.graph.ShowView(v)
}

// warmHighlighter tokenises a line in the languages of the project's most
// common file types, off the UI goroutine: chroma compiles a lexer's
// regular expressions on first use, which took seconds (Python's: 7.7 s
// under load) on the first click on a file.
func warmHighlighter(g Graph) {
	count := map[string]int{}
	for _, n := range g.Nodes() {
		if n != nil && n.Kind == codegraph.KindFile {
			count[path.Ext(n.Path)]++
		}
	}
	exts := make([]string, 0, len(count))
	for e := range count {
		if e != "" {
			exts = append(exts, e)
		}
	}
	sort.Slice(exts, func(i, j int) bool { return count[exts[i]] > count[exts[j]] })
	for _, e := range exts[:min(3, len(exts))] {
		HighlightRows("warm"+e, "x = 1\n", 0, 0)
	}
}
