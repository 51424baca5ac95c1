// Package cli implements CodeLoom's headless subcommands (index, query, exec,
// test, ask, search, task, history, lessons). The GUI lives in package ui;
// main.go decides which one to start.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Exit statuses shared by all subcommands.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // the command ran and failed (e.g. tests failed)
	ExitUsage   = 2 // unusable arguments or a missing folder
)

// Env is what a subcommand gets from the process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// AppTOML is FyneApp.toml, embedded by main, for the version.
	AppTOML []byte
}

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, env Env, args []string) int
}

// commands lists every subcommand; each lives in its own file of this package.
func commands() map[string]command {
	return map[string]command{
		"index":   {"parse a folder into a code graph and print a summary (--json, --dot)", runIndex},
		"query":   {"query the graph: deps|rdeps|path|slice|search|rank ARG", runQuery},
		"exec":    {"run a command with limits and metrics: exec [flags] -- CMD ARGS...", runExec},
		"test":    {"run a project's tests with its own toolchain", runTest},
		"ask":     {"answer a question about a project with a local model", runAsk},
		"search":  {"rank the project's nodes for a query", runSearch},
		"task":    {"plan, patch, verify and debug a change request", runTask},
		"history": {"list what CodeLoom recorded for a project", runHistory},
		"lessons": {"list the lesson cards learned on a project", runLessons},
		"models":  {"list the GGUF models found on this machine (--json)", runModels},

		// Workflows and new projects (app/workflow).
		"workflow": {"validate or run a workflow: workflow DIR validate|run FILE|NAME, workflow DIR list", runWorkflow},
		"new":      {"build a new project from requirements: new DIR \"requirements\" [--yes] [--autonomy]", runNew},

		// Undoing landed changes (cli/undo.go).
		"undo":     {"revert the last change CodeLoom landed: undo DIR [--yes] [--force]", runUndo},
		"rollback": {"roll back every change of a task: rollback DIR TASK|last [--yes] | --list", runRollback},
		"version":  {"print the version (also --version)", runVersion},
		"help":     {"print this help, or a command's flags: help [COMMAND] (also --help, -h)", runHelp},
		"salvage":  {"read what is left of a damaged store: salvage FILE [--json]", runSalvage},
	}
}

// aliases maps the conventional flags to the commands they stand for.
var aliases = map[string]string{"--version": "version", "-version": "version", "-V": "version",
	"--help": "help", "-help": "help", "-h": "help"}

// IsCommand reports whether name is a headless subcommand (or --version,
// --help, -h).
func IsCommand(name string) bool {
	if _, ok := aliases[name]; ok {
		return true
	}
	_, ok := commands()[name]
	return ok
}

// Run runs the subcommand args[0] with args[1:] and returns the exit status.
func Run(ctx context.Context, env Env, args []string) int {
	if len(args) == 0 {
		Usage(env.Stderr)
		return ExitUsage
	}
	name := args[0]
	if a, ok := aliases[name]; ok {
		name = a
	}
	cmd, ok := commands()[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "codeloom: unknown command %q\n", args[0])
		Usage(env.Stderr)
		return ExitUsage
	}
	return cmd.run(ctx, env, args[1:])
}

// Usage prints the list of subcommands.
func Usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: codeloom [open] [DIR]        open the desktop app (the bundled sample project when no DIR)\n")
	b.WriteString("       codeloom COMMAND [flags] ARGS  headless use\n\ncommands:\n")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-9s %s\n", n, cmds[n].summary)
	}
	b.WriteString("\nRun 'codeloom help COMMAND' (or 'codeloom COMMAND --help') for a command's flags;\n")
	b.WriteString("flags take one dash or two (--json, -json). 'codeloom --version' prints the version.\n")
	io.WriteString(w, b.String())
}

// notYet reports a subcommand whose capability has not landed yet.
func notYet(env Env, name string) int {
	fmt.Fprintf(env.Stderr, "codeloom %s: not available in this build yet\n", name)
	return ExitFailure
}

// parseFlags parses a subcommand's args with fs, accepting flags after the
// positional arguments too. ok is false when parsing ended the command:
// -h printed the usage (status 0) or a bad flag was reported (status 2).
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	dw := &dashWriter{w: fs.Output()}
	fs.SetOutput(dw)
	err := fs.Parse(reorderArgs(fs, args))
	dw.flush()
	fs.SetOutput(dw.w)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK, false
		}
		return ExitUsage, false
	}
	return ExitOK, true
}
