// Command codeloom is an offline AI coding workbench: a code graph of a
// project, a local LLM that proposes patches, and a runtime that verifies them.
//
// With no arguments (or "open [DIR]") it opens the desktop app; otherwise it
// runs one of the headless subcommands in package cli.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"codeloom/assets"
	"codeloom/cli"
	"codeloom/models"
	"codeloom/models/llamacpp"
	"codeloom/ui"
)

// appTOML is the app's metadata; its version is part of `codeloom --version`.
//
//go:embed FyneApp.toml
var appTOML []byte

func main() {
	llamacpp.MaybeProbe() // a model probe child (see llamacpp.Options.Probe) exits here
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, AppTOML: appTOML}
	args := os.Args[1:]
	if len(args) > 0 && cli.IsCommand(args[0]) {
		os.Exit(cli.Run(ctx, env, args))
	}
	os.Exit(runGUI(ctx, args))
}

// runGUI opens the desktop app: "codeloom", "codeloom DIR", "codeloom open
// [DIR]". Without a folder it opens the bundled sample project.
func runGUI(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "open" {
		args = args[1:]
	}
	if len(args) > 1 || (len(args) == 1 && strings.HasPrefix(args[0], "-")) {
		cli.Usage(os.Stderr)
		return cli.ExitUsage
	}
	dir := ""
	if len(args) == 1 {
		dir = args[0]
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			fmt.Fprintf(os.Stderr, "codeloom: %s is not a folder\n", dir)
			return cli.ExitUsage
		}
	} else {
		dest, err := assets.DefaultSampleDir()
		if err == nil {
			dir, err = assets.ExtractSample(dest)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "codeloom: sample project unavailable: %v\n", err)
			dir = ""
		}
	}
	opts := ui.RunOptions{Dir: dir, LoadModel: loadModel}
	// CODELOOM_SCRIPT: a scripted model (canned answers, as `codeloom task
	// --script`) for demos and end-to-end tests without a GGUF model.
	if path := os.Getenv("CODELOOM_SCRIPT"); path != "" {
		answers, err := cli.ReadScript(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "codeloom: CODELOOM_SCRIPT: %v\n", err)
			return cli.ExitUsage
		}
		opts.Engine, opts.EngineName = models.NewScripted(answers...), "scripted ("+filepath.Base(path)+")"
	}
	if err := ui.Run(ctx, opts); err != nil {
		fmt.Fprintf(os.Stderr, "codeloom: %v\n", err)
		return cli.ExitFailure
	}
	return cli.ExitOK
}

// loadModel loads a GGUF file in-process with llama.cpp for the desktop app.
func loadModel(ctx context.Context, path string, progress func(float32)) (models.Engine, func(), error) {
	// Probe: a model file that makes llama.cpp abort kills a child, not the app.
	e, err := llamacpp.Load(ctx, path, llamacpp.Options{Progress: progress, Probe: true})
	if err != nil {
		return nil, nil, err
	}
	return e, func() { e.Close() }, nil
}
