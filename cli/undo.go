package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"codeloom/app/pipeline"
)

// runUndo implements `codeloom undo DIR [--yes] [--force] [--no-commit]`:
// revert the last change CodeLoom landed in DIR that is still in place. The
// previous content comes from the versions recorded before the patch was
// written; when the patch had been committed (task --commit), the restored
// files are committed as a revert (only those files). Asks first unless
// --yes; refuses files edited since the patch landed unless --force.
func runUndo(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("undo", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	yes := fs.Bool("yes", false, "do not ask")
	force := fs.Bool("force", false, "also restore files edited since the change landed (their current content is kept in history)")
	noCommit := fs.Bool("no-commit", false, "when the change was committed, leave the revert uncommitted")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: codeloom undo DIR [--yes] [--force] [--no-commit]")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.Stderr, "codeloom undo: need exactly one folder (codeloom undo DIR)")
		return ExitUsage
	}
	dir := fs.Arg(0)
	if code := checkDir(env, "undo", dir); code != ExitOK {
		return code
	}
	st, ok, code := openHistory(env, "undo", dir)
	if !ok {
		return code
	}
	defer st.Close()
	u, err := pipeline.PlanUndo(dir, st)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom undo: %v\n", err)
		return ExitFailure
	}
	return carryOutUndo(ctx, env, "undo", st, u, "Undo this change?", *yes, pipeline.UndoOptions{Force: *force, NoCommit: *noCommit})
}

// runRollback implements `codeloom rollback DIR TASK|last [--yes] [--force]
// [--no-commit]` and `codeloom rollback DIR --list`: put every file a task
// changed back as it was before the task, in one step.
func runRollback(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("rollback", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	yes := fs.Bool("yes", false, "do not ask")
	force := fs.Bool("force", false, "also restore files edited since the task (their current content is kept in history)")
	noCommit := fs.Bool("no-commit", false, "when the task's patches were committed, leave the revert uncommitted")
	list := fs.Bool("list", false, "list the tasks whose changes are recorded")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: codeloom rollback DIR TASK|last [--yes] [--force] [--no-commit] | rollback DIR --list")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if (*list && fs.NArg() != 1) || (!*list && fs.NArg() != 2) {
		fmt.Fprintln(env.Stderr, "codeloom rollback: need a folder and a task id (codeloom rollback DIR TASK, the id `task` prints as \"session …\"; or --list)")
		return ExitUsage
	}
	dir := fs.Arg(0)
	if code := checkDir(env, "rollback", dir); code != ExitOK {
		return code
	}
	st, ok, code := openHistory(env, "rollback", dir)
	if !ok {
		return code
	}
	defer st.Close()
	if *list {
		all, err := pipeline.LandedChanges(st, "")
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom rollback: %v\n", err)
			return ExitFailure
		}
		seen := map[string]bool{}
		for i := len(all) - 1; i >= 0; i-- {
			l := all[i]
			if seen[l.Session] {
				continue
			}
			seen[l.Session] = true
			state := "landed"
			if l.Undone != "" {
				state = "rolled back"
			}
			fmt.Fprintf(env.Stdout, "%s  %s  %s  %q\n", l.Session, l.Time.Local().Format("2006-01-02 15:04"), state, clipLine(l.Request, 60))
		}
		return ExitOK
	}
	session := fs.Arg(1)
	if session == "last" {
		s, err := pipeline.LastSession(st)
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom rollback: %v\n", err)
			return ExitFailure
		}
		if s == "" {
			fmt.Fprintln(env.Stdout, "nothing to roll back: no task has changes in place")
			return ExitOK
		}
		session = s
	}
	u, err := pipeline.PlanRollback(dir, st, session)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom rollback: %v\n", err)
		return ExitFailure
	}
	title := fmt.Sprintf("Roll back the %d changes task %s made?", u.Pending(), session)
	return carryOutUndo(ctx, env, "rollback", st, u, title, *yes, pipeline.UndoOptions{Force: *force, NoCommit: *noCommit})
}

// carryOutUndo shows a plan, asks, and applies it.
func carryOutUndo(ctx context.Context, env Env, cmd string, st pipeline.ChangeStore, u *pipeline.UndoPlan, title string, yes bool, opts pipeline.UndoOptions) int {
	if u.Pending() == 0 {
		fmt.Fprintf(env.Stdout, "nothing to %s: no recorded change is still in place\n", cmd)
		return ExitOK
	}
	fmt.Fprint(env.Stdout, u.Describe())
	if c := u.Conflicts(); len(c) > 0 && !opts.Force {
		fmt.Fprintf(env.Stderr, "codeloom %s: %s changed since the change landed; nothing was restored (--force restores anyway, keeping the current content in history)\n", cmd, strings.Join(c, ", "))
		return ExitFailure
	}
	if !yes {
		ta := pipeline.NewTerminalApprover(env.Stdin, env.Stdout)
		ok, err := ta.Approve(ctx, pipeline.Question{Kind: pipeline.AskRollback, Title: title})
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom %s: %v\n", cmd, err)
			return ExitFailure
		}
		if !ok {
			fmt.Fprintln(env.Stdout, "nothing changed")
			return ExitOK
		}
	}
	res, err := pipeline.ApplyUndo(ctx, st, u, opts)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom %s: %v\n", cmd, err)
		return ExitFailure
	}
	fmt.Fprintf(env.Stdout, "restored: %s\n", strings.Join(res.Restored, ", "))
	if res.Commit != "" {
		fmt.Fprintf(env.Stdout, "revert commit %.12s\n", res.Commit)
	}
	if res.Note != "" {
		fmt.Fprintf(env.Stdout, "note: %s\n", res.Note)
	}
	return ExitOK
}

// clipLine keeps the first line of s, at most n bytes.
func clipLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
