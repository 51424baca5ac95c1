// Command codeloom is an offline AI coding workbench: a code graph of a
// project, a local LLM that proposes patches, and a runtime that verifies them.
//
// With no arguments (or "open [DIR]") it opens the desktop app; otherwise it
// runs one of the headless subcommands in package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"codeloom/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	args := os.Args[1:]
	if len(args) > 0 && cli.IsCommand(args[0]) {
		os.Exit(cli.Run(ctx, env, args))
	}
	// The desktop app is wired in by the GUI work; until then show usage.
	cli.Usage(os.Stderr)
	os.Exit(cli.ExitUsage)
}
