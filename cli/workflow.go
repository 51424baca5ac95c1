package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"codeloom/app/memory"
	"codeloom/app/pipeline"
	"codeloom/app/workflow"
	"codeloom/models"
	"codeloom/runtime"
)

// inputFlags collects repeated --input NAME=VALUE flags.
type inputFlags map[string]string

// String lists the input names given.
func (f inputFlags) String() string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// Set adds one NAME=VALUE.
func (f inputFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	f[strings.TrimSpace(k)] = val
	return nil
}

// engineFlags are the model choices of workflow and new: the shared
// --model/--endpoint flags plus --script (canned answers, see ScriptSeparator).
type engineFlags struct {
	modelFlags
	script string
}

func (e *engineFlags) register(fs *flag.FlagSet) {
	e.modelFlags.register(fs)
	fs.StringVar(&e.script, "script", "", "file of canned model answers (see `codeloom task`'s --script) instead of a model")
}

// open returns the chosen engine (nil when none), its name and its closer.
func (e *engineFlags) open(ctx context.Context, env Env, cmd string) (models.Engine, string, func(), int) {
	n := 0
	for _, s := range []string{e.path, e.endpoint, e.script} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		fmt.Fprintf(env.Stderr, "codeloom %s: choose one of --model, --endpoint and --script\n", cmd)
		return nil, "", nil, ExitUsage
	}
	if e.script != "" {
		answers, err := ReadScript(e.script)
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom %s: %v\n", cmd, err)
			return nil, "", nil, ExitUsage
		}
		return models.NewScripted(answers...), "script:" + e.script, func() {}, ExitOK
	}
	restore := quietNativeLogs(e.verbose)
	eng, closer, err := e.modelFlags.open(ctx, env)
	if err != nil {
		restore()
		fmt.Fprintf(env.Stderr, "codeloom %s: %v\n", cmd, err)
		return nil, "", nil, ExitFailure
	}
	closeModel := closer
	closer = func() { closeModel(); restore() }
	return eng, e.name(eng), closer, ExitOK
}

// approvers returns the terminal approver, or with yes an automatic one that
// prints every automatic answer (never silent).
func approvers(env Env, out io.Writer, yes bool) (pipeline.Approver, pipeline.Guidance) {
	if yes {
		aa := &pipeline.AutoApprover{
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Notify: func(q pipeline.Question, answer bool) {
				a := "no"
				if answer {
					a = "yes"
				}
				fmt.Fprintf(out, "  [--yes] %s → %s\n", q.Title, a)
			},
		}
		return aa, aa
	}
	ta := pipeline.NewTerminalApprover(env.Stdin, out)
	return ta, ta
}

// eventPrinter prints workflow step events, one line per state change.
type eventPrinter struct {
	mu      sync.Mutex
	w       io.Writer
	verbose bool
	started map[string]time.Time
}

func newEventPrinter(w io.Writer, verbose bool) *eventPrinter {
	return &eventPrinter{w: w, verbose: verbose, started: map[string]time.Time{}}
}

func (p *eventPrinter) event(ev workflow.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Step == "" {
		return
	}
	pad := strings.Repeat("  ", ev.Depth)
	key := ev.Workflow + "/" + ev.Step
	switch ev.State {
	case workflow.StateRunning:
		if ev.Text != "" && ev.Err == "" {
			if p.verbose {
				io.WriteString(p.w, ev.Text)
			}
			return
		}
		if ev.Err != "" {
			fmt.Fprintf(p.w, "%s  %-12s %s (%s)\n", pad, ev.Step, ev.Text, firstLine(ev.Err))
			return
		}
		p.started[key] = ev.Time
		fmt.Fprintf(p.w, "%s▶ %-12s %s\n", pad, ev.Step, ev.Type)
	case workflow.StateDone:
		fmt.Fprintf(p.w, "%s✔ %-12s done in %s\n", pad, ev.Step, ev.Time.Sub(p.started[key]).Round(time.Millisecond))
	case workflow.StateFailed:
		fmt.Fprintf(p.w, "%s✘ %-12s failed: %s\n", pad, ev.Step, ev.Err)
	case workflow.StateSkipped:
		fmt.Fprintf(p.w, "%s– %-12s skipped\n", pad, ev.Step)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// runWorkflow implements
//
//	codeloom workflow DIR validate FILE|NAME
//	codeloom workflow DIR run FILE|NAME [--input NAME=VALUE]... [--yes] [--workers N]
//	    [--model PATH | --endpoint URL | --script FILE] [--json] [--dot]
//	codeloom workflow DIR list
//
// FILE is a workflow YAML file (relative to DIR when not found as given);
// NAME is a workflow in DIR/.codeloom/workflows/NAME.yaml or a built-in
// (hello, new-project, improve-project). validate checks everything before
// anything runs and prints the steps; exit 1 when the file is invalid. run
// asks once before starting ("Run workflow …?", showing every step and
// command) unless --yes; steps that write files or run generated code ask
// again on their own. Exit 0 only when every step succeeded.
func runWorkflow(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("workflow", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	inputs := inputFlags{}
	fs.Var(inputs, "input", "a workflow input as NAME=VALUE (repeatable)")
	yes := fs.Bool("yes", false, "answer yes to every question (each automatic answer is printed and recorded)")
	workers := fs.Int("workers", 0, "steps running at once (default: the number of CPUs)")
	asJSON := fs.Bool("json", false, "print the run report (or, for validate, the step graph) as JSON on stdout")
	dot := fs.Bool("dot", false, "validate: print the step graph in Graphviz DOT")
	maxTokens := fs.Int("max-tokens", 2048, "token limit of each model answer")
	verbose := fs.Bool("verbose", false, "stream model tokens and program output")
	save := fs.String("save", "", "draft: save the drafted workflow as DIR/.codeloom/workflows/NAME.yaml")
	enable := fs.Bool("enable", false, "auto: switch autonomy on for this project (saved in .codeloom/autonomy.yaml)")
	cycles := fs.Int("cycles", 0, "auto: at most this many cycles (saved with --enable; default 3)")
	budget := fs.Duration("budget", 0, "auto: wall-time budget of all cycles (saved with --enable; default 30m)")
	var ef engineFlags
	ef.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: codeloom workflow DIR validate FILE|NAME [--json|--dot]\n"+
			"       codeloom workflow DIR run FILE|NAME [--input NAME=VALUE]... [--yes] [--workers N] [--model PATH | --endpoint URL | --script FILE] [--json]\n"+
			"       codeloom workflow DIR draft \"request\" [--save NAME] [--yes] [--model PATH | --endpoint URL | --script FILE]\n"+
			"       codeloom workflow DIR auto \"task\" [--enable] [--cycles N] [--budget D] [--yes] [--model PATH | --endpoint URL | --script FILE]\n"+
			"       codeloom workflow DIR list")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() < 2 {
		fs.Usage()
		return ExitUsage
	}
	dir, verb := fs.Arg(0), fs.Arg(1)
	if code := checkDir(env, "workflow", dir); code != ExitOK {
		return code
	}
	if verb == "list" {
		return listWorkflows(env, dir)
	}
	if fs.NArg() != 3 {
		fmt.Fprintf(env.Stderr, "codeloom workflow: %s needs one workflow file or name\n", verb)
		return ExitUsage
	}
	ref := fs.Arg(2)
	extra := []string{workflow.TypeBuild, workflow.TypeWrite, workflow.TypeTask}
	var w *workflow.Workflow
	var err error
	switch verb {
	case "validate", "run":
		if w, err = workflow.Resolve(dir, ref); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom workflow: %v\n", err)
			return ExitUsage
		}
	case "draft", "auto":
		if strings.TrimSpace(ref) == "" {
			fmt.Fprintf(env.Stderr, "codeloom workflow: %s: the text is empty\n", verb)
			return ExitUsage
		}
	default:
		fmt.Fprintf(env.Stderr, "codeloom workflow: unknown action %q (validate, run, draft, auto or list)\n", verb)
		return ExitUsage
	}
	if *save != "" && !regexp.MustCompile(`^[A-Za-z0-9_.-]+$`).MatchString(*save) {
		fmt.Fprintf(env.Stderr, "codeloom workflow: --save %q: use letters, digits, '_', '.', '-'\n", *save)
		return ExitUsage
	}
	switch verb {
	case "validate":
		if err := workflow.Validate(w, extra...); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom workflow: %v\n", err)
			return ExitFailure
		}
		if *dot {
			io.WriteString(env.Stdout, workflow.DOT(w, nil))
			return ExitOK
		}
		if *asJSON {
			nodes, edges := workflow.Graph(w)
			return jsonOut(env, map[string]any{"workflow": w, "nodes": nodes, "edges": edges})
		}
		fmt.Fprintf(env.Stdout, "%s is valid: %d steps, %d inputs, %d outputs\n", ref, len(w.Steps), len(w.Inputs), len(w.Outputs))
		io.WriteString(env.Stdout, workflow.Describe(w))
		return ExitOK
	case "run":
		if err := workflow.Validate(w, extra...); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom workflow: %v\n", err)
			return ExitFailure
		}
		if _, err := workflow.CheckInputs(w, inputs); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom workflow: %v\n", err)
			return ExitUsage
		}
	}
	progress := env.Stdout
	if *asJSON {
		progress = env.Stderr
	}
	engine, modelName, closeEngine, code := ef.open(ctx, env, "workflow")
	if code != ExitOK {
		return code
	}
	defer closeEngine()
	root, _ := filepath.Abs(dir)
	approver, guidance := approvers(env, progress, *yes)
	if verb == "auto" {
		return autoCommand(ctx, env, progress, root, ref, *enable, *cycles, *budget, engine, modelName, approver, guidance)
	}
	if verb == "draft" {
		if engine == nil {
			fmt.Fprintln(env.Stderr, "codeloom workflow: draft needs a model: give --model, --endpoint or --script")
			return ExitUsage
		}
		drafted, text, err := workflow.Draft(ctx, engine, ref, []string{workflow.TypeLLM, workflow.TypeRun, workflow.TypeApprove}, 0)
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom workflow: %v\n", err)
			return ExitFailure
		}
		fmt.Fprintf(progress, "drafted workflow (valid):\n%s\n\n%s", strings.TrimSpace(text), workflow.Describe(drafted))
		if *save != "" {
			p := filepath.Join(memory.DataDir(root), "workflows", *save+".yaml")
			if err := saveNew(p, []byte(strings.TrimSpace(text)+"\n")); errors.Is(err, os.ErrExist) {
				fmt.Fprintf(env.Stderr, "codeloom workflow: %s exists; not overwritten\n", p)
				return ExitFailure
			} else if err != nil {
				fmt.Fprintf(env.Stderr, "codeloom workflow: save: %v\n", err)
				return ExitFailure
			}
			fmt.Fprintf(progress, "saved as %s (run it with: codeloom workflow %s run %s)\n", p, dir, *save)
		}
		if _, err := workflow.CheckInputs(drafted, inputs); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom workflow: %v\n", err)
			return ExitUsage
		}
		w = drafted
	}
	store, err := memory.OpenProject(dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom workflow: %v\n", err)
		return ExitFailure
	}
	defer store.Close()
	runner := runtime.New(runtime.WithRecorder(store))
	pr := newEventPrinter(progress, *verbose)
	ex := &workflow.Executor{Workers: *workers, Activity: store, OnEvent: pr.event}
	ex.Handlers = workflow.StandardHandlers(ex, root, engine, runner, approver, func(r string) (*workflow.Workflow, error) { return workflow.Resolve(root, r) })
	ex.Handlers[workflow.TypeLLM] = &workflow.LLMHandler{Engine: engine, Model: modelName, Memory: store, Options: models.GenOptions{MaxTokens: max(*maxTokens, 1)}}
	ex.Handlers[workflow.TypePatch] = &workflow.PatchHandler{Root: root, Approver: approver, Versions: store}
	ex.Handlers[workflow.TypeBuild] = &workflow.Builder{Engine: engine, Runner: runner, Approver: approver, Memory: store}
	ex.Handlers[workflow.TypeWrite] = &workflow.Writer{Approver: approver}
	ex.Handlers[workflow.TypeTask] = &workflow.TaskRunner{Config: pipeline.Config{Root: root, Engine: engine, ModelName: modelName,
		Runner: runner, Approver: approver, Guidance: guidance, Memory: store}}
	if engine == nil {
		for _, s := range w.Steps {
			if s.Type == workflow.TypeLLM || s.Type == workflow.TypeBuild || s.Type == workflow.TypeTask {
				fmt.Fprintf(env.Stderr, "codeloom workflow: step %q needs a model: give --model, --endpoint or --script\n", s.ID)
				return ExitUsage
			}
		}
	}
	ok, err := approver.Approve(ctx, pipeline.Question{Kind: pipeline.AskRun, Title: "Run workflow " + w.ID + "?", Detail: workflow.Describe(w)})
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom workflow: %v\n", err)
		return ExitFailure
	}
	if !ok {
		fmt.Fprintln(progress, "not run")
		return ExitFailure
	}
	rep, runErr := ex.Run(ctx, w, inputs)
	if *asJSON && rep != nil {
		if code := jsonOut(env, rep); code != ExitOK {
			return code
		}
	}
	if rep != nil && !*asJSON {
		keys := make([]string, 0, len(rep.Outputs))
		for k := range rep.Outputs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(env.Stdout, "%s = %s\n", k, rep.Outputs[k])
		}
	}
	if runErr != nil {
		fmt.Fprintf(env.Stderr, "codeloom workflow: %v\n", runErr)
		return ExitFailure
	}
	fmt.Fprintf(progress, "workflow %s finished in %s\n", w.ID, rep.Duration.Round(time.Millisecond))
	return ExitOK
}

// saveNew writes data to the new file p (creating its folder); an existing
// file is never overwritten, even one created meanwhile (os.ErrExist).
func saveNew(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(p)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(p)
		return err
	}
	return nil
}

// listWorkflows prints the built-in workflows and the project's own.
func listWorkflows(env Env, dir string) int {
	fmt.Fprintln(env.Stdout, "built-in:")
	for _, n := range workflow.BuiltinNames() {
		desc := ""
		if w, err := workflow.Builtin(n); err == nil {
			desc = firstLine(w.Description)
		}
		fmt.Fprintf(env.Stdout, "  %-16s %s\n", n, clipHistory(desc, 100))
	}
	matches, _ := filepath.Glob(filepath.Join(memory.DataDir(dir), "workflows", "*.yaml"))
	if len(matches) > 0 {
		fmt.Fprintln(env.Stdout, "project:")
		for _, m := range matches {
			name := strings.TrimSuffix(filepath.Base(m), ".yaml")
			w, err := workflow.Load(m)
			switch {
			case err != nil:
				fmt.Fprintf(env.Stdout, "  %-16s (unreadable: %v)\n", name, err)
			case workflow.Validate(w, workflow.TypeBuild, workflow.TypeWrite, workflow.TypeTask) != nil:
				fmt.Fprintf(env.Stdout, "  %-16s (invalid; run validate)\n", name)
			default:
				fmt.Fprintf(env.Stdout, "  %-16s %s\n", name, clipHistory(firstLine(w.Description), 100))
			}
		}
	}
	return ExitOK
}

// autoCommand runs the autonomy loop on an existing project, when its
// setting is on (or --enable turns it on).
func autoCommand(ctx context.Context, env Env, progress io.Writer, root, task string, enable bool, cycles int, budget time.Duration,
	engine models.Engine, modelName string, approver pipeline.Approver, guidance pipeline.Guidance) int {
	s, err := workflow.LoadAutonomy(root)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom workflow: %v\n", err)
		return ExitUsage
	}
	if cycles < 0 || budget < 0 {
		fmt.Fprintln(env.Stderr, "codeloom workflow: --cycles and --budget must not be negative")
		return ExitUsage
	}
	if cycles > 0 {
		s.MaxCycles = cycles
	}
	if budget > 0 {
		s.MaxWall = workflow.Duration(budget)
	}
	if enable {
		s.Enabled = true
		if err := workflow.SaveAutonomy(root, s); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom workflow: %v\n", err)
			return ExitFailure
		}
	}
	if !s.Enabled {
		fmt.Fprintf(env.Stderr, "codeloom workflow: autonomy is off for this project; switch it on with --enable (saved in %s)\n",
			filepath.Join(memory.DataDir(root), workflow.AutonomyFile))
		return ExitUsage
	}
	if engine == nil {
		fmt.Fprintln(env.Stderr, "codeloom workflow: autonomy needs a model: give --model, --endpoint or --script")
		return ExitUsage
	}
	return runAutonomy(ctx, env, progress, root, task, s, engine, modelName, approver, guidance)
}
