package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"codeloom/app/codegraph"
)

// runIndex implements `codeloom index DIR [--json|--dot] [--no-cache]`.
func runIndex(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("index", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "write the graph as node-link JSON to stdout")
	asDot := fs.Bool("dot", false, "write the graph as Graphviz DOT to stdout")
	noCache := fs.Bool("no-cache", false, "ignore and do not write the graph cache in DIR/.codeloom")
	workers := fs.Int("workers", 0, "parallel parsers (default: number of CPUs)")
	verbose := fs.Bool("v", false, "also list a sample of unresolved references")
	maxSize := fs.Int64("max-size", codegraph.DefaultMaxFileSize, "skip files larger than this many bytes")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: codeloom index DIR [--json|--dot] [--no-cache] [--workers N] [--max-size BYTES]")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.Stderr, "codeloom index: need exactly one folder (codeloom index DIR)")
		return ExitUsage
	}
	if *asJSON && *asDot {
		fmt.Fprintln(env.Stderr, "codeloom index: choose one of --json and --dot")
		return ExitUsage
	}
	dir := fs.Arg(0)
	if code := checkDir(env, "index", dir); code != ExitOK {
		return code
	}
	p, err := openInterruptible(ctx, dir, codegraph.Options{NoCache: *noCache, Workers: *workers, MaxFileSize: *maxSize, ReleaseAfterIndex: true})
	if ctx.Err() != nil {
		fmt.Fprintln(env.Stderr, "codeloom index: interrupted")
		return ExitExecCanceled
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom index: %v\n", err)
		return ExitFailure
	}
	defer p.Close()
	g := p.Graph()
	switch {
	case *asJSON:
		err = codegraph.WriteJSON(env.Stdout, g)
	case *asDot:
		err = codegraph.WriteDOT(env.Stdout, g)
	default:
		writeIndexSummary(env.Stdout, p.Report())
		if *verbose {
			for _, u := range g.Stats().UnresolvedSample {
				fmt.Fprintf(env.Stdout, "  unresolved %s %s at %s:%d\n", u.Kind, u.Name, quoteName(u.Path), u.Line)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom index: write: %v\n", err)
		return ExitFailure
	}
	return ExitOK
}

// interruptGrace is how long an interrupted index may take to wind down
// (a parse already running in C finishes its file) before the command
// returns anyway.
const interruptGrace = 2 * time.Second

// openInterruptible indexes dir, returning soon after ctx is cancelled
// (SIGTERM, Ctrl-C) even when the indexer is in the middle of a long file:
// cancellation stops the indexer between files, and the command does not
// wait more than interruptGrace for it.
func openInterruptible(ctx context.Context, dir string, opts codegraph.Options) (*codegraph.Project, error) {
	type res struct {
		p   *codegraph.Project
		err error
	}
	done := make(chan res, 1)
	go func() {
		p, err := codegraph.Open(ctx, dir, opts)
		done <- res{p, err}
	}()
	select {
	case r := <-done:
		return r.p, r.err
	case <-ctx.Done():
	}
	select {
	case r := <-done:
		if r.p != nil {
			r.p.Close()
		}
	case <-time.After(interruptGrace):
	}
	return nil, ctx.Err()
}

// checkDir validates a project folder argument.
func checkDir(env Env, cmd, dir string) int {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(env.Stderr, "codeloom %s: folder %s does not exist\n", cmd, dir)
		} else {
			fmt.Fprintf(env.Stderr, "codeloom %s: %v\n", cmd, err)
		}
		return ExitUsage
	}
	if !st.IsDir() {
		fmt.Fprintf(env.Stderr, "codeloom %s: %s is not a folder\n", cmd, dir)
		return ExitUsage
	}
	return ExitOK
}

// writeIndexSummary prints the human-readable index report.
func writeIndexSummary(w io.Writer, r codegraph.Report) {
	s := r.Stats
	from := ""
	if r.FromSnapshot {
		from = "; unchanged: loaded the persisted graph"
	}
	fmt.Fprintf(w, "indexed %s in %s: %d files, %d lines, %.1f MB (%d parsed, %d from cache%s)\n",
		quoteName(r.Root), r.Duration.Round(time.Millisecond), s.Files, s.Lines, float64(s.Bytes)/1e6, r.Parsed, r.Cached, from)
	fmt.Fprintf(w, "files by language:%s\n", fmtCounts(s.FilesByLanguage))
	nk := map[string]int{}
	for k, v := range s.NodesByKind {
		nk[string(k)] = v
	}
	ek := map[string]int{}
	for k, v := range s.EdgesByKind {
		ek[string(k)] = v
	}
	fmt.Fprintf(w, "nodes: %d by kind:%s\n", s.Nodes, fmtCounts(nk))
	fmt.Fprintf(w, "edges: %d by kind:%s\n", s.Edges, fmtCounts(ek))
	fmt.Fprintf(w, "references: %d resolved, %d external, %d unresolved (by kind:%s)\n",
		s.Resolved, s.External, s.Unresolved, fmtCounts(s.UnresolvedByKind))
	fmt.Fprintf(w, "problems: %d files skipped, %d indexed with caveats\n", r.Skipped, len(r.Problems)-r.Skipped)
	for _, pr := range r.Problems {
		tag := "indexed"
		if pr.Skipped {
			tag = "skipped"
		}
		fmt.Fprintf(w, "  %s %s: %s\n", tag, quoteName(pr.Path), pr.Reason)
	}
	if r.CacheErr != "" {
		fmt.Fprintf(w, "cache: %s\n", r.CacheErr)
	}
}

// fmtCounts formats a count map as " a=1 b=2", largest first.
func fmtCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(" " + k + "=" + strconv.Itoa(m[k]))
	}
	if b.Len() == 0 {
		return " none"
	}
	return b.String()
}

// reorderArgs moves flags (and their values) before positional arguments, so
// `cmd DIR --json` parses like `cmd --json DIR`. "--" ends flag handling.
func reorderArgs(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	return append(append(flags, "--"), pos...)
}

// writeJSONValue writes v as indented JSON.
func writeJSONValue(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
