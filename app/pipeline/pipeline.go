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
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
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
	// OnEvent receives every event, synchronously.
	OnEvent func(Event)
	Logger  *slog.Logger
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
	p.emit(Event{Type: EventStepDone, Step: name, OK: err == nil, Elapsed: d, Text: detail})
	p.activity(name, outcome, detail, d)
	return err
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

// normalizeKind maps an answer to a request kind, or "".
func normalizeKind(s string) string {
	f := strings.Fields(strings.ToLower(strings.Trim(strings.TrimSpace(s), "\"'`.:")))
	if len(f) == 0 {
		return ""
	}
	w := strings.Trim(f[0], "\"'`.:,")
	for _, k := range Kinds {
		if w == k {
			return k
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

// cycleState is what one cycle carries between steps.
type cycleState struct {
	c           *Cycle
	contextText string
	lessons     []memory.Lesson
	guidance    []string
	failure     *GateResult
	lastDiff    string
	firstFail   string
	original    map[string][]byte // content before the cycle, per changed file (nil = did not exist)
	origExists  map[string]bool
	changed     []string // files changed in this cycle, first-seen order
}

func (st *cycleState) noteChanges(cs *patch.Changeset) {
	for _, ch := range cs.Changes {
		if _, ok := st.origExists[ch.Path]; !ok {
			st.origExists[ch.Path] = ch.OldExists
			st.original[ch.Path] = ch.Old
			st.changed = append(st.changed, ch.Path)
		}
	}
}

// cycle runs one request through the loop.
func (p *Pipeline) cycle(ctx context.Context, request string) (*Cycle, error) {
	start := time.Now()
	c := &Cycle{Request: request}
	st := &cycleState{c: c, original: map[string][]byte{}, origExists: map[string]bool{}}
	defer func() {
		c.Duration = time.Since(start)
		p.activity("cycle", c.Status, fmt.Sprintf("kind=%s attempts=%d request=%s", c.Kind, c.Attempts, clipText(request, 300)), c.Duration)
		p.emit(Event{Type: EventOutcome, Text: c.Status, OK: c.OK(), Elapsed: c.Duration})
	}()
	fail := func(err error) (*Cycle, error) {
		c.Status = StatusError
		c.Note = err.Error()
		return c, err
	}

	if err := p.step("classify", func() (string, error) {
		k, err := p.classify(ctx, request)
		c.Kind = k
		return "kind=" + k, err
	}); err != nil {
		return fail(err)
	}
	if err := p.step("gather", func() (string, error) {
		budget := p.cfg.ContextBudget
		if budget <= 0 {
			budget = 3000
		}
		if n := p.contextLength(); n > 0 {
			budget = min(budget, n/4)
		}
		src := p.cfg.Context
		if src == nil && p.cfg.Graph != nil {
			src = RetrievalContext{Graph: p.cfg.Graph.Graph, Engine: p.cfg.Engine}
		}
		if src != nil {
			text, err := src.Gather(ctx, request, budget)
			if err != nil {
				return "", err
			}
			st.contextText = text
		}
		if p.cfg.Memory != nil {
			all, err := p.cfg.Memory.Lessons(500)
			if err != nil {
				p.log.Warn("read lessons", "err", err)
			}
			st.lessons = relevantLessons(all, request, 3)
		}
		return fmt.Sprintf("%d bytes of code, %d lessons", len(st.contextText), len(st.lessons)), nil
	}); err != nil {
		return fail(err)
	}

	switch c.Kind {
	case KindExplain:
		err := p.step("explain", func() (string, error) {
			msgs, err := p.messages(RoleArchitect, "explain", promptData{Request: request, Context: st.contextText, Lessons: st.lessons})
			if err != nil {
				return "", err
			}
			ans, err := p.generate(ctx, RoleArchitect, msgs, models.GenOptions{MaxTokens: p.maxTokens()})
			c.Answer = ans
			return "", err
		})
		if err != nil {
			return fail(err)
		}
		c.Status = StatusAnswered
		return c, nil
	case KindRun:
		return p.runProgram(ctx, c)
	}

	if err := p.step("plan", func() (string, error) {
		plan, err := p.plan(ctx, request, st)
		c.Plan = plan
		if err == nil {
			p.emit(Event{Type: EventPlan, Text: plan.Text()})
		}
		return fmt.Sprintf("%d steps", len(plan.Steps)), err
	}); err != nil {
		return fail(err)
	}

	if c.Kind == KindDebug {
		// Reproduce the failure first so the debugger sees it.
		gates, passed, err := p.verify(ctx, nil)
		if errors.Is(err, errDeclined) {
			c.Status = StatusNotRun
			return c, nil
		}
		if err != nil {
			return fail(err)
		}
		if !passed {
			st.failure = firstFailed(gates)
			st.firstFail = failureSummary(st.failure)
		}
	}
	return p.loop(ctx, st)
}

func (p *Pipeline) maxTokens() int {
	if p.cfg.MaxTokens > 0 {
		return p.cfg.MaxTokens
	}
	return 1536
}

// classify decides the request kind: the model with a grammar-constrained
// one-word answer, else the user picks, else "edit".
func (p *Pipeline) classify(ctx context.Context, request string) (string, error) {
	if p.cfg.Kind != "" {
		return normalizeKind(p.cfg.Kind), nil
	}
	if p.cfg.Engine != nil {
		msgs, err := p.messages(RoleArchitect, "classify", promptData{Request: request})
		if err != nil {
			return "", err
		}
		ans, err := p.generate(ctx, RoleArchitect, msgs, models.GenOptions{MaxTokens: 8, Grammar: kindGrammar})
		if err != nil {
			if ctx.Err() != nil {
				return "", err
			}
			p.emit(Event{Type: EventInfo, Text: "the model could not classify the request: " + err.Error()})
		} else if k := normalizeKind(ans); k != "" {
			return k, nil
		} else {
			p.emit(Event{Type: EventInfo, Text: fmt.Sprintf("the model answered %q, not a request kind", clipText(ans, 80))})
		}
	}
	ans, err := p.guide(ctx, Question{Kind: AskKind, Title: "What kind of request is this? (run, edit, create, debug, explain)", Detail: request})
	if err != nil {
		return "", err
	}
	if k := normalizeKind(ans); k != "" {
		return k, nil
	}
	p.emit(Event{Type: EventInfo, Text: "no request kind chosen: treating it as an edit"})
	return KindEdit, nil
}

// plan asks the architect for a JSON plan. An answer that is not a valid
// plan becomes a one-step plan with a note (the coder still gets the raw
// text through the request).
func (p *Pipeline) plan(ctx context.Context, request string, st *cycleState) (*Plan, error) {
	msgs, err := p.messages(RoleArchitect, "architect", promptData{Request: request, Context: st.contextText, Lessons: st.lessons})
	if err != nil {
		return nil, err
	}
	ans, err := p.generate(ctx, RoleArchitect, msgs, models.GenOptions{MaxTokens: 768, JSONSchema: planSchema})
	if err != nil {
		return &Plan{}, err
	}
	plan := &Plan{}
	raw := ans
	if i, j := strings.Index(raw, "{"), strings.LastIndex(raw, "}"); i >= 0 && j > i {
		raw = raw[i : j+1]
	}
	if err := json.Unmarshal([]byte(raw), plan); err != nil || len(plan.Steps) == 0 {
		return &Plan{Steps: []PlanStep{{Objective: request}}, Note: "the architect's answer was not a JSON plan; using the request as the only step"}, nil
	}
	for i := range plan.Steps {
		var files []string
		for _, f := range plan.Steps[i].Files {
			if _, clean, err := patch.Confine(p.cfg.Root, f); err == nil {
				files = append(files, clean)
			}
		}
		plan.Steps[i].Files = files
	}
	return plan, nil
}

// filesInPlay returns the current content of the files a prompt should show
// exactly: those changed in this cycle, then those the plan names, within
// a byte budget.
func (p *Pipeline) filesInPlay(st *cycleState) []fileView {
	var paths []string
	seen := map[string]bool{}
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			paths = append(paths, f)
		}
	}
	for _, f := range st.changed {
		add(f)
	}
	if st.failure != nil {
		for _, fr := range ParseFrames(p.cfg.Root, st.failure.Output, 8) {
			add(fr.Path)
		}
	}
	if st.c.Plan != nil {
		for _, s := range st.c.Plan.Steps {
			for _, f := range s.Files {
				add(f)
			}
		}
	}
	budget := 6000 // tokens
	if n := p.contextLength(); n > 0 {
		budget = min(budget, n/3)
	}
	var out []fileView
	for _, f := range paths {
		abs, _, err := patch.Confine(p.cfg.Root, f)
		if err != nil {
			continue
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			continue
		}
		cost := len(data) / 4
		if p.cfg.Engine != nil {
			cost = models.CountTokens(p.cfg.Engine, string(data))
		}
		if cost > budget {
			continue
		}
		budget -= cost
		out = append(out, fileView{Path: f, Content: string(data)})
	}
	return out
}

// contextLength is the engine's context size in tokens, or 0 when unknown.
func (p *Pipeline) contextLength() int {
	if cl, ok := p.cfg.Engine.(interface{ ContextLength() int }); ok {
		return cl.ContextLength()
	}
	return 0
}

// unusableError is a model answer that never became a clean patch.
type unusableError struct{ err error }

func (e *unusableError) Error() string { return "no usable patch: " + e.err.Error() }
func (e *unusableError) Unwrap() error { return e.err }

// applyFailed is a patch that passed its dry run but could not be applied
// (the files changed in between); nothing was written.
type applyFailed struct{ err error }

func (e *applyFailed) Error() string { return "the patch no longer applies: " + e.err.Error() }
func (e *applyFailed) Unwrap() error { return e.err }

// errDeclined is returned when the user declines to run something.
var errDeclined = errors.New("the user declined to run it")

// propose asks role for a patch, re-asking with the parse or dry-run error
// (bounded by max_reasks), and returns the parsed patch and its dry run.
func (p *Pipeline) propose(ctx context.Context, role, tmpl string, st *cycleState) (*patch.Patch, *patch.Changeset, error) {
	data := promptData{
		Request:       st.c.Request,
		Plan:          st.c.Plan.Text(),
		Context:       st.contextText,
		Lessons:       st.lessons,
		Files:         p.filesInPlay(st),
		Guidance:      st.guidance,
		PreviousPatch: clipText(st.lastDiff, 6000),
	}
	if st.failure != nil {
		data.Failure = failureView{Gate: st.failure.Name, Command: strings.Join(st.failure.Command, " "), Output: clipText(st.failure.Output, 6000)}
		frames := ParseFrames(p.cfg.Root, st.failure.Output, 8)
		if p.cfg.Graph != nil {
			frames = MapFrames(p.cfg.Graph.Graph(), frames, 3000)
		}
		data.Frames = frames
		if len(frames) > 0 {
			var names []string
			for _, f := range frames {
				if f.NodeName != "" {
					names = append(names, fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.NodeName))
				}
			}
			if len(names) > 0 {
				p.emit(Event{Type: EventInfo, Text: "traceback frames: " + strings.Join(names, ", ")})
			}
		}
	}
	msgs, err := p.messages(role, tmpl, data)
	if err != nil {
		return nil, nil, err
	}
	for try := 0; ; try++ {
		ans, err := p.generate(ctx, role, msgs, models.GenOptions{MaxTokens: p.maxTokens()})
		if err != nil {
			return nil, nil, err
		}
		pt, perr := patch.Parse(ans)
		var cs *patch.Changeset
		if perr == nil {
			cs, perr = p.dryRun(ctx, pt)
		}
		if perr == nil {
			return pt, cs, nil
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		p.emit(Event{Type: EventInfo, Role: role, Text: "patch not usable: " + perr.Error()})
		p.activity("patch", "rejected", fmt.Sprintf("role=%s try=%d: %s", role, try+1, clipText(perr.Error(), 1000)), 0)
		if try >= p.policy.MaxReasks {
			return nil, cs, &unusableError{perr}
		}
		reask, err := p.prompts.render("reask", promptData{Error: perr.Error()})
		if err != nil {
			return nil, nil, err
		}
		msgs = append(msgs, models.Message{Role: models.RoleAssistant, Content: ans}, models.Message{Role: models.RoleUser, Content: reask})
	}
}

// applyPatch shows a clean dry run, asks, applies, records versions and
// re-indexes. It returns ok=false when the user declined.
func (p *Pipeline) applyPatch(ctx context.Context, st *cycleState, pt *patch.Patch, dry *patch.Changeset, role string) (bool, error) {
	p.emit(Event{Type: EventPatch, Role: role, Changes: dry})
	yes, err := p.ask(ctx, Question{Kind: AskApply, Title: "Apply this patch?", Detail: dry.Summary() + "\n" + dry.Diff()})
	if err != nil || !yes {
		return false, err
	}
	var before *codegraph.Graph
	if p.cfg.Graph != nil {
		before = p.cfg.Graph.Graph()
	}
	var applied *patch.Changeset
	err = p.step("apply", func() (string, error) {
		var err error
		applied, err = patch.Apply(ctx, p.cfg.Root, pt, patch.Options{})
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(applied.Summary()), nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return true, err
		}
		return true, &applyFailed{err}
	}
	st.c.Changes = append(st.c.Changes, applied)
	st.noteChanges(applied)
	st.lastDiff = applied.Diff()
	p.emit(Event{Type: EventApplied, Role: role, Changes: applied})
	if p.cfg.Memory != nil {
		for _, ch := range applied.Changes {
			v := memory.Version{Path: ch.Path, Content: ch.Old,
				Reason: fmt.Sprintf("before %s patch (%s) in session %s", role, ch.Action, p.session)}
			if p.cfg.Graph != nil && ch.OldExists {
				if n, ok := p.cfg.Graph.Graph().FileNode(ch.Path); ok {
					v.NodeID, v.NodeName = n.ID, n.QualName
				}
			}
			if _, err := p.cfg.Memory.AddVersion(v); err != nil {
				return true, fmt.Errorf("record previous version of %s: %w", ch.Path, err)
			}
		}
	}
	if p.cfg.Graph != nil {
		var paths []string
		for _, ch := range applied.Changes {
			paths = append(paths, ch.Path)
		}
		if err := p.step("reindex", func() (string, error) {
			g, err := p.cfg.Graph.UpdateFiles(ctx, paths)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d files, graph has %d nodes", len(paths), len(g.Nodes())), nil
		}); err != nil {
			p.log.Warn("re-index after patch", "err", err)
		} else if p.cfg.Memory != nil && before != nil {
			reason := fmt.Sprintf("%sbefore %s patch in session %s", NodeVersionPrefix, role, p.session)
			for _, ch := range applied.Changes {
				for _, v := range nodeVersions(before, p.cfg.Graph.Graph(), ch, reason) {
					if _, err := p.cfg.Memory.AddVersion(v); err != nil {
						return true, fmt.Errorf("record previous version of %s: %w", v.NodeName, err)
					}
				}
			}
		}
	}
	return true, nil
}

// verify asks to run the gates, runs them in order and stops at the first
// failure.
func (p *Pipeline) verify(ctx context.Context, changed []string) ([]GateResult, bool, error) {
	specs := p.planGates(ctx, changed)
	var detail strings.Builder
	runs := 0
	for _, s := range specs {
		if len(s.commands) == 0 {
			fmt.Fprintf(&detail, "  %-7s skipped: %s\n", s.name, s.note)
			continue
		}
		for _, cmd := range s.commands {
			runs++
			fmt.Fprintf(&detail, "  %-7s %s\n", s.name, strings.Join(cmd, " "))
		}
		fmt.Fprintf(&detail, "          limits: timeout %s, memory %d MB, %d processes\n", s.timeout, p.policy.Limits.MemoryMB, p.policy.Limits.Procs)
	}
	if runs > 0 {
		yes, err := p.ask(ctx, Question{Kind: AskRun, Title: "Run these checks?", Detail: "In " + p.cfg.Root + ":\n" + detail.String()})
		if err != nil {
			return nil, false, err
		}
		if !yes {
			return nil, false, errDeclined
		}
	}
	var results []GateResult
	passed := true
	err := p.step("verify", func() (string, error) {
		for _, s := range specs {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			var g GateResult
			if !passed {
				g = GateResult{Name: s.name, Status: GateSkipped, Note: "an earlier gate failed"}
			} else {
				start := time.Now()
				g = p.runGate(ctx, s)
				p.activity("gate:"+s.name, g.Status, g.Line(), time.Since(start))
			}
			results = append(results, g)
			p.emit(Event{Type: EventGate, Gate: &g, OK: g.Status != GateFailed})
			if g.Status == GateFailed {
				passed = false
			}
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if passed {
			return "all gates passed", nil
		}
		return "a gate failed", nil
	})
	return results, passed, err
}

func firstFailed(gates []GateResult) *GateResult {
	for i := range gates {
		if gates[i].Status == GateFailed {
			g := gates[i]
			return &g
		}
	}
	return nil
}

// failureSummary condenses a failed gate for a lesson card.
func failureSummary(g *GateResult) string {
	if g == nil {
		return ""
	}
	var keep []string
	for _, l := range strings.Split(g.Output, "\n") {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if strings.Contains(t, "Error") || strings.HasPrefix(t, "FAIL") || strings.Contains(t, "assert") ||
			strings.HasPrefix(t, "E ") || strings.Contains(t, "panic") || strings.Contains(t, "not usable") {
			keep = append(keep, t)
		}
		if len(keep) >= 4 {
			break
		}
	}
	s := g.Name + " failed"
	if len(keep) > 0 {
		s += ": " + strings.Join(keep, " | ")
	} else if g.Output != "" {
		s += ": " + clipText(strings.TrimSpace(g.Output), 300)
	}
	return clipText(s, 800)
}

// loop is Act → Approve → Apply → Verify → Debug, then Confirm.
func (p *Pipeline) loop(ctx context.Context, st *cycleState) (*Cycle, error) {
	c := st.c
	failed := 0 // failed attempts since the last guidance
	for {
		if err := ctx.Err(); err != nil {
			c.Status = StatusError
			c.Note = err.Error()
			return c, err
		}
		st.guidance = append(st.guidance, p.takeInterjections()...)
		role, tmpl := RoleCoder, "coder"
		if st.failure != nil {
			role, tmpl = RoleDebugger, "debugger"
		}
		c.Attempts++
		var pt *patch.Patch
		var dry *patch.Changeset
		err := p.step("act", func() (string, error) {
			var err error
			pt, dry, err = p.propose(ctx, role, tmpl, st)
			if err != nil {
				return "role=" + role, err
			}
			return "role=" + role + ": " + strings.TrimSpace(dry.Summary()), nil
		})
		var unusable *unusableError
		switch {
		case errors.As(err, &unusable):
			st.failure = &GateResult{Name: "patch", Status: GateFailed, Output: unusable.Error()}
		case err != nil:
			c.Status = StatusError
			c.Note = err.Error()
			p.writeLesson(st, false)
			return c, err
		default:
			ok, err := p.applyPatch(ctx, st, pt, dry, role)
			var af *applyFailed
			if errors.As(err, &af) {
				// The files changed between the dry run and applying:
				// nothing was written; the model gets the reason.
				st.failure = &GateResult{Name: "patch", Status: GateFailed, Output: af.Error()}
				break
			}
			if err != nil {
				c.Status = StatusError
				c.Note = err.Error()
				return c, err
			}
			if !ok {
				c.Status = StatusRejected
				c.Note = "the user declined the patch; nothing was changed by it"
				return c, nil
			}
			if p.cfg.WriteTests && role == RoleCoder && failed == 0 && len(c.Changes) == 1 {
				if err := p.writeTests(ctx, st); err != nil {
					c.Status = StatusError
					c.Note = err.Error()
					return c, err
				}
			}
			gates, passed, err := p.verify(ctx, st.changed)
			if errors.Is(err, errDeclined) {
				c.Status = StatusNotRun
				c.Note = "the user declined to run the checks; the patch stays applied"
				return c, nil
			}
			if err != nil {
				c.Status = StatusError
				c.Note = err.Error()
				return c, err
			}
			c.Gates = gates
			if passed {
				var gl []string
				for _, g := range gates {
					gl = append(gl, g.Line())
				}
				yes, err := p.ask(ctx, Question{Kind: AskConfirm, Title: "Is this what you wanted?",
					Detail: p.overallSummary(st) + "\n" + strings.Join(gl, "\n")})
				if err != nil {
					c.Status = StatusError
					c.Note = err.Error()
					return c, err
				}
				if yes {
					c.Status = StatusPassed
					if err := p.step("update", func() (string, error) { return p.writeLesson(st, true), nil }); err != nil {
						return c, err
					}
					return c, nil
				}
				what, err := p.guide(ctx, Question{Kind: AskGuidance, Title: "What is wrong? (empty to stop)"})
				if err != nil {
					c.Status = StatusError
					c.Note = err.Error()
					return c, err
				}
				if what == "" {
					c.Status = StatusStopped
					c.Note = "the user said the result is not what they wanted"
					return c, nil
				}
				st.guidance = append(st.guidance, what)
				st.failure = &GateResult{Name: "user review", Status: GateFailed, Output: what}
				continue
			}
			st.failure = firstFailed(gates)
		}
		if st.firstFail == "" {
			st.firstFail = failureSummary(st.failure)
		}
		failed++
		if failed >= p.policy.MaxFixAttempts {
			g, err := p.guide(ctx, Question{Kind: AskGuidance,
				Title:  fmt.Sprintf("%d fix attempts did not pass the checks. Guidance for the next attempt? (empty to stop)", failed),
				Detail: failureSummary(st.failure)})
			if err != nil {
				c.Status = StatusError
				c.Note = err.Error()
				return c, err
			}
			if g == "" {
				c.Status = StatusFailed
				c.Note = fmt.Sprintf("stopped after %d attempts: %s", c.Attempts, failureSummary(st.failure))
				p.step("update", func() (string, error) { return p.writeLesson(st, false), nil })
				return c, nil
			}
			st.guidance = append(st.guidance, g)
			failed = 0
		}
	}
}

// writeTests asks the tester role for tests of the first patch and applies
// them after approval. An unusable answer is noted, not fatal.
func (p *Pipeline) writeTests(ctx context.Context, st *cycleState) error {
	var pt *patch.Patch
	var dry *patch.Changeset
	err := p.step("tests", func() (string, error) {
		var err error
		pt, dry, err = p.propose(ctx, RoleTester, "tester", st)
		return "", err
	})
	var unusable *unusableError
	if errors.As(err, &unusable) {
		p.emit(Event{Type: EventInfo, Role: RoleTester, Text: "no tests added: " + unusable.Error()})
		return nil
	}
	if err != nil {
		return err
	}
	_, err = p.applyPatch(ctx, st, pt, dry, RoleTester)
	return err
}

// overallSummary describes the cycle's net change per file.
func (p *Pipeline) overallSummary(st *cycleState) string {
	var b strings.Builder
	for _, f := range st.changed {
		abs, _, err := patch.Confine(p.cfg.Root, f)
		if err != nil {
			continue
		}
		data, rerr := os.ReadFile(abs)
		exists := rerr == nil
		_, add, del := patch.UnifiedDiff(f, string(st.original[f]), string(data), st.origExists[f], exists)
		action := patch.ActionModify
		switch {
		case !st.origExists[f] && exists:
			action = patch.ActionCreate
		case st.origExists[f] && !exists:
			action = patch.ActionDelete
		}
		fmt.Fprintf(&b, "%s %s +%d -%d\n", action, f, add, del)
	}
	return b.String()
}

// compactDiff keeps the changed lines of a diff, at most n.
func compactDiff(d string, n int) string {
	var keep []string
	for _, l := range strings.Split(d, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
			keep = append(keep, l)
		} else if strings.HasPrefix(l, "+++ ") {
			keep = append(keep, strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")+":")
		}
		if len(keep) >= n {
			keep = append(keep, "…")
			break
		}
	}
	return strings.Join(keep, "\n")
}

// writeLesson stores the lesson card of the cycle and returns a detail line.
func (p *Pipeline) writeLesson(st *cycleState, passed bool) string {
	c := st.c
	if p.cfg.Memory == nil || len(c.Changes) == 0 && st.firstFail == "" {
		return "no lesson"
	}
	tags := []string{c.Kind}
	if !passed {
		tags = append(tags, "unresolved")
	}
	if st.firstFail != "" {
		tags = append(tags, strings.Fields(st.firstFail)[0])
	}
	tags = append(tags, st.changed...)
	sort.Strings(tags[1:])
	fix := ""
	if passed && len(c.Changes) > 0 {
		last := c.Changes[len(c.Changes)-1]
		fix = fmt.Sprintf("attempt %d passed all gates with:\n%s", c.Attempts, compactDiff(last.Diff(), 12))
	}
	l := memory.Lesson{Task: c.Request, Failure: st.firstFail, Fix: fix,
		DiffSummary: strings.TrimSpace(p.overallSummary(st)), Tags: tags}
	id, err := p.cfg.Memory.AddLesson(l)
	if err != nil {
		p.log.Warn("record lesson", "err", err)
		return "lesson not recorded: " + err.Error()
	}
	c.LessonID = id
	return "lesson " + id
}

// runProgram handles a "run" request: the probe command (policy or
// detected), after "Run this?".
func (p *Pipeline) runProgram(ctx context.Context, c *Cycle) (*Cycle, error) {
	specs := p.planGates(ctx, nil)
	var probe gateSpec
	for _, s := range specs {
		if s.name == GateProbe {
			probe = s
		}
	}
	if len(probe.commands) == 0 {
		c.Status = StatusFailed
		c.Note = "nothing to run: " + probe.note
		return c, nil
	}
	var detail strings.Builder
	for _, cmd := range probe.commands {
		fmt.Fprintf(&detail, "%s\n", strings.Join(cmd, " "))
	}
	fmt.Fprintf(&detail, "in %s, limits: timeout %s, memory %d MB, %d processes", p.cfg.Root, probe.timeout, p.policy.Limits.MemoryMB, p.policy.Limits.Procs)
	yes, err := p.ask(ctx, Question{Kind: AskRun, Title: "Run this?", Detail: detail.String()})
	if err != nil {
		c.Status = StatusError
		return c, err
	}
	if !yes {
		c.Status = StatusNotRun
		return c, nil
	}
	var g GateResult
	p.step("run", func() (string, error) {
		g = p.runGate(ctx, probe)
		return g.Line(), nil
	})
	p.emit(Event{Type: EventGate, Gate: &g, OK: g.Status == GatePassed})
	c.Gates = []GateResult{g}
	c.Answer = g.Output
	if g.Status == GatePassed {
		c.Status = StatusAnswered
	} else {
		c.Status = StatusFailed
	}
	return c, nil
}

// dryRun applies the patch to a scratch copy of the files it touches and
// compiles the Python files it produces there (py_compile only parses and
// byte-compiles; nothing is executed), so only a patch that applies and
// compiles is offered for approval.
func (p *Pipeline) dryRun(ctx context.Context, pt *patch.Patch) (*patch.Changeset, error) {
	scratch, err := os.MkdirTemp("", "codeloom-dryrun-*")
	if err != nil {
		return nil, fmt.Errorf("dry run: %w", err)
	}
	defer os.RemoveAll(scratch)
	for _, rel := range pt.Paths() {
		abs, clean, err := patch.Confine(p.cfg.Root, rel)
		if err != nil {
			continue // Prepare reports it
		}
		if data, err := os.ReadFile(abs); err == nil {
			fi, _ := os.Stat(abs)
			if err := patch.WriteFile(scratch, clean, data, fi.Mode().Perm()); err != nil {
				return nil, fmt.Errorf("dry run: copy %s: %w", clean, err)
			}
		}
	}
	cs, err := patch.DryRun(ctx, p.cfg.Root, scratch, pt, patch.Options{})
	if err != nil {
		return cs, err
	}
	var pyFiles []string
	for _, ch := range cs.Changes {
		if ch.NewExists && strings.HasSuffix(ch.Path, ".py") {
			pyFiles = append(pyFiles, ch.Path)
		}
	}
	if len(pyFiles) == 0 {
		return cs, nil
	}
	py, err := runtime.FindPython(p.cfg.Root)
	if err != nil {
		return cs, nil // the syntax gate will say so after applying
	}
	res, err := p.runner.Run(ctx, runtime.Spec{
		Command: append([]string{py, "-m", "py_compile"}, pyFiles...), Dir: scratch,
		Timeout: time.Minute, OutputCap: 64 << 10, Origin: "dry-run:syntax", SampleEvery: -1,
	})
	if err != nil {
		return cs, fmt.Errorf("dry run: compile check: %w", err)
	}
	if !res.OK() {
		out := strings.ReplaceAll(string(res.Stderr)+string(res.Stdout), scratch+string(filepath.Separator), "")
		return cs, fmt.Errorf("the patched code does not compile:\n%s", clipText(strings.TrimSpace(out), 2000))
	}
	return cs, nil
}
