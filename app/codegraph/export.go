package codegraph

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// nodeLink is the node-link JSON form of a graph.
type nodeLink struct {
	Directed   bool           `json:"directed"`
	Multigraph bool           `json:"multigraph"`
	Graph      map[string]any `json:"graph"`
	Nodes      []*Node        `json:"nodes"`
	Edges      []Edge         `json:"edges"`
}

// WriteJSON writes g as node-link JSON: {"directed", "multigraph", "graph",
// "nodes": [{id, kind, name, qualname, path, start_line, end_line, ...}],
// "edges": [{source, target, kind, line}]}.
func WriteJSON(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	nodes := g.nodes
	if nodes == nil {
		nodes = []*Node{}
	}
	edges := g.Edges()
	if edges == nil {
		edges = []Edge{}
	}
	meta := map[string]any{"root": g.root, "stats": g.stats}
	if b := rawPathB64(g.root); b != "" {
		meta["root_b64"] = b
	}
	if err := enc.Encode(nodeLink{Directed: true, Multigraph: true, Graph: meta, Nodes: nodes, Edges: edges}); err != nil {
		return fmt.Errorf("write graph json: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write graph json: %w", err)
	}
	return nil
}

// WriteDOT writes g in Graphviz DOT: files as clusters of their definitions,
// packages as boxes, one edge per graph edge (contains edges are implied by
// the clusters and omitted).
func WriteDOT(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	q := strconv.Quote
	fmt.Fprintln(bw, "digraph codegraph {")
	fmt.Fprintln(bw, "  rankdir=LR; node [fontsize=10]; edge [fontsize=8];")
	shape := map[Kind]string{KindFile: "folder", KindClass: "box", KindFunction: "ellipse", KindMethod: "ellipse", KindPackage: "box3d"}
	for _, f := range g.nodes {
		if f.Kind != KindFile {
			continue
		}
		fmt.Fprintf(bw, "  subgraph %s {\n    label=%s;\n", q("cluster_"+f.ID), q(f.Path))
		fmt.Fprintf(bw, "    %s [label=%s shape=%s];\n", q(f.ID), q(f.Name), shape[f.Kind])
		for _, n := range g.defsOf(f.Path) {
			fmt.Fprintf(bw, "    %s [label=%s shape=%s];\n", q(n.ID), q(dotLabel(n)), shape[n.Kind])
		}
		fmt.Fprintln(bw, "  }")
	}
	for _, n := range g.nodes {
		if n.Kind == KindPackage {
			fmt.Fprintf(bw, "  %s [label=%s shape=%s];\n", q(n.ID), q(n.Name), shape[n.Kind])
		}
	}
	style := map[EdgeKind]string{EdgeImports: "dashed", EdgeInherits: "bold", EdgeUses: "dotted", EdgeRequires: "dashed",
		EdgeDispatches: "dashed", EdgeImplements: "dashed"}
	for _, e := range g.Edges() {
		if e.Kind == EdgeContains {
			continue
		}
		fmt.Fprintf(bw, "  %s -> %s [label=%s", q(e.From), q(e.To), q(string(e.Kind)))
		if s := style[e.Kind]; s != "" {
			fmt.Fprintf(bw, " style=%s", s)
		}
		fmt.Fprintln(bw, "];")
	}
	fmt.Fprintln(bw, "}")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write graph dot: %w", err)
	}
	return nil
}

// dotLabel is a node's DOT label: its name, or Class.method for a method.
func dotLabel(n *Node) string {
	name := n.Name
	if n.Kind == KindMethod && n.Parent != "" {
		if i := strings.LastIndex(n.QualName, "."); i > 0 {
			if j := strings.LastIndex(n.QualName[:i], "."); j >= 0 {
				name = n.QualName[j+1:]
			}
		}
	}
	return name
}
