package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/app/pipeline"
)

// openHistory opens a project's store for reading; ok=false (after printing
// why) when the project has no CodeLoom data yet, so nothing is created.
func openHistory(env Env, cmd, dir string) (*memory.Store, bool, int) {
	if _, err := os.Stat(filepath.Join(memory.DataDir(dir), memory.FileName)); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(env.Stdout, "no CodeLoom history in %s yet\n", dir)
		return nil, false, ExitOK
	}
	// A reader: beside another process holding the store (the app, a
	// running task) it reads a snapshot; a write (--restore) then says so.
	st, err := memory.OpenProjectReader(dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom %s: %v\n", cmd, err)
		return nil, false, ExitFailure
	}
	return st, true, ExitOK
}

// runHistory implements `codeloom history DIR [--json|--md] [--session ID]
// [--limit N]`: what CodeLoom recorded for a project. Without a format flag
// it lists the sessions and the latest steps; --md and --json export the
// history (of one session with --session, "last" meaning the newest).
func runHistory(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "export as JSON")
	asMD := fs.Bool("md", false, "export as Markdown")
	session := fs.String("session", "", `only this session ("last" = the newest)`)
	limit := fs.Int("limit", 50, "at most this many records of each kind (0 = all)")
	versions := fs.Bool("versions", false, "list the previous file versions kept (IDs for --restore)")
	restore := fs.String("restore", "", "put the kept version with this ID back (asks first unless --yes)")
	yes := fs.Bool("yes", false, "with --restore: do not ask")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: codeloom history DIR [--json|--md] [--session ID|last] [--limit N] | --versions | --restore ID [--yes]")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.Stderr, "codeloom history: need exactly one folder (codeloom history DIR)")
		return ExitUsage
	}
	if *asJSON && *asMD {
		fmt.Fprintln(env.Stderr, "codeloom history: choose one of --json and --md")
		return ExitUsage
	}
	dir := fs.Arg(0)
	if code := checkDir(env, "history", dir); code != ExitOK {
		return code
	}
	st, ok, code := openHistory(env, "history", dir)
	if !ok {
		return code
	}
	defer st.Close()
	if *restore != "" {
		v, err := st.Version(*restore)
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom history: %v\n", err)
			return ExitFailure
		}
		if !*yes {
			ta := pipeline.NewTerminalApprover(env.Stdin, env.Stdout)
			ok, err := ta.Approve(ctx, pipeline.Question{Kind: pipeline.AskApply,
				Title: fmt.Sprintf("Restore %s to version %s (%s)?", v.Path, v.ID, v.Reason)})
			if err != nil {
				fmt.Fprintf(env.Stderr, "codeloom history: not restored: %v\n", err)
				return ExitFailure
			}
			if !ok {
				fmt.Fprintln(env.Stdout, "not restored")
				return ExitFailure
			}
		}
		var keep string
		if pipeline.IsNodeVersion(v) {
			// One function/method/class: find its current place in the graph.
			proj, err := codegraph.Open(ctx, dir, codegraph.Options{Store: st, NoUpdates: true})
			if err != nil {
				fmt.Fprintf(env.Stderr, "codeloom history: %v\n", err)
				return ExitFailure
			}
			defer proj.Close()
			keep, err = pipeline.RestoreNodeVersion(ctx, dir, st, proj.Graph(), *restore)
			if err != nil {
				fmt.Fprintf(env.Stderr, "codeloom history: %v\n", err)
				return ExitFailure
			}
			if _, err := proj.UpdateFiles(ctx, []string{v.Path}); err != nil {
				fmt.Fprintf(env.Stderr, "codeloom history: re-index %s: %v\n", v.Path, err)
			}
		} else if keep, err = pipeline.RestoreVersion(ctx, dir, st, *restore); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom history: %v\n", err)
			return ExitFailure
		}
		fmt.Fprintf(env.Stdout, "restored %s; its previous content is kept as version %s\n", v.Path, keep)
		return ExitOK
	}
	if *versions {
		vs, err := st.Versions("", *limit)
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom history: %v\n", err)
			return ExitFailure
		}
		for _, v := range vs {
			what := v.Path
			if pipeline.IsNodeVersion(v) {
				what += " " + v.NodeName
			}
			fmt.Fprintf(env.Stdout, "%s  %s  %-40s %7d bytes  %s\n", v.ID, v.Time.Local().Format("01-02 15:04:05"), what, len(v.Content), v.Reason)
		}
		return ExitOK
	}
	sessions, err := pipeline.Sessions(st)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom history: %v\n", err)
		return ExitFailure
	}
	if *session == "last" {
		if len(sessions) == 0 {
			fmt.Fprintln(env.Stderr, "codeloom history: no pipeline session recorded yet")
			return ExitFailure
		}
		*session = sessions[0]
	}
	if *asJSON || *asMD || *session != "" {
		log, err := pipeline.ExportSession(st, *session, *limit)
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom history: %v\n", err)
			return ExitFailure
		}
		if *asJSON {
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(log); err != nil {
				fmt.Fprintf(env.Stderr, "codeloom history: %v\n", err)
				return ExitFailure
			}
			return ExitOK
		}
		fmt.Fprint(env.Stdout, log.Markdown())
		return ExitOK
	}

	// Human summary: sessions with their cycles, then the latest activity and runs.
	acts, err := st.Activities(0)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom history: %v\n", err)
		return ExitFailure
	}
	fmt.Fprintf(env.Stdout, "%d pipeline session(s)\n", len(sessions))
	shown := 0
	for _, s := range sessions {
		if *limit > 0 && shown >= *limit {
			break
		}
		shown++
		var req, result string
		var when time.Time
		for _, a := range acts {
			if pipeline.SessionOf(a) != s {
				continue
			}
			detail := strings.TrimPrefix(a.Detail, "session="+s+"; ")
			switch a.Action {
			case "session":
				req = strings.TrimPrefix(detail, "request=")
				when = a.Time
			case "cycle":
				if result == "" { // newest first: the last cycle
					result = a.Outcome + " " + detail
				}
			}
		}
		fmt.Fprintf(env.Stdout, "  %s  %s  %q\n      → %s\n", s, when.Local().Format("2006-01-02 15:04"), clipHistory(req, 80), clipHistory(result, 100))
	}
	fmt.Fprintln(env.Stdout, "\nlatest steps:")
	for i, a := range acts {
		if *limit > 0 && i >= *limit {
			break
		}
		detail := a.Detail
		if s := pipeline.SessionOf(a); s != "" {
			detail = strings.TrimPrefix(detail, "session="+s+"; ")
		}
		fmt.Fprintf(env.Stdout, "  %s  %-9s %-12s %-8s %8s  %s\n", a.Time.Local().Format("01-02 15:04:05"), a.Module, a.Action, a.Outcome,
			a.Duration.Round(time.Millisecond), clipHistory(detail, 70))
	}
	runs, err := st.Runs(*limit)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom history: %v\n", err)
		return ExitFailure
	}
	if len(runs) > 0 {
		fmt.Fprintln(env.Stdout, "\nlatest runs:")
		for _, r := range runs {
			fmt.Fprintf(env.Stdout, "  %s  %-12s exit %-3d %7s wall %7s cpu %6.1f MB  %s\n", r.Start.Local().Format("01-02 15:04:05"), r.Origin, r.ExitCode,
				r.Wall.Round(time.Millisecond), (r.CPUUser + r.CPUSys).Round(time.Millisecond), float64(r.PeakRSS)/(1<<20), clipHistory(strings.Join(r.Command, " "), 60))
		}
	}
	return ExitOK
}

// clipHistory shortens s to one line of at most n characters.
func clipHistory(s string, n int) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
