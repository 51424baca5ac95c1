package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/app/retrieval"
	"codeloom/models"
)

// ContextSource gathers the code a model needs for a request, within a
// token budget. RetrievalContext is the standard one.
type ContextSource interface {
	Gather(ctx context.Context, request string, budgetTokens int) (string, error)
}

// RetrievalContext gathers context with app/retrieval over the current code
// graph: BM25 over names, docstrings and code (fused with embedding
// similarity when Embed is set), widened by the graph into the code the
// matches need, in dependency order, within the token budget.
type RetrievalContext struct {
	Graph func() *codegraph.Graph
	// Engine counts tokens (and embeds when Embed is set); may be nil.
	Engine models.Engine
	// Embed computes node embeddings with Engine (cached in Cache by content
	// hash under ModelID) and fuses vector similarity into the search.
	Embed   bool
	Cache   retrieval.Cache
	ModelID string
}

// Gather implements ContextSource.
func (rc RetrievalContext) Gather(ctx context.Context, request string, budget int) (string, error) {
	if rc.Graph == nil {
		return "", nil
	}
	g := rc.Graph()
	if g == nil {
		return "", nil
	}
	ix := retrieval.New(g)
	opts := retrieval.ContextOptions{Budget: budget}
	if rc.Engine != nil {
		opts.Count = func(s string) int { return models.CountTokens(rc.Engine, s) }
		if rc.Embed {
			if _, err := ix.Embed(ctx, rc.Engine, retrieval.EmbedOptions{ModelID: rc.ModelID, Cache: rc.Cache}); err != nil {
				if ctx.Err() != nil {
					return "", fmt.Errorf("gather context: %w", err)
				}
				slog.Warn("embeddings unavailable; lexical search only", "err", err)
			} else {
				opts.Embedder = rc.Engine
			}
		}
	}
	c, err := ix.Context(ctx, request, opts)
	if err != nil {
		return "", fmt.Errorf("gather context: %w", err)
	}
	return strings.TrimRight(c.Text(), "\n"), nil
}

// stopWords are request words too common to select code by.
var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "that": true, "this": true, "why": true,
	"does": true, "not": true, "fix": true, "add": true, "make": true, "should": true, "when": true,
	"from": true, "into": true, "what": true, "how": true, "are": true, "was": true, "its": true,
}

// relevantLessons picks up to n lesson cards sharing words with request,
// best first, as few-shot examples.
func relevantLessons(lessons []memory.Lesson, request string, n int) []memory.Lesson {
	want := map[string]bool{}
	for _, w := range models.Words(request) {
		if len(w) > 2 && !stopWords[w] {
			want[w] = true
		}
	}
	type scored struct {
		l memory.Lesson
		s int
	}
	var hits []scored
	for _, l := range lessons {
		s := 0
		for _, w := range models.Words(l.Task + " " + l.Failure + " " + l.Fix + " " + strings.Join(l.Tags, " ")) {
			if want[w] {
				s++
			}
		}
		if s > 0 {
			hits = append(hits, scored{l, s})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].s > hits[j].s })
	var out []memory.Lesson
	for i := 0; i < len(hits) && i < n; i++ {
		out = append(out, hits[i].l)
	}
	return out
}
