// Command codeloom-cli runs CodeLoom's headless commands (index, query,
// run, task, …: `codeloom-cli help`) without the desktop app's libraries.
// The app binary, codeloom, runs the same commands, but every start of it
// loads GTK, X11 and OpenGL and initialises the GUI toolkit and the Graphviz
// layout engine (≈ 63 ms of CPU and 55 MB before a command begins; this
// binary: ≈ 5 ms and 17 MB, BENCHMARKS.md "ninth round"), and it cannot
// start where those libraries are not installed (a server, a container, CI).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"codeloom/cli"
	"codeloom/models/llamacpp"
)

func main() {
	llamacpp.MaybeProbe() // a model probe child (see llamacpp.Options.Probe) exits here
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run runs one headless command; anything else (no command, a folder, open)
// is the desktop app's, which this binary does not have.
func run(ctx context.Context, env cli.Env, args []string) int {
	if len(args) == 0 || !cli.IsCommand(args[0]) {
		what := "no command"
		if len(args) > 0 {
			what = fmt.Sprintf("%q is not a command", args[0])
		}
		fmt.Fprintf(env.Stderr, "codeloom-cli: %s; the desktop app is codeloom (codeloom open [DIR])\n\n", what)
		cli.Usage(env.Stderr)
		return cli.ExitUsage
	}
	return cli.Run(ctx, env, args)
}
