package ui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
)

// cgGraph adapts *codegraph.Graph to Graph.
type cgGraph struct{ *codegraph.Graph }

// Search implements Graph with codegraph's fuzzy search.
// Names spelt by the starts of their words ("storjson" → store_json) come
// first, then codegraph's own matches.
func (g cgGraph) Search(query string, limit int) []string {
	out := wordStartSearch(g.Graph, query, limit)
	seen := map[string]bool{}
	for _, id := range out {
		seen[id] = true
	}
	for _, m := range g.Graph.Search(query, limit) {
		if m.Node != nil && !seen[m.Node.ID] && len(out) < limit {
			out = append(out, m.Node.ID)
		}
	}
	return out
}

// wordStartSearch ranks the nodes of g whose name matches query by word
// starts. Equal scores (every class named Popen) are ordered by: the name
// spelt exactly as typed, then the most referenced (subprocess.Popen before
// _bootsubprocess.Popen), then the shortest qualified name.
func wordStartSearch(g *codegraph.Graph, query string, limit int) []string {
	type hit struct {
		n     *codegraph.Node
		score int
		exact bool
		refs  int // incoming edges, counted only for the hits that can make the cut
	}
	q := strings.TrimSpace(query)
	lq := strings.ToLower(q)
	var hits []hit
	for _, n := range g.NamesHolding(lq) {
		if n == nil || n.Kind == codegraph.KindPackage {
			continue
		}
		if s := wordStartMatch(query, n.Name); s > 0 {
			hits = append(hits, hit{n: n, score: s, exact: n.Name == q})
		}
	}
	if len(hits) == 0 {
		return nil
	}
	if limit <= 0 {
		limit = len(hits)
	}
	// Only hits scoring at least the limit-th best score can be shown: keep
	// those (in node order, so the stable sort below orders them as it
	// would order every hit) and count their references.
	scores := make([]int, len(hits))
	for i, h := range hits {
		scores[i] = h.score
	}
	slices.Sort(scores)
	cut := scores[len(scores)-min(limit, len(scores))]
	kept := hits[:0]
	for _, h := range hits {
		if h.score >= cut {
			h.refs = len(g.In(h.n.ID))
			kept = append(kept, h)
		}
	}
	hits = kept
	slices.SortStableFunc(hits, func(a, b hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if a.exact != b.exact {
			if a.exact {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.refs, a.refs); c != 0 {
			return c
		}
		return cmp.Compare(len(a.n.QualName), len(b.n.QualName))
	})
	out := make([]string, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, h.n.ID)
	}
	return out
}

// cgProject adapts *codegraph.Project to Project.
type cgProject struct{ p *codegraph.Project }

// Root implements Project.
func (c cgProject) Root() string { return c.p.Root() }

// Graph implements Project.
func (c cgProject) Graph() Graph { return cgGraph{c.p.Graph()} }

// Close implements Project.
func (c cgProject) Close() error { return c.p.Close() }

// UpdateFiles implements Project.
func (c cgProject) UpdateFiles(ctx context.Context, paths []string) (Graph, error) {
	g, err := c.p.UpdateFiles(ctx, paths)
	if err != nil {
		return nil, err
	}
	return cgGraph{g}, nil
}

// CodegraphOpener indexes root with the code graph engine, keeping its cache
// in store when store is not nil.
func CodegraphOpener(ctx context.Context, root string, store *memory.Store, progress func(done, total int)) (Project, error) {
	opts := codegraph.Options{Progress: progress}
	if store != nil {
		opts.Store = store
	}
	p, err := codegraph.Open(ctx, root, opts)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", root, err)
	}
	return cgProject{p}, nil
}

// Watch implements watcher: it keeps the graph current as files change on
// disk, blocking until ctx ends.
func (c cgProject) Watch(ctx context.Context, onChange func(Graph)) error {
	return c.p.Watch(ctx, func(g *codegraph.Graph) { onChange(cgGraph{g}) })
}

// PrepareUpdates implements updatePreparer.
func (c cgProject) PrepareUpdates(ctx context.Context) error { return c.p.PrepareUpdates(ctx) }

// Codegraph returns the underlying code graph project (for the pipeline).
func (c cgProject) Codegraph() *codegraph.Project { return c.p }
