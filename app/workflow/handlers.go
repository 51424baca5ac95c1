package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"codeloom/app/memory"
	"codeloom/app/patch"
	"codeloom/app/pipeline"
	"codeloom/models"
	"codeloom/runtime"
)

// Approver answers yes/no questions; pipeline.TerminalApprover,
// pipeline.AutoApprover and pipeline.ScriptedApprover satisfy it.
type Approver = pipeline.Approver

// Question is a yes/no question for the user (pipeline.Question).
type Question = pipeline.Question

// Question kinds used by workflows, besides the pipeline's.
const (
	AskStep  = "step"  // an approve step of a workflow
	AskWrite = "write" // write a generated project to its folder
	AskCycle = "cycle" // start the next autonomy cycle
)

// ErrDeclined is returned when the user answered no.
var ErrDeclined = errors.New("declined by the user")

// ExchangeRecorder records prompts and answers; *memory.Store satisfies it.
type ExchangeRecorder interface {
	AddExchange(memory.Exchange) (string, error)
}

// RolePrompt returns the system prompt of a role (architect, coder, tester,
// debugger), used by llm steps with a role and no system text; "" when unknown.
func RolePrompt(role string) string {
	switch role {
	case "architect":
		return "You are the architect of a small software project. You analyse requirements " +
			"(components, dependencies, architecture, complexity), design the file structure with a clear " +
			"entry point, and write short, concrete plans. Answer plainly, without code unless asked."
	case "coder":
		return "You are the coder. You write complete, working files exactly as the plan says. Give every " +
			"file as a line 'FILE: path' followed by a fenced code block holding the whole file, and nothing else."
	case "tester":
		return "You are the tester. You write focused automated tests (Python unittest, runnable with " +
			"'python -m unittest discover') that check the plan's behaviour. Give the test file as a line " +
			"'FILE: path' followed by a fenced code block."
	case "debugger":
		return "You are the debugger. You read failing test output and the code, find the cause, and fix " +
			"the code (not the tests, unless a test is wrong). Give each fixed file as 'FILE: path' followed by a " +
			"fenced block with the whole new content, or as SEARCH/REPLACE blocks."
	}
	return ""
}

// LLMHandler runs llm steps on a models.Engine: the rendered prompt as the
// user message, the step's system text (or its role's prompt) as the system
// message. Tokens are streamed to the step's events.
type LLMHandler struct {
	Engine  models.Engine
	Options models.GenOptions
	// Model names the model in recorded exchanges.
	Model string
	// Memory, when set, records every prompt and answer.
	Memory ExchangeRecorder
	// Session labels recorded exchanges.
	Session string
}

// Run generates the step's answer.
func (h *LLMHandler) Run(ctx context.Context, c Call) (string, error) {
	if h.Engine == nil {
		return "", errors.New("llm step: no model loaded (give --model, --endpoint or --script)")
	}
	sys := c.System
	if sys == "" {
		sys = RolePrompt(c.Step.Role)
	}
	var msgs []models.Message
	if sys != "" {
		msgs = append(msgs, models.Message{Role: models.RoleSystem, Content: sys})
	}
	msgs = append(msgs, models.Message{Role: models.RoleUser, Content: c.Prompt})
	start := time.Now()
	var pending strings.Builder
	flush := func() {
		if pending.Len() > 0 {
			c.Emit(pending.String())
			pending.Reset()
		}
	}
	answer, err := h.Engine.Generate(ctx, msgs, h.Options, func(tok string) {
		pending.WriteString(tok)
		if pending.Len() >= 64 || strings.Contains(tok, "\n") {
			flush()
		}
	})
	flush()
	if h.Memory != nil {
		role := c.Step.Role
		if role == "" {
			role = "llm"
		}
		if _, rerr := h.Memory.AddExchange(memory.Exchange{Time: start, Session: h.Session, Role: role,
			Prompt: c.Prompt, Answer: answer, Model: h.Model, Duration: time.Since(start)}); rerr != nil {
			return answer, fmt.Errorf("llm step: record exchange: %w", rerr)
		}
	}
	if err != nil {
		return "", fmt.Errorf("llm step: %w", err)
	}
	if strings.TrimSpace(answer) == "" {
		return "", errors.New("llm step: the model gave an empty answer")
	}
	return answer, nil
}

// DefaultRunTimeout bounds a run step without a timeout of its own.
const DefaultRunTimeout = 10 * time.Minute

// RunHandler runs run steps through a runtime.Runner in the project folder,
// or in the step's dir: an absolute folder as given, a relative one confined
// to the project folder. The output is the program's standard
// output without trailing newlines; a non-zero exit, a signal or a limit is
// a failure whose error carries the tail of standard error.
type RunHandler struct {
	Runner runtime.Runner
	// Root is the project folder; commands run there by default.
	Root string
	// Limits and NoNetwork apply to every run.
	Limits    runtime.Limits
	NoNetwork bool
}

// Run runs the step's command.
func (h *RunHandler) Run(ctx context.Context, c Call) (string, error) {
	if h.Runner == nil {
		return "", errors.New("run step: no runner")
	}
	dir := h.Root
	if c.Dir != "" {
		if filepath.IsAbs(c.Dir) {
			dir = c.Dir
		} else {
			abs, _, err := patch.Confine(h.Root, c.Dir)
			if err != nil {
				return "", fmt.Errorf("run step: dir: %w", err)
			}
			dir = abs
		}
	}
	timeout := DefaultRunTimeout // a program that never ends is stopped even without a step timeout
	if c.Step.Timeout > 0 {      // the step's timeout (ctx) ends it; the runtime's limit is a backstop
		timeout = c.Step.Timeout.D() + time.Second
	}
	res, err := h.Runner.Run(ctx, runtime.Spec{
		Command: c.Command, Dir: dir, Timeout: timeout, Limits: h.Limits, NoNetwork: h.NoNetwork,
		Origin: "workflow:" + c.Workflow.ID + "/" + c.Step.ID,
		OnOutput: func(s runtime.Stream, chunk []byte) {
			if s == runtime.Stdout {
				c.Emit(string(chunk))
			}
		},
	})
	if err != nil {
		return "", fmt.Errorf("run step: %w", err)
	}
	out := strings.TrimRight(string(res.Stdout), "\r\n")
	switch {
	case res.TimedOut && ctx.Err() != nil:
		return "", fmt.Errorf("run %s: %w", strings.Join(c.Command, " "), ctx.Err())
	case res.TimedOut || res.Limit == runtime.LimitTimeout:
		return "", fmt.Errorf("run %s: %w after %s", strings.Join(c.Command, " "), ErrTimeout, res.Wall.Round(time.Millisecond))
	case res.Canceled:
		return "", fmt.Errorf("run %s: canceled: %w", strings.Join(c.Command, " "), context.Cause(ctx))
	case !res.OK():
		why := fmt.Sprintf("exit status %d", res.ExitCode)
		if res.Signal != "" {
			why = "killed by " + res.Signal
		}
		if res.Limit != "" {
			why += ", limit " + res.Limit
		}
		return "", fmt.Errorf("run %s: %s: %s", strings.Join(c.Command, " "), why, tail(string(res.Stderr), 800))
	}
	return out, nil
}

// tail returns the last n bytes of s (fewer if n would split a UTF-8
// character), marked when cut.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "…" + s[i:]
}

// Resolver finds a workflow by built-in name or file path.
type Resolver func(ref string) (*Workflow, error)

// WorkflowHandler runs workflow steps: the referenced workflow with the
// step's "with" values as its inputs, on the same Executor (same handlers,
// events and records). The output is the sub-workflow's only output, or all
// its outputs as a JSON object when it has several.
type WorkflowHandler struct {
	Exec    *Executor
	Resolve Resolver
}

// Run runs the sub-workflow.
func (h *WorkflowHandler) Run(ctx context.Context, c Call) (string, error) {
	if h.Resolve == nil || h.Exec == nil {
		return "", errors.New("workflow step: no resolver")
	}
	sub, err := h.Resolve(c.Step.Workflow)
	if err != nil {
		return "", fmt.Errorf("workflow step: %w", err)
	}
	depth := DepthOf(ctx) + 1
	if depth > MaxDepth {
		return "", fmt.Errorf("workflow step: %s nested deeper than %d (does it call itself?)", sub.ID, MaxDepth)
	}
	rep, err := h.Exec.Run(WithDepth(ctx, depth), sub, c.With)
	if err != nil {
		return "", fmt.Errorf("sub-workflow %s: %w", sub.ID, err)
	}
	if len(rep.Outputs) == 1 {
		for _, v := range rep.Outputs {
			return v, nil
		}
	}
	data, err := json.Marshal(rep.Outputs)
	if err != nil {
		return "", fmt.Errorf("sub-workflow %s: outputs: %w", sub.ID, err)
	}
	return string(data), nil
}

// ApproveHandler runs approve steps: the question goes to the Approver; "no"
// fails the step with ErrDeclined (use continue_on_error to go on anyway).
type ApproveHandler struct {
	Approver Approver
}

// Run asks the question.
func (h *ApproveHandler) Run(ctx context.Context, c Call) (string, error) {
	if h.Approver == nil {
		return "", errors.New("approve step: nobody to ask")
	}
	ok, err := h.Approver.Approve(ctx, Question{Kind: AskStep, Title: strings.TrimSpace(c.Question), Detail: c.Detail})
	if err != nil {
		return "", fmt.Errorf("approve step: %w", err)
	}
	if !ok {
		return "", fmt.Errorf("%q: %w", strings.TrimSpace(c.Question), ErrDeclined)
	}
	return "yes", nil
}

// PatchHandler runs patch steps: the rendered text is parsed strictly by
// app/patch (paths confined to Root), dry-run, shown for approval with its
// diff, then applied atomically. The previous content of every file is kept
// in memory as a version. The output is the changeset summary.
type PatchHandler struct {
	Root     string
	Approver Approver
	Options  patch.Options
	// Versions, when set, keeps the previous content of every changed file.
	Versions interface {
		AddVersion(memory.Version) (string, error)
	}
}

// Run applies the step's patch after approval.
func (h *PatchHandler) Run(ctx context.Context, c Call) (string, error) {
	if h.Approver == nil {
		return "", errors.New("patch step: nobody to approve the patch")
	}
	p, err := patch.Parse(c.Patch)
	if err != nil {
		return "", fmt.Errorf("patch step: %w", err)
	}
	cs, err := patch.Prepare(h.Root, p, h.Options)
	if err != nil {
		return "", fmt.Errorf("patch step: %w", err)
	}
	ok, err := h.Approver.Approve(ctx, Question{Kind: pipeline.AskApply, Title: "Apply this patch?", Detail: cs.Summary() + "\n" + cs.Diff()})
	if err != nil {
		return "", fmt.Errorf("patch step: %w", err)
	}
	if !ok {
		return "", fmt.Errorf("patch step: %w", ErrDeclined)
	}
	applied, err := patch.Apply(ctx, h.Root, p, h.Options)
	if err != nil {
		return "", fmt.Errorf("patch step: %w", err)
	}
	if h.Versions != nil {
		for _, ch := range applied.Changes {
			if ch.OldExists {
				if _, err := h.Versions.AddVersion(memory.Version{Time: time.Now(), Path: ch.Path, Content: ch.Old,
					Reason: "before workflow " + c.Workflow.ID + " step " + c.Step.ID}); err != nil {
					return applied.Summary(), fmt.Errorf("patch step: applied, but the previous version was not recorded: %w", err)
				}
			}
		}
	}
	return strings.TrimSpace(applied.Summary()), nil
}

// StandardHandlers returns the five built-in handlers wired to the given
// pieces (nil pieces leave their type failing with a clear error), plus the
// workflow handler on exec.
func StandardHandlers(exec *Executor, root string, engine models.Engine, runner runtime.Runner, approver Approver, resolve Resolver) map[string]Handler {
	return map[string]Handler{
		TypeLLM:      &LLMHandler{Engine: engine},
		TypeRun:      &RunHandler{Runner: runner, Root: root},
		TypeWorkflow: &WorkflowHandler{Exec: exec, Resolve: resolve},
		TypePatch:    &PatchHandler{Root: root, Approver: approver},
		TypeApprove:  &ApproveHandler{Approver: approver},
	}
}

// Describe is a human summary of what a workflow will do, for the approval
// before it runs: every step with its type and, for run steps, the command
// and the folder it runs in when not the project's.
func Describe(w *Workflow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %s", w.ID)
	if w.Description != "" {
		fmt.Fprintf(&b, ": %s", w.Description)
	}
	b.WriteByte('\n')
	deps := Dependencies(w)
	for _, s := range w.Steps {
		fmt.Fprintf(&b, "  %-12s %-8s", s.ID, s.Type)
		if len(s.Command.Args) > 0 {
			fmt.Fprintf(&b, " %s", strings.Join(s.Command.Args, " "))
		}
		if s.Dir != "" {
			fmt.Fprintf(&b, "  (in %s)", s.Dir)
		}
		if s.Workflow != "" {
			fmt.Fprintf(&b, " %s", s.Workflow)
		}
		if d := deps[s.ID]; len(d) > 0 {
			ds := append([]string(nil), d...)
			sort.Strings(ds)
			fmt.Fprintf(&b, "  (after %s)", strings.Join(ds, ", "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
