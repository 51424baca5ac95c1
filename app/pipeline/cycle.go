package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"codeloom/app/memory"
	"codeloom/app/patch"
	"codeloom/models"
)

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
	if models.IsIncomplete(err) {
		return &Plan{Steps: []PlanStep{{Objective: request}}, Note: "the architect's plan was cut off (" + err.Error() + "); using the request as the only step"}, nil
	}
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
		data, err := patch.ReadRegular(abs, patch.MaxFileSize) // never a FIFO or device
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
