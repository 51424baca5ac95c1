// Package pipeline carries a user's request through Plan → Act → Verify →
// Update: it classifies the request, gathers context from the code graph,
// lets the architect role plan, the coder role write a patch (re-asked with
// the parse error when malformed), dry-runs it, asks the Approver, applies
// it, runs the gates of .codeloom/policy.yaml (syntax, static checks, tests,
// a probe run), loops through the debugger role on failure (bounded by
// max_fix_attempts, then asks for guidance), asks "Is this what you
// wanted?", and records the whole trajectory and a lesson card in memory.
package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/app/patch"
	"codeloom/models"
	"codeloom/runtime"
)

// Recorder is the part of the memory store the pipeline writes to;
// *memory.Store satisfies it.
type Recorder interface {
	AddExchange(memory.Exchange) (string, error)
	AddApproval(memory.Approval) (string, error)
	LogActivity(memory.Activity) (string, error)
	AddLesson(memory.Lesson) (string, error)
	AddVersion(memory.Version) (string, error)
	Lessons(limit int) ([]memory.Lesson, error)
}

// Indexer is the code graph the pipeline reads and re-indexes;
// *codegraph.Project satisfies it.
type Indexer interface {
	Graph() *codegraph.Graph
	UpdateFiles(ctx context.Context, paths []string) (*codegraph.Graph, error)
}

// Request kinds.
const (
	KindRun     = "run"
	KindEdit    = "edit"
	KindCreate  = "create"
	KindDebug   = "debug"
	KindExplain = "explain"
)

// Kinds lists the request kinds.
var Kinds = []string{KindRun, KindEdit, KindCreate, KindDebug, KindExplain}

// kindGrammar constrains the classifier's answer to one kind (GBNF).
const kindGrammar = `root ::= "run" | "edit" | "create" | "debug" | "explain"`

// planSchema constrains the architect's plan (JSON schema).
const planSchema = `{"type":"object","properties":{"steps":{"type":"array","items":{"type":"object","properties":{"objective":{"type":"string"},"files":{"type":"array","items":{"type":"string"}},"tests":{"type":"array","items":{"type":"string"}},"risks":{"type":"string"}},"required":["objective","files","tests","risks"]}}},"required":["steps"]}`

// Config wires a Pipeline.
type Config struct {
	Root      string        // the project folder
	Engine    models.Engine // nil: no model (classification falls back to the user; no patches)
	ModelName string        // recorded with every exchange
	Runner    runtime.Runner
	Approver  Approver // required
	Guidance  Guidance // nil: stop whenever guidance would be needed
	Memory    Recorder // nil: nothing is recorded
	Graph     Indexer  // nil: no graph context, no re-indexing
	Context   ContextSource
	Policy    *Policy // nil: loaded from <Root>/.codeloom/policy.yaml
	// MaxFixAttempts overrides the policy when > 0.
	MaxFixAttempts int
	// Kind skips classification when set.
	Kind string
	// ContextBudget is the token budget of gathered context (3000 when 0).
	ContextBudget int
	// MaxTokens bounds each patch-writing answer (1536 when 0).
	MaxTokens int
	// GenTimeout bounds each model call (5 minutes when 0).
	GenTimeout time.Duration
	// WriteTests asks the tester role for tests after the coder's first patch.
	WriteTests bool
	// Commit commits each landed patch to git (only the files it touched),
	// as the policy's git.commit setting does.
	Commit bool
	// OnEvent receives every event, synchronously.
	OnEvent func(Event)
	// Hook, when set, is called at named points of applying a patch
	// ("apply:recorded": versions kept, nothing written yet;
	// "apply:written": files written, not yet reported). Tests use it to
	// stop the process at the dangerous moments.
	Hook   func(point string)
	Logger *slog.Logger
}

// Event types.
const (
	EventStep     = "step"     // a step started (Step set)
	EventStepDone = "step-end" // a step finished (Step, OK, Elapsed)
	EventToken    = "token"    // streamed model text (Role, Text)
	EventPlan     = "plan"     // the plan (Text)
	EventPatch    = "patch"    // a dry-run patch (Changes)
	EventApplied  = "applied"  // a patch was written (Changes)
	EventGate     = "gate"     // a gate result (Gate)
	EventQuestion = "question" // a question for the user (Question)
	EventAnswer   = "answer"   // the answer (Question, OK, Text)
	EventInfo     = "info"     // a note (Text)
	EventOutcome  = "outcome"  // a cycle ended (Text = status)
)

// Event is a progress report from a running pipeline.
type Event struct {
	Type     string
	Step     string
	Role     string
	Text     string
	OK       bool
	Gate     *GateResult
	Changes  *patch.Changeset
	Question *Question
	Time     time.Time
	Elapsed  time.Duration
}

// PlanStep is one step of the architect's plan.
type PlanStep struct {
	Objective string   `json:"objective"`
	Files     []string `json:"files"`
	Tests     []string `json:"tests"`
	Risks     string   `json:"risks"`
}

// Plan is the architect's plan.
type Plan struct {
	Steps []PlanStep `json:"steps"`
	Note  string     `json:"note,omitempty"` // when the answer was not a valid plan
}

// Text renders the plan for prompts and terminals.
func (p *Plan) Text() string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	for i, s := range p.Steps {
		fmt.Fprintf(&b, "%d. %s", i+1, s.Objective)
		if len(s.Files) > 0 {
			fmt.Fprintf(&b, "\n   files: %s", strings.Join(s.Files, ", "))
		}
		if len(s.Tests) > 0 {
			fmt.Fprintf(&b, "\n   tests: %s", strings.Join(s.Tests, ", "))
		}
		if s.Risks != "" {
			fmt.Fprintf(&b, "\n   risks: %s", s.Risks)
		}
		b.WriteByte('\n')
	}
	if p.Note != "" {
		b.WriteString("(" + p.Note + ")\n")
	}
	return b.String()
}

// Cycle statuses.
const (
	StatusPassed   = "passed"   // gates passed and the user confirmed
	StatusFailed   = "failed"   // gates still fail and no guidance was given
	StatusRejected = "rejected" // the user declined a patch: nothing was changed by it
	StatusNotRun   = "not-run"  // the user declined to run the checks or the program
	StatusStopped  = "stopped"  // the user said the result is wrong and gave no direction
	StatusAnswered = "answered" // an explain request was answered
	StatusError    = "error"    // the model or the machinery failed
)

// Cycle is one request carried through the loop.
type Cycle struct {
	Request  string             `json:"request"`
	Kind     string             `json:"kind"`
	Status   string             `json:"status"`
	Attempts int                `json:"attempts"` // patches tried
	Plan     *Plan              `json:"plan,omitempty"`
	Answer   string             `json:"answer,omitempty"` // explain / run output
	Changes  []*patch.Changeset `json:"changes,omitempty"`
	Gates    []GateResult       `json:"gates,omitempty"` // of the last verification
	LessonID string             `json:"lesson_id,omitempty"`
	Note     string             `json:"note,omitempty"`
	Duration time.Duration      `json:"duration"`
}

// OK reports whether the cycle reached its goal.
func (c *Cycle) OK() bool { return c.Status == StatusPassed || c.Status == StatusAnswered }

// Outcome is what a Run did: one cycle per request (several when the user
// asked for another feature).
type Outcome struct {
	Session string   `json:"session"`
	Cycles  []*Cycle `json:"cycles"`
}

// Last returns the last cycle, or nil.
func (o *Outcome) Last() *Cycle {
	if o == nil || len(o.Cycles) == 0 {
		return nil
	}
	return o.Cycles[len(o.Cycles)-1]
}

// OK reports whether the last cycle reached its goal.
func (o *Outcome) OK() bool { c := o.Last(); return c != nil && c.OK() }

// Pipeline runs requests on one project. One Run at a time.
type Pipeline struct {
	cfg     Config
	policy  Policy
	prompts *Prompts
	runner  runtime.Runner
	log     *slog.Logger
	session string

	mu            sync.Mutex
	interjections []string
	original      string // the first request of the session
}

// New checks the configuration and returns a Pipeline with a new session ID.
func New(cfg Config) (*Pipeline, error) {
	if cfg.Approver == nil {
		return nil, errors.New("pipeline: an Approver is required")
	}
	abs, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("pipeline: project %s: %w", cfg.Root, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("pipeline: project %s: %w", cfg.Root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("pipeline: project %s is not a folder", cfg.Root)
	}
	cfg.Root = abs
	if cfg.Kind != "" && normalizeKind(cfg.Kind) == "" {
		return nil, fmt.Errorf("pipeline: unknown request kind %q (want one of %s)", cfg.Kind, strings.Join(Kinds, ", "))
	}
	p := &Pipeline{cfg: cfg, runner: cfg.Runner, log: cfg.Logger}
	if cfg.Policy != nil {
		p.policy = *cfg.Policy
	} else if p.policy, err = LoadPolicy(abs); err != nil {
		return nil, err
	}
	if p.policy.MaxFixAttempts <= 0 {
		p.policy.MaxFixAttempts = DefaultMaxFixAttempts
	}
	if p.policy.MaxReasks <= 0 {
		p.policy.MaxReasks = DefaultMaxReasks
	}
	if p.policy.Limits.MemoryMB <= 0 {
		p.policy.Limits.MemoryMB = DefaultMemoryMB
	}
	if p.policy.Limits.Procs <= 0 {
		p.policy.Limits.Procs = DefaultProcs
	}
	if cfg.MaxFixAttempts > 0 {
		p.policy.MaxFixAttempts = cfg.MaxFixAttempts
	}
	if p.runner == nil {
		p.runner = runtime.New()
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if p.prompts, err = LoadPrompts(); err != nil {
		return nil, err
	}
	if cfg.Commit {
		p.policy.Git.Commit = true
	}
	// Scratch folders of dry runs killed before they could clean up.
	if removed, err := patch.CleanStaleDryRuns(""); err != nil {
		p.log.Warn("clean stale dry-run folders", "err", err)
	} else if len(removed) > 0 {
		p.log.Info("removed stale dry-run folders", "count", len(removed))
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("pipeline: session id: %w", err)
	}
	p.session = time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(rnd[:])
	return p, nil
}

// Session returns the session ID every record of this pipeline carries.
func (p *Pipeline) Session() string { return p.session }

// Policy returns the effective policy.
func (p *Pipeline) Policy() Policy { return p.policy }

// Interject adds user guidance that the next model prompt will include. It
// may be called from any goroutine while Run is working.
func (p *Pipeline) Interject(text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	p.mu.Lock()
	p.interjections = append(p.interjections, text)
	p.mu.Unlock()
	p.emit(Event{Type: EventInfo, Text: "guidance noted: " + text})
}

func (p *Pipeline) takeInterjections() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.interjections
	p.interjections = nil
	return out
}

// emit sends an event to the callback.
func (p *Pipeline) emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if p.cfg.OnEvent != nil {
		p.cfg.OnEvent(e)
	}
}

// activity records one step in the activity log.
func (p *Pipeline) activity(action, outcome, detail string, d time.Duration) {
	if p.cfg.Memory == nil {
		return
	}
	a := memory.Activity{Module: "pipeline", Action: action, Outcome: outcome,
		Detail: "session=" + p.session + "; " + detail, Duration: d}
	if _, err := p.cfg.Memory.LogActivity(a); err != nil {
		p.log.Warn("record activity", "action", action, "err", err)
	}
}

// step wraps one named step with events and an activity record.
func (p *Pipeline) step(name string, fn func() (string, error)) error {
	start := time.Now()
	p.emit(Event{Type: EventStep, Step: name})
	detail, err := fn()
	d := time.Since(start)
	outcome := "ok"
	if err != nil {
		outcome = "error"
		detail = strings.TrimSpace(detail + " " + err.Error())
	}
	// Record first, then report: a step that was printed is in history.
	p.activity(name, outcome, detail, d)
	p.emit(Event{Type: EventStepDone, Step: name, OK: err == nil, Elapsed: d, Text: detail})
	return err
}

// hook calls the configured test hook.
func (p *Pipeline) hook(point string) {
	if p.cfg.Hook != nil {
		p.cfg.Hook(point)
	}
}

// ask puts a yes/no question to the Approver and records the answer.
func (p *Pipeline) ask(ctx context.Context, q Question) (bool, error) {
	p.emit(Event{Type: EventQuestion, Question: &q})
	ans, err := p.cfg.Approver.Approve(ctx, q)
	if err != nil {
		return false, fmt.Errorf("ask %q: %w", q.Title, err)
	}
	auto := false
	if a, ok := p.cfg.Approver.(automatic); ok {
		auto = a.Automatic()
	}
	p.emit(Event{Type: EventAnswer, Question: &q, OK: ans})
	if p.cfg.Memory != nil {
		if _, err := p.cfg.Memory.AddApproval(memory.Approval{Session: p.session, Question: q.Title,
			Detail: clipText(q.Detail, 8000), Answer: ans, Auto: auto}); err != nil {
			p.log.Warn("record approval", "err", err)
		}
	}
	return ans, nil
}

// guide asks for free text; without a Guidance it returns "" (stop).
func (p *Pipeline) guide(ctx context.Context, q Question) (string, error) {
	if p.cfg.Guidance == nil {
		p.emit(Event{Type: EventInfo, Text: q.Title + " — no one to ask: stopping"})
		return "", nil
	}
	p.emit(Event{Type: EventQuestion, Question: &q})
	ans, err := p.cfg.Guidance.Guide(ctx, q)
	if err != nil {
		return "", fmt.Errorf("ask %q: %w", q.Title, err)
	}
	ans = strings.TrimSpace(ans)
	p.emit(Event{Type: EventAnswer, Question: &q, OK: ans != "", Text: ans})
	if p.cfg.Memory != nil {
		if _, err := p.cfg.Memory.AddApproval(memory.Approval{Session: p.session, Question: q.Title,
			Detail: clipText(q.Detail, 8000) + "\nanswer: " + ans, Answer: ans != ""}); err != nil {
			p.log.Warn("record guidance", "err", err)
		}
	}
	return ans, nil
}

// generate runs one model call for a role, streaming tokens as events and
// recording the exchange.
func (p *Pipeline) generate(ctx context.Context, role string, msgs []models.Message, opts models.GenOptions) (string, error) {
	if p.cfg.Engine == nil {
		return "", errors.New("no model is loaded: load a GGUF model (--model) or an endpoint (--endpoint)")
	}
	timeout := p.cfg.GenTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	gctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	answer, err := p.cfg.Engine.Generate(gctx, msgs, opts, func(tok string) {
		p.emit(Event{Type: EventToken, Role: role, Text: tok})
	})
	d := time.Since(start)
	if p.cfg.Memory != nil {
		var prompt strings.Builder
		for _, m := range msgs {
			fmt.Fprintf(&prompt, "[%s]\n%s\n", m.Role, m.Content)
		}
		rec := memory.Exchange{Session: p.session, Role: role, Prompt: prompt.String(), Answer: answer, Model: p.cfg.ModelName, Duration: d}
		if err != nil {
			rec.Answer += "\n[error: " + err.Error() + "]"
		}
		if _, rerr := p.cfg.Memory.AddExchange(rec); rerr != nil {
			p.log.Warn("record exchange", "err", rerr)
		}
	}
	if err != nil {
		if errors.Is(gctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return answer, fmt.Errorf("%s: the model did not finish within %s: %w", role, timeout, err)
		}
		return answer, fmt.Errorf("%s: %w", role, err)
	}
	return answer, nil
}

// messages builds the system + user messages of a role.
func (p *Pipeline) messages(role, tmpl string, data promptData) ([]models.Message, error) {
	data.Role = role
	data.ProjectName = filepath.Base(p.cfg.Root)
	data.AllowOverwrite = p.policy.AllowOverwrite
	p.mu.Lock()
	data.Original = p.original
	p.mu.Unlock()
	if data.Original == "" {
		data.Original = data.Request
	}
	sys, err := p.prompts.render("system", data)
	if err != nil {
		return nil, err
	}
	user, err := p.prompts.render(tmpl, data)
	if err != nil {
		return nil, err
	}
	return []models.Message{{Role: models.RoleSystem, Content: sys}, {Role: models.RoleUser, Content: user}}, nil
}

// normalizeKind maps an answer to a request kind: the first word of the
// answer that names a kind ("edit", "It is a debug request." → "debug"),
// or "" when none does.
func normalizeKind(s string) string {
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r < 'a' || r > 'z' }) {
		for _, k := range Kinds {
			if w == k {
				return k
			}
		}
	}
	return ""
}

// Run carries request through the loop. When a cycle passes and the user
// answers yes to "Add another feature?", the Guidance is asked for the next
// request and a new cycle starts on the updated repository. The error is
// non-nil only when the machinery failed (model, store, context); a patch
// that never passes is a failed Cycle, not an error.
func (p *Pipeline) Run(ctx context.Context, request string) (*Outcome, error) {
	request = strings.TrimSpace(request)
	if request == "" {
		return nil, errors.New("pipeline: empty request")
	}
	out := &Outcome{Session: p.session}
	p.mu.Lock()
	if p.original == "" {
		p.original = request
	}
	p.mu.Unlock()
	p.activity("session", "started", "request="+clipText(request, 500), 0)
	for {
		c, err := p.cycle(ctx, request)
		out.Cycles = append(out.Cycles, c)
		if err != nil {
			return out, err
		}
		if c.Status != StatusPassed {
			return out, nil
		}
		more, err := p.ask(ctx, Question{Kind: AskNext, Title: "Add another feature?"})
		if err != nil || !more {
			return out, err
		}
		next, err := p.guide(ctx, Question{Kind: AskGuidance, Title: "What should be added next?"})
		if err != nil || next == "" {
			return out, err
		}
		request = next
	}
}
