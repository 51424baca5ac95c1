package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"codeloom/app/codegraph"
)

const queryUsage = `usage: codeloom query DIR QUERY ARG [ARG2] [--json] [--limit N] [--no-cache]
queries:
  deps NODE         everything NODE needs, transitively
  rdeps NODE        everything that uses NODE, transitively
  path FROM TO      shortest chain of edges from FROM to TO
  slice NODE        runnable slice: NODE's code plus what it needs, with .env names
  search TEXT       fuzzy name search
  rank [NODE...]    importance ranking (PageRank), personalised to the NODEs given
  neighbors NODE    direct edges in and out of NODE
NODE is a node ID, a qualified name (pkg.mod.Class.method), a file path,
path:line, or a name that is unique in the project.`

// runQuery implements `codeloom query DIR deps|rdeps|path|slice|search|rank ARG [ARG2] [--json]`.
func runQuery(ctx context.Context, env Env, args []string) (code int) {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	limit := fs.Int("limit", 20, "maximum results for search and rank (0 = all)")
	noCache := fs.Bool("no-cache", false, "ignore and do not write the graph cache")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, queryUsage)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() < 2 {
		fmt.Fprintln(env.Stderr, "codeloom query: need a folder and a query (codeloom query DIR deps|rdeps|path|slice|search|rank|neighbors ARG)")
		return ExitUsage
	}
	dir, q, rest := fs.Arg(0), fs.Arg(1), fs.Args()[2:]
	want := map[string]int{"deps": 1, "rdeps": 1, "slice": 1, "search": 1, "path": 2, "neighbors": 1, "rank": -1}
	n, ok := want[q]
	if !ok {
		fmt.Fprintf(env.Stderr, "codeloom query: unknown query %q (want deps, rdeps, path, slice, search, rank or neighbors)\n", q)
		return ExitUsage
	}
	if n >= 0 && len(rest) != n {
		if q == "search" && len(rest) > 1 {
			rest = []string{strings.Join(rest, " ")}
		} else {
			fmt.Fprintf(env.Stderr, "codeloom query %s: needs %d argument(s), got %d\n", q, n, len(rest))
			return ExitUsage
		}
	}
	if code := checkDir(env, "query", dir); code != ExitOK {
		return code
	}
	stopProfile := startQueryProfile(env.Stderr)
	defer stopProfile()
	// Answers can be 100,000 lines: one write per line cost more than the
	// query on large projects.
	bw := bufio.NewWriterSize(env.Stdout, 64<<10)
	stderr := env.Stderr
	defer func() {
		if err := bw.Flush(); err != nil && code == ExitOK {
			fmt.Fprintf(stderr, "codeloom query: write: %v\n", err)
			code = ExitFailure
		}
	}()
	env.Stdout = bw
	if !*noCache {
		if code, ok := queryFromReader(ctx, env, dir, q, rest, *asJSON, *limit); ok {
			return code
		}
	}
	p, err := codegraph.Open(ctx, dir, codegraph.Options{NoCache: *noCache, NoUpdates: true})
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom query: %v\n", err)
		return ExitFailure
	}
	defer p.Close()
	g := p.Graph()
	node := func(arg string) (*codegraph.Node, bool) {
		nd, err := codegraph.Resolve(g, arg)
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom query %s: %v\n", q, err)
			return nil, false
		}
		return nd, true
	}
	out := env.Stdout
	switch q {
	case "deps", "rdeps":
		nd, ok := node(rest[0])
		if !ok {
			return ExitUsage
		}
		var ns []*codegraph.Node
		if q == "deps" {
			ns = g.Deps(nd.ID)
		} else {
			ns = g.RDeps(nd.ID)
		}
		if *asJSON {
			return jsonOut(env, map[string]any{"target": nd, "nodes": nonNilNodes(ns)})
		}
		for _, x := range ns {
			writeNodeLine(out, x, "")
		}
	case "neighbors":
		nd, ok := node(rest[0])
		if !ok {
			return ExitUsage
		}
		outE, inE := g.Out(nd.ID), g.In(nd.ID)
		if *asJSON {
			return jsonOut(env, map[string]any{"target": nd, "out": nonNilEdges(outE), "in": nonNilEdges(inE)})
		}
		for _, e := range outE {
			writeEdgeLine(out, g.Node, e)
		}
		for _, e := range inE {
			writeEdgeLine(out, g.Node, e)
		}
	case "path":
		from, ok1 := node(rest[0])
		if !ok1 {
			return ExitUsage
		}
		to, ok2 := node(rest[1])
		if !ok2 {
			return ExitUsage
		}
		es := g.Path(from.ID, to.ID)
		if *asJSON {
			return jsonOut(env, map[string]any{"from": from, "to": to, "edges": nonNilEdges(es)})
		}
		if len(es) == 0 {
			fmt.Fprintf(env.Stderr, "codeloom query path: no path from %s to %s\n", from.QualName, to.QualName)
			return ExitFailure
		}
		for _, e := range es {
			writeEdgeLine(out, g.Node, e)
		}
	case "slice":
		nd, ok := node(rest[0])
		if !ok {
			return ExitUsage
		}
		s, err := g.Slice(nd.ID)
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom query slice: %v\n", err)
			return ExitFailure
		}
		if *asJSON {
			return jsonOut(env, s)
		}
		io.WriteString(out, s.Code)
		if len(s.Env) > 0 {
			names := make([]string, 0, len(s.Env))
			for k := range s.Env {
				names = append(names, k)
			}
			sort.Strings(names)
			comment := "#"
			if nd.Language != "python" {
				comment = "//"
			}
			fmt.Fprintf(out, "%s environment read (values from .env):\n", comment)
			for _, k := range names {
				fmt.Fprintf(out, "%s   %s=%s\n", comment, k, s.Env[k])
			}
		}
	case "search":
		return writeScored(env, g.Search(rest[0], *limit), *asJSON, 0)
	case "rank":
		var focus []string
		for _, a := range rest {
			nd, ok := node(a)
			if !ok {
				return ExitUsage
			}
			focus = append(focus, nd.ID)
		}
		var rs []codegraph.Ranked
		if len(focus) == 0 {
			rs = p.GlobalRank() // persisted with the graph: not recomputed
		} else {
			rs = g.Rank(focus)
		}
		if *limit > 0 && len(rs) > *limit {
			rs = rs[:*limit]
		}
		ms := make([]codegraph.Match, len(rs))
		for i, r := range rs {
			ms[i] = codegraph.Match(r)
		}
		return writeScored(env, ms, *asJSON, 5)
	}
	return ExitOK
}

// writeScored prints scored nodes (search hits or a ranking), as JSON or as
// lines with the score rounded to prec decimals.
func writeScored(env Env, ms []codegraph.Match, asJSON bool, prec int) int {
	if asJSON {
		type hit struct {
			Score float64         `json:"score"`
			Node  *codegraph.Node `json:"node"`
		}
		hs := make([]hit, 0, len(ms))
		for _, m := range ms {
			hs = append(hs, hit{m.Score, m.Node})
		}
		return jsonOut(env, hs)
	}
	for _, m := range ms {
		writeNodeLine(env.Stdout, m.Node, strconv.FormatFloat(m.Score, 'f', prec, 64))
	}
	return ExitOK
}

// jsonOut writes v as indented JSON to stdout and returns the exit code.
func jsonOut(env Env, v any) int {
	if err := writeJSONValue(env.Stdout, v); err != nil {
		fmt.Fprintf(env.Stderr, "codeloom query: write: %v\n", err)
		return ExitFailure
	}
	return ExitOK
}

// nonNilNodes makes an empty result encode as [] rather than null.
func nonNilNodes(ns []*codegraph.Node) []*codegraph.Node {
	if ns == nil {
		return []*codegraph.Node{}
	}
	return ns
}

// nonNilEdges makes an empty result encode as [] rather than null.
func nonNilEdges(es []codegraph.Edge) []codegraph.Edge {
	if es == nil {
		return []codegraph.Edge{}
	}
	return es
}

// writeNodeLine prints "[score] kind qualname path:start-end id".
func writeNodeLine(w io.Writer, n *codegraph.Node, score string) {
	if score != "" {
		fmt.Fprintf(w, "%s\t", score)
	}
	loc := quoteName(n.Path)
	if n.Path != "" && n.Kind != codegraph.KindFile {
		loc = fmt.Sprintf("%s:%d-%d", quoteName(n.Path), n.StartLine, n.EndLine)
	}
	fmt.Fprintf(w, "%-8s %s\t%s\t%s\n", n.Kind, quoteName(n.QualName), loc, quoteName(n.ID))
}

// writeEdgeLine prints "from -kind-> to (path:line)".
func writeEdgeLine(w io.Writer, node func(string) (*codegraph.Node, bool), e codegraph.Edge) {
	name := func(id string) string {
		if n, ok := node(id); ok {
			return quoteName(n.QualName)
		}
		return quoteName(id)
	}
	loc := ""
	if n, ok := node(e.From); ok && e.Line > 0 {
		loc = fmt.Sprintf("\t(%s:%d)", quoteName(n.Path), e.Line)
	}
	fmt.Fprintf(w, "%s -%s-> %s%s\n", name(e.From), e.Kind, name(e.To), loc)
}
