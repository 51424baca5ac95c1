package retrieval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"codeloom/app/codegraph"
	"codeloom/models"
)

// ContextOptions controls context assembly.
type ContextOptions struct {
	Budget   int              // tokens of code (default 2048)
	Count    func(string) int // token counter (default models.EstimateTokens)
	Seeds    int              // top matches to build around (default 3)
	Embedder Embedder         // optional: fuse vector similarity into the search
}

// Piece is one node's code in an assembled context.
type Piece struct {
	Node   *codegraph.Node `json:"node"`
	Code   string          `json:"code"`
	Reason string          `json:"reason"` // "match", "needed by X", "calls X", "related"
	Tokens int             `json:"tokens"` // of Text(), header included
}

// Context is the code assembled for a query.
type Context struct {
	Query   string   `json:"query"`
	Pieces  []Piece  `json:"pieces"` // dependency order: what a piece needs comes before it
	Tokens  int      `json:"tokens"`
	Budget  int      `json:"budget"`
	Omitted []string `json:"omitted,omitempty"` // qualified names left out for the budget
	Matches []Result `json:"matches"`
	// Env maps the environment variables the chosen code reads to whether
	// the project's .env sets them. Values are deliberately not kept: they
	// may be secrets, and a context may be sent to a remote endpoint.
	Env map[string]bool `json:"env,omitempty"`
}

// Text renders the context for a prompt: one fenced block per piece, headed
// by its place in the project.
func (c *Context) Text() string {
	var b strings.Builder
	for _, p := range c.Pieces {
		b.WriteString(p.Text())
	}
	b.WriteString(c.envText())
	return b.String()
}

// envText is the line naming the environment variables (no values).
func (c *Context) envText() string {
	if len(c.Env) == 0 {
		return ""
	}
	names := make([]string, 0, len(c.Env))
	for n, set := range c.Env {
		if set {
			n += " (set in .env)"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return "Environment variables read by this code: " + strings.Join(names, ", ") + "\n\n"
}

// Text renders one piece: a header with its place in the project, then its
// code in a fenced block. Tokens counts exactly this text.
func (p Piece) Text() string {
	n := p.Node
	return fmt.Sprintf("### %s:%d-%d %s %s (%s)\n```%s\n%s\n```\n\n", n.Path, n.StartLine, n.EndLine, n.Kind, n.QualName, p.Reason, strings.ToLower(n.Language), strings.TrimRight(p.Code, "\n"))
}

// Limits of context assembly: dependencies considered per seed (the most
// important first), and the smallest budget left worth filling.
const (
	maxDepsPerSeed = 64
	minPieceTokens = 16
)

// nodeCode returns a node's source, reading each file once per assembly.
func nodeCode(g *codegraph.Graph, files map[string][]byte, n *codegraph.Node) ([]byte, bool) {
	src, ok := files[n.Path]
	if !ok {
		src, _ = os.ReadFile(filepath.Join(g.Root(), filepath.FromSlash(n.Path)))
		files[n.Path] = src
	}
	if n.StartByte < 0 || n.EndByte > len(src) || n.StartByte >= n.EndByte {
		return nil, false
	}
	return src[n.StartByte:n.EndByte], true
}

var depKinds = []codegraph.EdgeKind{codegraph.EdgeCalls, codegraph.EdgeUses, codegraph.EdgeInherits, codegraph.EdgeImports,
	codegraph.EdgeDispatches, codegraph.EdgeImplements}

// hasCode reports whether a node can be a piece of context.
func hasCode(n *codegraph.Node) bool { return embeddable(n) }

// Context assembles the code for query: the top matches (seeds), then what
// they need (dependency closure, most important first by rank personalised
// on the seeds), then their callers, then further matches — each added
// while it fits the token budget — and orders the result so that
// dependencies come first.
func (ix *Index) Context(ctx context.Context, query string, o ContextOptions) (*Context, error) {
	if o.Budget <= 0 {
		o.Budget = 2048
	}
	if o.Count == nil {
		o.Count = models.EstimateTokens
	}
	if o.Seeds <= 0 {
		o.Seeds = 3
	}
	g := ix.g
	results, err := ix.Search(ctx, query, o.Embedder, 20)
	if err != nil {
		return nil, fmt.Errorf("context: %w", err)
	}
	out := &Context{Query: query, Budget: o.Budget, Matches: results}
	var seeds []*codegraph.Node
	for _, r := range results {
		if len(seeds) < o.Seeds {
			if n := r.Node; hasCode(n) && !containsNode(seeds, n) {
				seeds = append(seeds, n)
			}
		}
	}
	if len(seeds) == 0 {
		return out, nil
	}
	type cand struct {
		n      *codegraph.Node
		reason string
	}
	var cands []cand
	for _, s := range seeds {
		cands = append(cands, cand{s, "match"})
	}
	focus := make([]string, len(seeds))
	for i, s := range seeds {
		focus[i] = s.ID
	}
	rank := map[string]float64{}
	for _, r := range g.Rank(focus) {
		rank[r.Node.ID] = r.Score
	}
	byRank := func(ns []*codegraph.Node) {
		sort.SliceStable(ns, func(a, b int) bool { return rank[ns[a].ID] > rank[ns[b].ID] })
	}
	for _, s := range seeds {
		var deps []*codegraph.Node
		for _, d := range g.Deps(s.ID) {
			if hasCode(d) {
				deps = append(deps, d)
			}
		}
		byRank(deps)
		for _, d := range deps[:min(len(deps), maxDepsPerSeed)] {
			cands = append(cands, cand{d, "needed by " + s.QualName})
		}
	}
	for _, s := range seeds {
		var callers []*codegraph.Node
		for _, e := range g.In(s.ID, codegraph.EdgeCalls, codegraph.EdgeUses, codegraph.EdgeInherits, codegraph.EdgeDispatches) {
			if n, ok := g.Node(e.From); ok {
				if hasCode(n) && !containsNode(callers, n) {
					callers = append(callers, n)
				}
			}
		}
		byRank(callers)
		for _, c := range callers {
			cands = append(cands, cand{c, "uses " + s.QualName})
		}
	}
	for _, r := range results {
		if n := r.Node; hasCode(n) {
			cands = append(cands, cand{n, "related"})
		}
	}

	// the environment the seeds' runnable slices read, counted first
	for _, sd := range seeds {
		if sl, err := g.Slice(sd.ID); err == nil {
			for name, val := range sl.Env {
				if out.Env == nil {
					out.Env = map[string]bool{}
				}
				out.Env[name] = out.Env[name] || val != ""
			}
		}
	}
	if line := out.envText(); line != "" {
		if t := o.Count(line); t < o.Budget/4 {
			out.Tokens = t
		} else {
			out.Env = nil
		}
	}

	chosen := map[string]int{} // node ID → index in out.Pieces
	covered := func(n *codegraph.Node) bool {
		for p := n.Parent; p != ""; {
			if _, ok := chosen[p]; ok {
				return true
			}
			pn, ok := g.Node(p)
			if !ok {
				break
			}
			p = pn.Parent
		}
		return false
	}
	omitted := map[string]bool{}
	files := map[string][]byte{}
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("context: %w", err)
		}
		if o.Budget-out.Tokens < minPieceTokens {
			break
		}
		if _, ok := chosen[c.n.ID]; ok || covered(c.n) {
			continue
		}
		code, ok := nodeCode(g, files, c.n)
		if !ok {
			continue // file changed or unreadable: leave it out
		}
		piece := Piece{Node: c.n, Code: string(code), Reason: c.reason}
		t := o.Count(piece.Text())
		piece.Tokens = t
		if out.Tokens+t > o.Budget {
			if !omitted[c.n.ID] {
				omitted[c.n.ID] = true
				out.Omitted = append(out.Omitted, c.n.QualName)
			}
			continue
		}
		// a class replaces methods of it already chosen
		for id, i := range chosen {
			if n, ok := g.Node(id); ok && isAncestor(g, c.n.ID, n) {
				out.Tokens -= out.Pieces[i].Tokens
				out.Pieces[i].Node = nil
				delete(chosen, id)
			}
		}
		chosen[c.n.ID] = len(out.Pieces)
		out.Pieces = append(out.Pieces, piece)
		out.Tokens += t
		delete(omitted, c.n.ID)
	}
	kept := out.Pieces[:0]
	for _, p := range out.Pieces {
		if p.Node != nil {
			kept = append(kept, p)
		}
	}
	out.Pieces = dependencyOrder(g, kept)
	var still []string
	for _, q := range out.Omitted {
		for id := range omitted {
			if n, ok := g.Node(id); ok && n.QualName == q {
				still = append(still, q)
				break
			}
		}
	}
	out.Omitted = still
	return out, nil
}

func containsNode(ns []*codegraph.Node, n *codegraph.Node) bool {
	for _, x := range ns {
		if x.ID == n.ID {
			return true
		}
	}
	return false
}

// isAncestor reports whether id contains n.
func isAncestor(g *codegraph.Graph, id string, n *codegraph.Node) bool {
	for p := n.Parent; p != ""; {
		if p == id {
			return true
		}
		pn, ok := g.Node(p)
		if !ok {
			return false
		}
		p = pn.Parent
	}
	return false
}

// dependencyOrder sorts pieces so that a piece comes after the pieces it
// needs (calls, uses, inherits, imports from it or anything inside it);
// ties and cycles are broken by path and line.
func dependencyOrder(g *codegraph.Graph, pieces []Piece) []Piece {
	idx := map[string]int{}
	for i, p := range pieces {
		idx[p.Node.ID] = i
	}
	// owner maps a node inside a piece to that piece
	owner := func(id string) (int, bool) {
		for id != "" {
			if i, ok := idx[id]; ok {
				return i, true
			}
			n, ok := g.Node(id)
			if !ok {
				return 0, false
			}
			id = n.Parent
		}
		return 0, false
	}
	needs := make([]map[int]bool, len(pieces))
	var walk func(i int, id string)
	walk = func(i int, id string) {
		for _, e := range g.Out(id, depKinds...) {
			if j, ok := owner(e.To); ok && j != i {
				needs[i][j] = true
			}
		}
		for _, c := range g.Children(id) {
			walk(i, c.ID)
		}
	}
	for i, p := range pieces {
		needs[i] = map[int]bool{}
		walk(i, p.Node.ID)
	}
	less := func(a, b int) bool {
		na, nb := pieces[a].Node, pieces[b].Node
		if na.Path != nb.Path {
			return na.Path < nb.Path
		}
		return na.StartLine < nb.StartLine
	}
	done := make([]bool, len(pieces))
	out := make([]Piece, 0, len(pieces))
	for len(out) < len(pieces) {
		best := -1
		for i := range pieces { // ready: all needs done
			if done[i] {
				continue
			}
			ready := true
			for j := range needs[i] {
				if !done[j] {
					ready = false
					break
				}
			}
			if ready && (best < 0 || less(i, best)) {
				best = i
			}
		}
		if best < 0 { // cycle: take the first remaining by position
			for i := range pieces {
				if !done[i] && (best < 0 || less(i, best)) {
					best = i
				}
			}
		}
		done[best] = true
		out = append(out, pieces[best])
	}
	return out
}
