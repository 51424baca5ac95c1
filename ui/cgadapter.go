package ui

import (
	"context"
	"fmt"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
)

// cgGraph adapts *codegraph.Graph to Graph.
type cgGraph struct{ *codegraph.Graph }

// Search implements Graph with codegraph's fuzzy search.
func (g cgGraph) Search(query string, limit int) []string {
	ms := g.Graph.Search(query, limit)
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		if m.Node != nil {
			out = append(out, m.Node.ID)
		}
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

// Codegraph returns the underlying code graph project (for the pipeline).
func (c cgProject) Codegraph() *codegraph.Project { return c.p }
