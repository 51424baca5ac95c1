package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/app/patch"
	"codeloom/app/pipeline"
	"codeloom/models"
	"codeloom/runtime"
)

// ScriptSeparator separates the canned answers of a --script file.
//
// A script file feeds a scripted model (models.Scripted) so `codeloom task`
// runs end to end without a model: the tests and the demo use it. It holds
// the model's answers in the order the pipeline asks for them — classify (one
// word: run, edit, create, debug, explain), the architect's JSON plan, then
// one answer per patch attempt (coder first, debugger after a failed check,
// one more per re-ask of a malformed patch) — separated by lines that are
// exactly "----- answer -----". A file whose first non-blank character is
// "[" is read as a JSON array of strings instead. Example:
//
//	edit
//	----- answer -----
//	{"steps":[{"objective":"fix the boundary","files":["inventory/pricing.py"],"tests":[],"risks":""}]}
//	----- answer -----
//	inventory/pricing.py
//	<<<<<<< SEARCH
//	    if quantity > 100:
//	=======
//	    if quantity >= 100:
//	>>>>>>> REPLACE
const ScriptSeparator = "----- answer -----"

// MaxScriptBytes bounds a --script file: its answers are held in memory.
const MaxScriptBytes = 32 << 20

// ReadScript reads a --script file into its answers. Only a regular file of
// at most MaxScriptBytes is read (never a FIFO or device).
func ReadScript(path string) ([]string, error) {
	data, err := patch.ReadRegular(path, MaxScriptBytes)
	if errors.Is(err, patch.ErrTooLarge) {
		return nil, fmt.Errorf("script %s is larger than the %d MiB limit for a script file", path, MaxScriptBytes>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("read script %s: %w", path, err)
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if strings.HasPrefix(strings.TrimSpace(text), "[") {
		var answers []string
		if err := json.Unmarshal([]byte(text), &answers); err != nil {
			return nil, fmt.Errorf("script %s: not a JSON array of strings: %w", path, err)
		}
		if len(answers) == 0 {
			return nil, fmt.Errorf("script %s: no answers", path)
		}
		return answers, nil
	}
	var answers []string
	var cur []string
	flush := func() {
		a := strings.Trim(strings.Join(cur, "\n"), "\n")
		answers = append(answers, a+"\n")
		cur = nil
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimRight(line, " \t") == ScriptSeparator {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	if len(answers) == 1 && strings.TrimSpace(answers[0]) == "" {
		return nil, fmt.Errorf("script %s: no answers", path)
	}
	return answers, nil
}

// runTask implements `codeloom task DIR "request" [--yes] [--max-fix N]
// [--model PATH | --endpoint URL | --script FILE]`: the whole Plan → Act →
// Verify → Update loop, headless. Questions are asked on the terminal (y/n)
// unless --yes, which answers yes to every apply/run/confirm question (each
// automatic answer is printed and recorded as automatic) and no to "Add
// another feature?". Exit status 0 only when the gates pass (or an explain /
// run request succeeded).
//
// A task that fails (or stops, or errs) after applying patches ends with
// "Roll back the N changes this task made?". Under --yes that answer is yes
// too: an unattended task that failed leaves the project as it found it,
// unless --keep-failed. `codeloom rollback DIR TASK` does the same later.
// --commit (or git.commit in the policy) commits each landed patch.
func runTask(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("task", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	yes := fs.Bool("yes", false, "answer yes to apply/run/confirm questions without asking (each one is still printed and recorded)")
	maxFix := fs.Int("max-fix", 0, "fix attempts before asking for guidance (default: policy's max_fix_attempts, 4)")
	modelPath := fs.String("model", "", modelFlagHelp)
	endpoint := fs.String("endpoint", "", "OpenAI-compatible server URL, e.g. http://127.0.0.1:8080")
	endpointModel := fs.String("endpoint-model", "", "model name sent to --endpoint")
	var apiKey string
	RegisterAPIKeyFlag(fs, &apiKey)
	script := fs.String("script", "", "file of canned model answers (see ScriptSeparator) instead of a model")
	kind := fs.String("kind", "", "skip classification: run, edit, create, debug or explain")
	asJSON := fs.Bool("json", false, "print the outcome as JSON on stdout (progress goes to stderr)")
	writeTests := fs.Bool("write-tests", false, "ask the tester role for tests after the first patch")
	genTimeout := fs.Duration("gen-timeout", 5*time.Minute, "limit for each model answer")
	maxTokens := fs.Int("max-tokens", 0, "token limit of each patch answer (default 1536)")
	ctxLen := fs.Int("ctx", 0, "context length for --model (default: the model's, at most 4096)")
	quiet := fs.Bool("quiet", false, "do not stream model tokens")
	commit := fs.Bool("commit", false, "commit each landed patch to git on the current branch (only the files it touched); also git.commit in .codeloom/policy.yaml")
	keepFailed := fs.Bool("keep-failed", false, "do not offer to roll back a failed task (under --yes a failed task is otherwise rolled back)")
	embed := fs.Bool("embed", false, "fuse embedding similarity into context retrieval (embeds every function once; cached in DIR/.codeloom)")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, `usage: codeloom task DIR "request" [--yes] [--commit] [--keep-failed] [--max-fix N] [--model PATH | --endpoint URL | --script FILE] [--kind K] [--json]`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(env.Stderr, `codeloom task: need a folder and a request (codeloom task DIR "request")`)
		return ExitUsage
	}
	dir, request := fs.Arg(0), fs.Arg(1)
	if code := checkDir(env, "task", dir); code != ExitOK {
		return code
	}
	if strings.TrimSpace(request) == "" {
		fmt.Fprintln(env.Stderr, "codeloom task: the request is empty")
		return ExitUsage
	}
	n := 0
	for _, s := range []string{*modelPath, *endpoint, *script} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		fmt.Fprintln(env.Stderr, "codeloom task: choose one of --model, --endpoint and --script")
		return ExitUsage
	}
	progress := env.Stdout
	if *asJSON {
		progress = env.Stderr
	}

	var engine models.Engine
	modelName := ""
	switch {
	case *script != "":
		answers, err := ReadScript(*script)
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom task: %v\n", err)
			return ExitUsage
		}
		engine = models.NewScripted(answers...)
		modelName = "script:" + *script
	default:
		// one model source for every command (models.ResolveSource): a
		// GGUF file, a store name, a server, or a server from the environment
		e, name, closeModel, err := openTaskModel(ctx, progress, modelFlags{path: *modelPath, endpoint: *endpoint, endpointModel: *endpointModel, apiKey: apiKey, ctxLen: *ctxLen})
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom task: %v\n", err)
			return ExitFailure
		}
		defer closeModel()
		engine, modelName = e, name
		if engine == nil {
			fmt.Fprintln(progress, "no model given (--model, --endpoint or --script): you will pick the request kind; edits need a model")
		}
	}

	store, err := memory.OpenProject(dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom task: %v\n", err)
		return ExitFailure
	}
	defer store.Close()

	var graph pipeline.Indexer
	proj, err := codegraph.Open(ctx, dir, codegraph.Options{Store: store})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(env.Stderr, "codeloom task: %v\n", err)
			return ExitFailure
		}
		fmt.Fprintf(progress, "warning: no code graph (%v); continuing without graph context\n", err)
	} else {
		defer proj.Close()
		graph = proj
		st := proj.Graph().Stats()
		fmt.Fprintf(progress, "indexed %s: %d files, %d nodes\n", dir, st.Files, st.Nodes)
	}

	pr := &taskPrinter{w: progress, quiet: *quiet}
	var approver pipeline.Approver
	var guidance pipeline.Guidance
	if *yes {
		aa := &pipeline.AutoApprover{
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Notify: func(q pipeline.Question, answer bool) { pr.auto(q, answer) },
		}
		approver, guidance = aa, aa
	} else {
		ta := pipeline.NewTerminalApprover(env.Stdin, progress)
		approver, guidance = ta, ta
	}
	var source pipeline.ContextSource
	if graph != nil {
		source = pipeline.RetrievalContext{Graph: graph.Graph, Engine: engine, Embed: *embed && engine != nil, Cache: store, ModelID: modelName}
	}
	p, err := pipeline.New(pipeline.Config{
		Context:        source,
		Root:           dir,
		Engine:         engine,
		ModelName:      modelName,
		Runner:         runtime.New(runtime.WithRecorder(store)),
		Approver:       approver,
		Guidance:       guidance,
		Memory:         store,
		Graph:          graph,
		MaxFixAttempts: *maxFix,
		Kind:           *kind,
		MaxTokens:      *maxTokens,
		GenTimeout:     *genTimeout,
		WriteTests:     *writeTests,
		Commit:         *commit,
		OnEvent:        pr.event,
		Hook:           pauseHook(env),
	})
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom task: %v\n", err)
		return ExitUsage
	}
	fmt.Fprintf(progress, "session %s\n", p.Session())
	out, runErr := p.Run(ctx, request)
	pr.endTokens()
	if out != nil && !*keepFailed && pipeline.NeedsRollbackOffer(out) {
		res, err := p.OfferRollback(ctx, out)
		switch {
		case err != nil:
			fmt.Fprintf(env.Stderr, "codeloom task: rollback: %v\n", err)
		case res != nil:
			fmt.Fprintf(progress, "rolled back: %s\n", strings.Join(res.Restored, ", "))
			if res.Note != "" {
				fmt.Fprintf(progress, "note: %s\n", res.Note)
			}
		default:
			fmt.Fprintf(progress, "the changes stay; roll them back later with `codeloom rollback %s %s`\n", dir, p.Session())
		}
	}
	if *asJSON && out != nil {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom task: write JSON: %v\n", err)
			return ExitFailure
		}
	}
	if runErr != nil {
		fmt.Fprintf(env.Stderr, "codeloom task: %v\n", runErr)
		return ExitFailure
	}
	c := out.Last()
	fmt.Fprintf(progress, "\nresult: %s (%s, %d attempt(s), %s)", c.Status, c.Kind, c.Attempts, c.Duration.Round(time.Millisecond))
	if c.Note != "" {
		fmt.Fprintf(progress, " — %s", c.Note)
	}
	fmt.Fprintln(progress)
	if c.LessonID != "" {
		fmt.Fprintf(progress, "lesson card %s recorded; see `codeloom lessons %s`\n", c.LessonID, dir)
	}
	if out.OK() {
		return ExitOK
	}
	return ExitFailure
}

// taskPrinter renders pipeline events on a terminal.
type taskPrinter struct {
	mu       sync.Mutex
	w        io.Writer
	quiet    bool
	inTokens string // role whose tokens are being streamed
}

func (t *taskPrinter) endTokens() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endTokensLocked()
}

func (t *taskPrinter) endTokensLocked() {
	if t.inTokens != "" {
		fmt.Fprintln(t.w)
		t.inTokens = ""
	}
}

func (t *taskPrinter) auto(q pipeline.Question, answer bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endTokensLocked()
	a := "no"
	if answer {
		a = "yes"
	}
	if q.Kind == pipeline.AskGuidance {
		a = "(no guidance: stop)"
	}
	fmt.Fprintf(t.w, "? %s → %s (automatic, --yes)\n", q.Title, a)
}

func (t *taskPrinter) event(e pipeline.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.Type == pipeline.EventToken {
		if t.quiet {
			return
		}
		if t.inTokens != e.Role {
			t.endTokensLocked()
			fmt.Fprintf(t.w, "[%s] ", e.Role)
			t.inTokens = e.Role
		}
		io.WriteString(t.w, e.Text)
		return
	}
	t.endTokensLocked()
	switch e.Type {
	case pipeline.EventStep:
		fmt.Fprintf(t.w, "==> %s\n", e.Step)
	case pipeline.EventStepDone:
		mark := "ok"
		if !e.OK {
			mark = "FAILED"
		}
		if e.Text != "" {
			fmt.Fprintf(t.w, "    %s %s: %s (%s)\n", e.Step, mark, e.Text, e.Elapsed.Round(time.Millisecond))
		} else {
			fmt.Fprintf(t.w, "    %s %s (%s)\n", e.Step, mark, e.Elapsed.Round(time.Millisecond))
		}
	case pipeline.EventPlan:
		fmt.Fprintf(t.w, "plan:\n%s", taskIndent(e.Text, "  "))
	case pipeline.EventPatch:
		fmt.Fprintf(t.w, "patch (%s, dry-run clean):\n%s%s", e.Role, taskIndent(e.Changes.Summary(), "  "), e.Changes.Diff())
	case pipeline.EventApplied:
		fmt.Fprintf(t.w, "applied:\n%s", taskIndent(e.Changes.Summary(), "  "))
	case pipeline.EventGate:
		fmt.Fprintf(t.w, "  gate %s\n", e.Gate.Line())
		if e.Gate.Status == pipeline.GateFailed && e.Gate.Output != "" {
			fmt.Fprint(t.w, taskIndent(taskLastLines(e.Gate.Output, 15), "    | "))
		}
	case pipeline.EventInfo:
		fmt.Fprintf(t.w, "  note: %s\n", e.Text)
	case pipeline.EventOutcome:
		fmt.Fprintf(t.w, "==> cycle %s\n", e.Text)
	}
}

// taskIndent prefixes every line of s.
func taskIndent(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// taskLastLines keeps the last n lines of s.
func taskLastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// Environment variables of the test hook: with CODELOOM_PAUSE_AT set to a
// pipeline hook point ("apply:recorded", "apply:written", or several
// separated by commas), task prints "paused at POINT" on stderr and sleeps
// CODELOOM_PAUSE_FOR (default 30s) there, so a test can kill it at exactly
// that moment.
const (
	pauseAtEnv  = "CODELOOM_PAUSE_AT"
	pauseForEnv = "CODELOOM_PAUSE_FOR"
)

// pauseHook returns the test hook the environment asks for, or nil.
func pauseHook(env Env) func(string) {
	at := os.Getenv(pauseAtEnv)
	if at == "" {
		return nil
	}
	points := map[string]bool{}
	for _, p := range strings.Split(at, ",") {
		points[strings.TrimSpace(p)] = true
	}
	d, err := time.ParseDuration(os.Getenv(pauseForEnv))
	if err != nil || d <= 0 {
		d = 30 * time.Second
	}
	return func(point string) {
		if points[point] {
			fmt.Fprintf(env.Stderr, "paused at %s\n", point)
			time.Sleep(d)
		}
	}
}
