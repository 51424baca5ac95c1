package codegraph

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Resolve finds the node a user names: a node ID, a qualified name, a file
// path (relative to the root), "path:line" (the innermost definition there),
// or a name that only one definition has. Ambiguous names are an error that
// lists the candidates.
func Resolve(g *Graph, arg string) (*Node, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return nil, fmt.Errorf("empty node name")
	}
	if n, ok := g.Node(arg); ok {
		return n, nil
	}
	rel := filepath.ToSlash(arg)
	if filepath.IsAbs(arg) {
		if r, err := filepath.Rel(g.root, arg); err == nil {
			rel = filepath.ToSlash(r)
		}
	}
	if n, ok := g.fileNodeOf(rel); ok {
		return n, nil
	}
	if i := strings.LastIndex(rel, ":"); i > 0 {
		if line, err := strconv.Atoi(rel[i+1:]); err == nil {
			if n, ok := g.NodeAt(rel[:i], line); ok {
				return n, nil
			}
			return nil, fmt.Errorf("no node at %s", arg)
		}
	}
	var byQual, byName []*Node
	for _, n := range g.nodes {
		if n.QualName == arg {
			byQual = append(byQual, n)
		} else if n.Name == arg && n.Kind != KindFile {
			byName = append(byName, n)
		}
	}
	if len(byQual) > 0 {
		return pickNamed(arg, byQual)
	}
	if len(byName) > 0 {
		return pickNamed(arg, byName)
	}
	// Suffix of a qualified name ("Class.method").
	var bySuffix []*Node
	for _, n := range g.nodes {
		if strings.HasSuffix(n.QualName, "."+arg) || strings.HasSuffix(n.QualName, ":"+arg) {
			bySuffix = append(bySuffix, n)
		}
	}
	if len(bySuffix) > 0 {
		return pickNamed(arg, bySuffix)
	}
	return nil, noNodeNamed(arg, g.Search(arg, 3))
}

// noNodeNamed is the error for a name nothing matched, suggesting the
// closest matches ms.
func noNodeNamed(arg string, ms []Match) error {
	hint := ""
	if len(ms) > 0 {
		var names []string
		for _, m := range ms {
			names = append(names, m.Node.QualName)
		}
		sort.Strings(names)
		hint = " (did you mean: " + strings.Join(names, ", ") + "?)"
	}
	return fmt.Errorf("no node named %q%s", arg, hint)
}

// pickNamed returns the one candidate a name matched, or an error listing
// them (sorted, the first 8) with their IDs.
func pickNamed(arg string, c []*Node) (*Node, error) {
	if len(c) == 1 {
		return c[0], nil
	}
	sortNodes(c)
	var b strings.Builder
	for i, n := range c {
		if i == 8 {
			fmt.Fprintf(&b, "\n  … %d more", len(c)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s %s (%s:%d) id %s", n.Kind, n.QualName, n.Path, n.StartLine, n.ID)
	}
	return nil, fmt.Errorf("%q is ambiguous; use an ID or qualified name:%s", arg, b.String())
}
