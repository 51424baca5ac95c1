package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/app/pipeline"
	"codeloom/app/workflow"
	"codeloom/models"
	"codeloom/runtime"
)

// runNew implements `codeloom new DIR "requirements" [--yes] [--max-fix N]
// [--model PATH | --endpoint URL | --script FILE] [--autonomy [--cycles N]
// [--budget D]] [--json]`: the built-in new-project workflow. The architect
// analyses the requirements, designs the files (with an entry point) and
// plans; the coder writes the files; the tester writes a test file; the
// tests run in an isolated workspace (after a "Run …?" question) and the
// debugger fixes failures up to --max-fix times; then, after "Write the new
// project … to DIR?", the verified project is written to DIR, which must not
// exist or be empty. The summary lists the files, the test results, the
// debug log and the plan; the history goes into DIR/.codeloom.
//
// With --autonomy the project's autonomy setting is switched on (saved in
// DIR/.codeloom/autonomy.yaml) and, after the project is written, the model
// proposes the next improvement; each cycle asks "Start the next cycle: …?"
// first, runs through the pipeline (plan, patch, verify), and a cycle that
// does not verify is rolled back. --cycles and --budget bound it; Ctrl-C
// stops it, leaving the last verified state.
//
// A --script file holds the model's answers in order (separated as for
// `codeloom task`): analysis, file structure (with a line "ENTRY: path"),
// plan, the coder's files ("FILE: path" + fenced block), the tester's file,
// then one answer per debugger attempt, then (with --autonomy) for each
// cycle a one-line proposal followed by that cycle's pipeline answers.
//
// Exit status: 0 when the project was written with passing tests (and the
// autonomy run, if any, ended without error), 1 otherwise, 2 for bad usage.
func runNew(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	yes := fs.Bool("yes", false, "answer yes to every question (each automatic answer is printed and recorded)")
	maxFix := fs.Int("max-fix", 0, "debugger attempts when the generated tests fail (default 4)")
	autonomy := fs.Bool("autonomy", false, "after the project is built, keep improving it in cycles (each asks first)")
	cycles := fs.Int("cycles", workflow.DefaultMaxCycles, "autonomy: at most this many improvement cycles")
	budget := fs.Duration("budget", workflow.DefaultMaxWall, "autonomy: wall-time budget of all cycles")
	asJSON := fs.Bool("json", false, "print the summary as JSON on stdout (progress goes to stderr)")
	maxTokens := fs.Int("max-tokens", 2048, "token limit of each model answer")
	verbose := fs.Bool("verbose", false, "stream the model's answers and the test output")
	var ef engineFlags
	ef.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, `usage: codeloom new DIR "requirements" [--yes] [--max-fix N] [--model PATH | --endpoint URL | --script FILE] [--autonomy [--cycles N] [--budget D]] [--json]`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(env.Stderr, `codeloom new: need a new folder and the requirements (codeloom new DIR "requirements")`)
		return ExitUsage
	}
	dest, req := fs.Arg(0), fs.Arg(1)
	if strings.TrimSpace(req) == "" {
		fmt.Fprintln(env.Stderr, "codeloom new: the requirements are empty")
		return ExitUsage
	}
	if *maxTokens < 1 {
		fmt.Fprintln(env.Stderr, "codeloom new: --max-tokens must be at least 1")
		return ExitUsage
	}
	if *cycles < 1 || *budget <= 0 {
		fmt.Fprintln(env.Stderr, "codeloom new: --cycles must be at least 1 and --budget positive")
		return ExitUsage
	}
	abs, err := filepath.Abs(dest)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom new: %v\n", err)
		return ExitUsage
	}
	if ents, err := os.ReadDir(abs); err == nil && len(ents) > 0 {
		fmt.Fprintf(env.Stderr, "codeloom new: %s exists and is not empty; choose a new folder\n", dest)
		return ExitUsage
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(env.Stderr, "codeloom new: %v\n", err)
		return ExitUsage
	}
	progress := env.Stdout
	if *asJSON {
		progress = env.Stderr
	}
	engine, modelName, closeEngine, code := ef.open(ctx, env, "new")
	if code != ExitOK {
		return code
	}
	defer closeEngine()
	if engine == nil {
		fmt.Fprintln(env.Stderr, "codeloom new: a model is needed: give --model, --endpoint or --script")
		return ExitUsage
	}
	approver, guidance := approvers(env, progress, *yes)
	pr := newEventPrinter(progress, *verbose)
	fmt.Fprintf(progress, "new project in %s\n", abs)
	sum, runErr := workflow.NewProject(ctx, workflow.NewProjectConfig{
		Requirements: req, Dest: abs, Engine: engine, Model: modelName, Approver: approver,
		MaxFix: *maxFix, MaxTokens: *maxTokens, OnEvent: pr.event,
	})
	if *asJSON {
		sum.Report = nil
		if code := jsonOut(env, sum); code != ExitOK {
			return code
		}
	} else {
		fmt.Fprintln(progress)
		fmt.Fprint(progress, sum.Text())
	}
	if runErr != nil {
		fmt.Fprintf(env.Stderr, "codeloom new: %v\n", runErr)
		return ExitFailure
	}
	// Open it as a project: index the graph now so the app shows it at once.
	if proj, err := codegraph.Open(ctx, abs, codegraph.Options{NoUpdates: true}); err != nil {
		fmt.Fprintf(progress, "warning: could not index the new project: %v\n", err)
	} else {
		st := proj.Graph().Stats()
		fmt.Fprintf(progress, "indexed: %d files, %d nodes\n", st.Files, st.Nodes)
		proj.Close()
	}
	fmt.Fprintf(progress, "open it with: codeloom open %s   (tests: codeloom test %s)\n", abs, abs)
	if !*autonomy {
		return ExitOK
	}
	settings := workflow.AutonomySettings{Enabled: true, MaxCycles: *cycles, MaxWall: workflow.Duration(*budget)}
	if err := workflow.SaveAutonomy(abs, settings); err != nil {
		fmt.Fprintf(env.Stderr, "codeloom new: %v\n", err)
		return ExitFailure
	}
	return runAutonomy(ctx, env, progress, abs, req, settings, engine, modelName, approver, guidance)
}

// runAutonomy runs improvement cycles on root (each an edit through the
// pipeline, rolled back when it does not verify) within the settings' budget.
func runAutonomy(ctx context.Context, env Env, progress io.Writer, root, task string,
	s workflow.AutonomySettings, eng models.Engine, modelName string, approver pipeline.Approver, guidance pipeline.Guidance) int {
	store, err := memory.OpenProject(root)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom: autonomy: %v\n", err)
		return ExitFailure
	}
	defer store.Close()
	fmt.Fprintf(progress, "\nautonomy: up to %d cycle(s) within %s; each cycle asks first; Ctrl-C stops and keeps the last verified state\n", s.MaxCycles, s.MaxWall.D())
	tp := &taskPrinter{w: progress, quiet: true}
	a := &workflow.Autonomy{
		Settings: s, Engine: eng, Approver: approver, Lessons: store, Activity: store,
		OnEvent: func(text string) { fmt.Fprintf(progress, "autonomy: %s\n", text) },
		Cycler: &workflow.TaskCycler{Root: root, Runner: &workflow.TaskRunner{Config: pipeline.Config{
			Root: root, Engine: eng, ModelName: modelName, Runner: runtime.New(runtime.WithRecorder(store)),
			Approver: approver, Guidance: guidance, Memory: store, OnEvent: tp.event, Kind: pipeline.KindEdit,
		}}},
	}
	start := time.Now()
	rep, err := a.Run(ctx, task)
	tp.endTokens()
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom: autonomy: %v\n", err)
		return ExitFailure
	}
	for i, c := range rep.Cycles {
		status := "verified"
		if !c.OK {
			status = "not verified, rolled back: " + c.Err
		}
		fmt.Fprintf(progress, "  cycle %d: %s — %s (%s)\n", i+1, c.Proposal, status, c.Duration.Round(time.Millisecond))
	}
	fmt.Fprintf(progress, "autonomy stopped: %s (after %s)\n", rep.Stop, time.Since(start).Round(time.Millisecond))
	return ExitOK
}
