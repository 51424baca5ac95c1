package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/models"
)

// ContextSource gathers the code a model needs for a request, within a
// token budget. app/retrieval provides the full implementation (embeddings +
// lexical + graph closure); GraphContext is the graph-only one.
type ContextSource interface {
	Gather(ctx context.Context, request string, budgetTokens int) (string, error)
}

// GraphContext gathers context from a code graph alone: nodes whose names,
// paths and docstrings share words with the request, widened into their
// runnable slices (the code plus what it needs, dependencies first).
type GraphContext struct {
	Graph func() *codegraph.Graph
	// Max is how many matching nodes are widened (5 when 0).
	Max int
}

// Gather implements ContextSource.
func (gc GraphContext) Gather(ctx context.Context, request string, budget int) (string, error) {
	if gc.Graph == nil {
		return "", nil
	}
	g := gc.Graph()
	if g == nil {
		return "", nil
	}
	maxN := gc.Max
	if maxN <= 0 {
		maxN = 5
	}
	want := map[string]bool{}
	for _, w := range models.Words(request) {
		if len(w) > 2 && !stopWords[w] {
			want[w] = true
		}
	}
	type scored struct {
		n     *codegraph.Node
		score float64
	}
	var hits []scored
	for _, n := range g.Nodes() {
		if n.Kind == codegraph.KindPackage || n.Kind == codegraph.KindFile {
			continue
		}
		s := 0.0
		for _, w := range models.Words(n.Name) {
			if want[w] {
				s += 3
			}
		}
		for _, w := range models.Words(n.Path + " " + n.Doc) {
			if want[w] {
				s++
			}
		}
		if s > 0 {
			hits = append(hits, scored{n, s})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].n.QualName < hits[j].n.QualName
	})
	if len(hits) > maxN {
		hits = hits[:maxN]
	}
	limit := budget * 4
	var b strings.Builder
	seen := map[string]bool{}
	for _, h := range hits {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("gather context: %w", err)
		}
		sl, err := g.Slice(h.n.ID)
		if err != nil {
			continue
		}
		for _, n := range sl.Nodes {
			if seen[n.ID] || n.Kind == codegraph.KindFile || n.Kind == codegraph.KindPackage {
				continue
			}
			if n.Parent != "" && seen[n.Parent] {
				seen[n.ID] = true
				continue // already inside its class
			}
			code, err := g.Code(n.ID)
			if err != nil {
				continue
			}
			piece := fmt.Sprintf("# %s (%s, lines %d-%d)\n%s\n\n", n.QualName, n.Path, n.StartLine, n.EndLine, code)
			if limit > 0 && b.Len()+len(piece) > limit {
				continue
			}
			seen[n.ID] = true
			b.WriteString(piece)
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
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
