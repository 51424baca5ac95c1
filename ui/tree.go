package ui

import (
	"path"
	"sort"
	"strings"

	"codeloom/app/codegraph"
	"codeloom/graphview"
)

// treeModel is the side panel's tree: folders → files → classes →
// functions/methods, optionally filtered by a substring. Folder IDs start
// with "dir:"; other IDs are code graph node IDs. Built by a plain function so
// tests can check it without a window.
type treeModel struct {
	children map[string][]string
	parent   map[string]string // each item's parent ("" for the top level)
	labels   map[string]string
	branch   map[string]bool
}

func folderID(p string) string { return "dir:" + p }

// buildTree builds the tree of g, keeping only nodes whose name, qualified
// name or path contains filter (case-insensitive) and their ancestors.
func buildTree(g Graph, filter string) *treeModel {
	t := &treeModel{children: map[string][]string{}, parent: map[string]string{}, labels: map[string]string{}, branch: map[string]bool{}}
	if g == nil {
		return t
	}
	filter = strings.ToLower(strings.TrimSpace(filter))
	nodes := g.Nodes()
	byID := make(map[string]*codegraph.Node, len(nodes))
	for _, n := range nodes {
		byID[n.ID] = n
	}
	parentOf := map[string]string{}
	for _, n := range nodes {
		if n.Parent != "" {
			parentOf[n.ID] = n.Parent
		}
	}
	for _, e := range g.Edges() {
		if e.Kind == codegraph.EdgeContains {
			if _, ok := parentOf[e.To]; !ok {
				parentOf[e.To] = e.From
			}
		}
	}
	match := func(n *codegraph.Node) bool {
		if filter == "" {
			return true
		}
		return strings.Contains(strings.ToLower(n.Name), filter) ||
			strings.Contains(strings.ToLower(n.QualName), filter) ||
			strings.Contains(strings.ToLower(n.Path), filter)
	}
	keep := map[string]bool{}
	for _, n := range nodes {
		if n.Kind == codegraph.KindPackage || !match(n) {
			continue
		}
		for cur, i := n.ID, 0; cur != "" && i < 64 && !keep[cur]; cur, i = parentOf[cur], i+1 {
			keep[cur] = true
		}
	}
	addChild := func(parent, child string) {
		if _, added := t.parent[child]; added {
			return // an item has one parent
		}
		t.parent[child] = parent
		t.children[parent] = append(t.children[parent], child)
		t.branch[parent] = true
	}
	var addFolder func(dir string) string
	addFolder = func(dir string) string {
		if dir == "." || dir == "" || dir == "/" {
			return ""
		}
		id := folderID(dir)
		if _, ok := t.labels[id]; !ok {
			t.labels[id] = path.Base(dir) + "/"
			addChild(addFolder(path.Dir(dir)), id)
		}
		return id
	}
	for _, n := range nodes {
		if !keep[n.ID] {
			continue
		}
		t.labels[n.ID] = treeLabel(n)
		if n.Kind == codegraph.KindFile {
			addChild(addFolder(path.Dir(n.Path)), n.ID)
			continue
		}
		if p := parentOf[n.ID]; p != "" && byID[p] != nil {
			addChild(p, n.ID)
		}
	}
	order := func(id string) (int, string, int) {
		if strings.HasPrefix(id, "dir:") {
			return 0, t.labels[id], 0
		}
		n := byID[id]
		if n.Kind == codegraph.KindFile {
			return 1, n.Path, 0
		}
		return 2, "", n.StartLine
	}
	for _, kids := range t.children {
		sort.SliceStable(kids, func(i, j int) bool {
			ai, as, al := order(kids[i])
			bi, bs, bl := order(kids[j])
			if ai != bi {
				return ai < bi
			}
			if as != bs {
				return as < bs
			}
			return al < bl
		})
	}
	return t
}

func treeLabel(n *codegraph.Node) string {
	switch n.Kind {
	case codegraph.KindFile:
		return path.Base(n.Path)
	case codegraph.KindClass:
		return graphview.KindWord(n) + " " + n.Name
	case codegraph.KindFunction, codegraph.KindMethod:
		return n.Name + "()"
	}
	return n.Name
}
