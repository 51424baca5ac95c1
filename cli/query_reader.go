package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"codeloom/app/codegraph"
)

// readerQueries are the queries answered from the persisted graph in place
// (codegraph.Reader) when it is current, without loading the whole graph.
var readerQueries = map[string]bool{"deps": true, "rdeps": true, "neighbors": true, "search": true, "rank": true}

// queryFromReader answers q from the persisted graph when it is current.
// ok is false when it cannot (no persisted graph, stale, damaged, or a
// question that needs the whole graph): the caller then opens the project,
// which rebuilds and reports as before. Nothing is written before the whole
// answer is known, so falling back never duplicates output.
func queryFromReader(ctx context.Context, env Env, dir, q string, rest []string, asJSON bool, limit int) (code int, ok bool) {
	if !readerQueries[q] || (q == "rank" && len(rest) > 0) {
		return 0, false
	}
	r, err := codegraph.OpenReader(ctx, dir, codegraph.Options{})
	if err != nil || r == nil {
		if err != nil {
			slog.Debug("query: persisted graph not used", "err", err)
		}
		return 0, false
	}
	defer r.Close()
	fallback := func(err error) bool {
		return errors.Is(err, codegraph.ErrNeedsGraph) || errors.Is(err, codegraph.ErrSnapshotUnreadable)
	}
	out := env.Stdout
	switch q {
	case "search":
		ms, err := r.Search(rest[0], limit)
		if err != nil {
			return 0, false
		}
		return writeScored(env, ms, asJSON, 0), true
	case "rank":
		rs, err := r.GlobalRank(limit)
		if err != nil {
			return 0, false
		}
		ms := make([]codegraph.Match, len(rs))
		for i, x := range rs {
			ms[i] = codegraph.Match(x)
		}
		return writeScored(env, ms, asJSON, 5), true
	}
	nd, err := r.Resolve(rest[0])
	if fallback(err) {
		return 0, false
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom query %s: %v\n", q, err)
		return ExitUsage, true
	}
	switch q {
	case "deps", "rdeps":
		var ns []*codegraph.Node
		if q == "deps" {
			ns, err = r.Deps(nd.ID)
		} else {
			ns, err = r.RDeps(nd.ID)
		}
		if err != nil {
			return 0, false
		}
		if asJSON {
			return jsonOut(env, map[string]any{"target": nd, "nodes": nonNilNodes(ns)}), true
		}
		for _, x := range ns {
			writeNodeLine(out, x, "")
		}
	case "neighbors":
		outE, err1 := r.Out(nd.ID)
		inE, err2 := r.In(nd.ID)
		if err1 != nil || err2 != nil {
			return 0, false
		}
		if asJSON {
			return jsonOut(env, map[string]any{"target": nd, "out": nonNilEdges(outE), "in": nonNilEdges(inE)}), true
		}
		for _, e := range append(outE, inE...) {
			writeEdgeLine(out, r.Node, e)
		}
	}
	return ExitOK, true
}
