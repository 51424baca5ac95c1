package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"codeloom/app/memory"
)

// State is the state of a step during a run.
type State string

// Step states, in the order a step may go through them.
const (
	StatePending State = "pending"
	StateRunning State = "running"
	StateDone    State = "done"
	StateFailed  State = "failed"
	StateSkipped State = "skipped" // never started: a dependency failed or the run was stopped
)

// Call is what a Handler gets to run one attempt of a step: the step as
// written, and its templates rendered over the run's values.
type Call struct {
	Workflow *Workflow
	Step     *Step
	// Vars holds every value the step can see: inputs, the outputs of its
	// dependencies and its rendered "with" values.
	Vars map[string]string
	// With holds the step's rendered "with" values only.
	With     map[string]string
	Prompt   string
	System   string
	Command  []string
	Dir      string
	Patch    string
	Question string
	Detail   string
	Attempt  int // 1 for the first attempt
	// Depth is the sub-workflow nesting depth (0 for the top workflow).
	Depth int
	// Emit reports progress text of the step (streamed tokens, output) to
	// the executor's event callback. Never nil.
	Emit func(text string)
}

// Handler runs one attempt of a step of the type it is registered for and
// returns the step's output.
type Handler interface {
	Run(ctx context.Context, call Call) (string, error)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, call Call) (string, error)

// Run calls f.
func (f HandlerFunc) Run(ctx context.Context, call Call) (string, error) { return f(ctx, call) }

// ActivityLogger records activities; *memory.Store satisfies it.
type ActivityLogger interface {
	LogActivity(memory.Activity) (string, error)
}

// Event is a state change (or progress text) of a step, for the CLI and the GUI.
type Event struct {
	Workflow string    `json:"workflow"`
	Step     string    `json:"step"` // empty for events of the whole workflow
	Type     string    `json:"type,omitempty"`
	State    State     `json:"state"`
	Attempt  int       `json:"attempt,omitempty"`
	Time     time.Time `json:"time"`
	Err      string    `json:"error,omitempty"`
	// Text is progress text (State is StateRunning) or, on StateDone, the output.
	Text  string `json:"text,omitempty"`
	Depth int    `json:"depth,omitempty"`
}

// StepResult is the record of one step of a run.
type StepResult struct {
	ID       string        `json:"id"`
	Type     string        `json:"type"`
	State    State         `json:"state"`
	Output   string        `json:"output,omitempty"`
	Err      string        `json:"error,omitempty"`
	Attempts int           `json:"attempts"`
	Start    time.Time     `json:"start"`
	End      time.Time     `json:"end"`
	Duration time.Duration `json:"duration"`
}

// Report is the outcome of a workflow run.
type Report struct {
	Workflow string            `json:"workflow"`
	Inputs   map[string]string `json:"inputs"`
	Outputs  map[string]string `json:"outputs"`
	Steps    []StepResult      `json:"steps"` // in file order
	Start    time.Time         `json:"start"`
	Duration time.Duration     `json:"duration"`
	OK       bool              `json:"ok"`
	Err      string            `json:"error,omitempty"`
}

// Step returns the result of step id.
func (r *Report) Step(id string) (StepResult, bool) {
	for _, s := range r.Steps {
		if s.ID == id {
			return s, true
		}
	}
	return StepResult{}, false
}

// StepError is the error of a failed step.
type StepError struct {
	Step string
	Err  error
}

// Error names the step and its error.
func (e *StepError) Error() string { return fmt.Sprintf("step %s: %v", e.Step, e.Err) }

// Unwrap returns the step's error.
func (e *StepError) Unwrap() error { return e.Err }

// ErrTimeout is wrapped by the error of a step attempt that ran out of time.
var ErrTimeout = errors.New("timed out")

// MaxDepth bounds sub-workflow nesting (a workflow calling itself).
const MaxDepth = 8

// Executor runs workflows. Its fields are configuration; one Executor may
// run several workflows at once.
type Executor struct {
	// Handlers maps a step type to the handler that runs it. Types not in
	// this map (besides the builtin names) fail validation.
	Handlers map[string]Handler
	// Workers bounds how many steps run at once (GOMAXPROCS when 0).
	Workers int
	// Activity, when set, records every step and every run of a workflow.
	Activity ActivityLogger
	// OnEvent, when set, receives every state change and progress text. It
	// is called from the step goroutines, one call at a time.
	OnEvent func(Event)
	// Log is the logger (slog.Default() when nil).
	Log *slog.Logger

	evMu sync.Mutex
}

// Types returns the step types with a registered handler, sorted.
func (e *Executor) Types() []string {
	out := make([]string, 0, len(e.Handlers))
	for t := range e.Handlers {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Validate validates w against the types this executor can run.
func (e *Executor) Validate(w *Workflow) error {
	if err := Validate(w, e.Types()...); err != nil {
		return err
	}
	var probs []string
	for _, s := range w.Steps {
		if e.Handlers[s.Type] == nil {
			probs = append(probs, fmt.Sprintf("step %q: no handler for type %q in this context", s.ID, s.Type))
		}
	}
	if len(probs) > 0 {
		return &ValidationError{Workflow: w.ID, Problems: probs}
	}
	return nil
}

func (e *Executor) logger() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.Default()
}

func (e *Executor) emit(ev Event) {
	if e.OnEvent == nil {
		return
	}
	e.evMu.Lock()
	defer e.evMu.Unlock()
	e.OnEvent(ev)
}

type depthKey struct{}

// WithDepth returns ctx marking a sub-workflow nesting depth; the workflow
// handler uses it so that runaway recursion is refused.
func WithDepth(ctx context.Context, depth int) context.Context {
	return context.WithValue(ctx, depthKey{}, depth)
}

// DepthOf returns the nesting depth stored in ctx (0 when none).
func DepthOf(ctx context.Context) int {
	d, _ := ctx.Value(depthKey{}).(int)
	return d
}

// Run validates w and its inputs, then runs it. Steps start as soon as
// their dependencies are done, at most Workers at a time, in file order among
// the ready ones. When a step fails (after its retries) and does not say
// continue_on_error, the run is stopped: running steps are cancelled and
// steps not started are skipped. A step whose dependency failed with
// continue_on_error still runs and sees that dependency's output as "".
// Cancelling ctx stops the run the same way. The Report is returned even when
// the run fails (nil only when validation fails); the error is the first
// failure.
func (e *Executor) Run(ctx context.Context, w *Workflow, inputs map[string]string) (*Report, error) {
	if err := e.Validate(w); err != nil {
		return nil, err
	}
	vals, err := CheckInputs(w, inputs)
	if err != nil {
		return nil, err
	}
	depth := DepthOf(ctx)
	if depth > MaxDepth {
		return nil, fmt.Errorf("workflow %s: sub-workflows nested deeper than %d", w.ID, MaxDepth)
	}
	workers := e.Workers
	if workers <= 0 {
		workers = goruntime.GOMAXPROCS(0)
	}
	deps := Dependencies(w)
	dependents := map[string][]string{}
	waiting := map[string]int{}
	index := map[string]int{}
	for i, s := range w.Steps {
		index[s.ID] = i
		waiting[s.ID] = len(deps[s.ID])
		for _, d := range deps[s.ID] {
			dependents[d] = append(dependents[d], s.ID)
		}
	}
	rep := &Report{Workflow: w.ID, Inputs: vals, Outputs: map[string]string{}, Start: time.Now()}
	rep.Steps = make([]StepResult, len(w.Steps))
	for i, s := range w.Steps {
		rep.Steps[i] = StepResult{ID: s.ID, Type: s.Type, State: StatePending}
		e.emit(Event{Workflow: w.ID, Step: s.ID, Type: s.Type, State: StatePending, Time: rep.Start, Depth: depth})
	}
	e.emit(Event{Workflow: w.ID, State: StateRunning, Time: rep.Start, Depth: depth})
	e.logger().Debug("workflow: start", "workflow", w.ID, "steps", len(w.Steps), "workers", workers)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	outputs := map[string]string{} // output name → value (guarded by the loop: only the loop writes)
	var ready []string
	for _, s := range w.Steps {
		if waiting[s.ID] == 0 {
			ready = append(ready, s.ID)
		}
	}
	type done struct {
		id  string
		res StepResult
		err error
	}
	doneCh := make(chan done)
	running := 0
	stopped := false
	var firstErr error
	for {
		for !stopped && running < workers && len(ready) > 0 {
			id := ready[0]
			ready = ready[1:]
			step := &w.Steps[index[id]]
			vars := make(map[string]string, len(vals)+len(deps[id]))
			for k, v := range vals {
				vars[k] = v
			}
			for _, d := range deps[id] {
				name := w.Steps[index[d]].OutputName()
				vars[name] = outputs[name]
			}
			running++
			rep.Steps[index[id]].State = StateRunning
			go func() {
				res, err := e.runStep(runCtx, w, step, vars, depth)
				doneCh <- done{id, res, err}
			}()
		}
		if running == 0 {
			break
		}
		d := <-doneCh
		running--
		rep.Steps[index[d.id]] = d.res
		step := &w.Steps[index[d.id]]
		if d.err == nil || step.ContinueOnError {
			if d.err == nil {
				outputs[step.OutputName()] = d.res.Output
			} else {
				outputs[step.OutputName()] = ""
			}
			for _, n := range dependents[d.id] {
				waiting[n]--
				if waiting[n] == 0 {
					ready = append(ready, n)
				}
			}
			sort.SliceStable(ready, func(i, j int) bool { return index[ready[i]] < index[ready[j]] })
			continue
		}
		if !stopped {
			stopped = true
			firstErr = d.err
			cancel()
		}
	}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = fmt.Errorf("workflow %s: stopped: %w", w.ID, ctx.Err())
	}
	end := time.Now()
	for i := range rep.Steps {
		r := &rep.Steps[i]
		if r.State == StatePending || r.State == StateRunning {
			r.State = StateSkipped
			why := "not started: the run stopped"
			if firstErr != nil {
				why = "not started: " + firstErr.Error()
			}
			r.Err = why
			e.emit(Event{Workflow: w.ID, Step: r.ID, Type: r.Type, State: StateSkipped, Time: end, Err: why, Depth: depth})
			e.record(memory.Activity{Time: end, Module: "workflow", Action: w.ID + "/" + r.ID, Outcome: string(StateSkipped), Detail: why})
		}
	}
	if firstErr == nil {
		for _, o := range w.Outputs {
			v, err := render("output "+o.Name, o.Value, mergeVars(vals, outputs))
			if err != nil {
				firstErr = fmt.Errorf("workflow %s: %w", w.ID, err)
				break
			}
			rep.Outputs[o.Name] = v
		}
	}
	rep.Duration = end.Sub(rep.Start)
	rep.OK = firstErr == nil
	outcome := "ok"
	if firstErr != nil {
		rep.Err = firstErr.Error()
		outcome = "failed"
	}
	st := StateDone
	if !rep.OK {
		st = StateFailed
	}
	e.emit(Event{Workflow: w.ID, State: st, Time: end, Err: rep.Err, Depth: depth})
	e.record(memory.Activity{Time: rep.Start, Module: "workflow", Action: "run " + w.ID, Outcome: outcome, Detail: rep.Err, Duration: rep.Duration})
	e.logger().Debug("workflow: end", "workflow", w.ID, "ok", rep.OK, "duration", rep.Duration, "err", rep.Err)
	return rep, firstErr
}

func mergeVars(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func (e *Executor) record(a memory.Activity) {
	if e.Activity == nil {
		return
	}
	if _, err := e.Activity.LogActivity(a); err != nil {
		e.logger().Warn("workflow: could not record activity", "action", a.Action, "err", err)
	}
}

// runStep renders the step's templates and runs it with retries and a
// per-attempt timeout.
func (e *Executor) runStep(ctx context.Context, w *Workflow, s *Step, vars map[string]string, depth int) (StepResult, error) {
	res := StepResult{ID: s.ID, Type: s.Type, State: StateRunning, Start: time.Now()}
	finish := func(out string, err error) (StepResult, error) {
		res.End = time.Now()
		res.Duration = res.End.Sub(res.Start)
		ev := Event{Workflow: w.ID, Step: s.ID, Type: s.Type, Attempt: res.Attempts, Time: res.End, Depth: depth}
		act := memory.Activity{Time: res.Start, Module: "workflow", Action: w.ID + "/" + s.ID, Duration: res.Duration}
		if err != nil {
			err = &StepError{Step: s.ID, Err: err}
			res.State, res.Err = StateFailed, err.Error()
			ev.State, ev.Err = StateFailed, res.Err
			act.Outcome = string(StateFailed)
			act.Detail = fmt.Sprintf("type %s, %d attempt(s): %s", s.Type, res.Attempts, res.Err)
		} else {
			res.State, res.Output = StateDone, out
			ev.State, ev.Text = StateDone, out
			act.Outcome = string(StateDone)
			act.Detail = fmt.Sprintf("type %s, %d attempt(s), %d bytes out", s.Type, res.Attempts, len(out))
		}
		e.emit(ev)
		e.record(act)
		return res, err
	}
	e.emit(Event{Workflow: w.ID, Step: s.ID, Type: s.Type, State: StateRunning, Attempt: 1, Time: res.Start, Depth: depth})
	call, err := renderCall(w, s, vars)
	if err != nil {
		return finish("", err)
	}
	call.Depth = depth
	h := e.Handlers[s.Type]
	var lastErr error
	for attempt := 1; attempt <= s.Retries+1; attempt++ {
		if err := ctx.Err(); err != nil {
			if lastErr == nil {
				// Stopped before the handler ever ran: the step was skipped.
				res.End = time.Now()
				res.State, res.Err = StateSkipped, "not started: "+err.Error()
				e.emit(Event{Workflow: w.ID, Step: s.ID, Type: s.Type, State: StateSkipped, Time: res.End, Err: res.Err, Depth: depth})
				e.record(memory.Activity{Time: res.Start, Module: "workflow", Action: w.ID + "/" + s.ID, Outcome: string(StateSkipped), Detail: res.Err})
				return res, &StepError{Step: s.ID, Err: fmt.Errorf("not started: %w", err)}
			}
			break
		}
		if attempt > 1 {
			wait := backoffWait(s.Backoff.D(), attempt-1)
			e.logger().Info("workflow: retry", "workflow", w.ID, "step", s.ID, "attempt", attempt, "after", wait, "err", lastErr)
			e.emit(Event{Workflow: w.ID, Step: s.ID, Type: s.Type, State: StateRunning, Attempt: attempt, Time: time.Now(),
				Err: lastErr.Error(), Text: fmt.Sprintf("retry %d/%d in %s", attempt-1, s.Retries, wait), Depth: depth})
			if wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return finish("", fmt.Errorf("canceled while waiting to retry (last error: %v): %w", lastErr, ctx.Err()))
				case <-t.C:
				}
			}
		}
		res.Attempts = attempt
		call.Attempt = attempt
		out, err := e.attempt(ctx, w, s, h, call, depth)
		if err == nil {
			return finish(out, nil)
		}
		lastErr = err
		if ctx.Err() != nil {
			break // cancelled from outside: do not retry
		}
	}
	return finish("", lastErr)
}

// backoffWait is the wait before retry n (1 for the first): base·2^(n-1),
// saturating instead of overflowing for long retry chains.
func backoffWait(base time.Duration, n int) time.Duration {
	if base <= 0 || n < 1 {
		return 0
	}
	for i := 1; i < n; i++ {
		if base > math.MaxInt64/2 {
			return math.MaxInt64
		}
		base *= 2
	}
	return base
}

func (e *Executor) attempt(ctx context.Context, w *Workflow, s *Step, h Handler, call Call, depth int) (out string, err error) {
	actx := ctx
	var cancel context.CancelFunc
	if s.Timeout > 0 {
		actx, cancel = context.WithTimeoutCause(ctx, s.Timeout.D(), fmt.Errorf("step %s: %w after %s", s.ID, ErrTimeout, s.Timeout.D()))
		defer cancel()
	}
	actx = WithDepth(actx, depth)
	call.Emit = func(text string) {
		e.emit(Event{Workflow: w.ID, Step: s.ID, Type: s.Type, State: StateRunning, Attempt: call.Attempt, Time: time.Now(), Text: text, Depth: depth})
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler for %s panicked: %v", s.Type, p)
		}
	}()
	out, err = h.Run(actx, call)
	if err != nil && ctx.Err() == nil && actx.Err() != nil && errors.Is(context.Cause(actx), ErrTimeout) {
		if !errors.Is(err, ErrTimeout) {
			err = fmt.Errorf("%w after %s: %v", ErrTimeout, s.Timeout.D(), err)
		}
	}
	return out, err
}

// renderCall renders every template of s over vars.
func renderCall(w *Workflow, s *Step, vars map[string]string) (Call, error) {
	call := Call{Workflow: w, Step: s, Vars: vars, With: map[string]string{}}
	keys := make([]string, 0, len(s.With))
	for k := range s.With {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := render("with."+k, s.With[k], vars)
		if err != nil {
			return call, err
		}
		call.With[k] = v
	}
	all := mergeVars(vars, call.With)
	call.Vars = all
	var err error
	r := func(name, text string) string {
		if err != nil {
			return ""
		}
		var out string
		out, err = render(name, text, all)
		return out
	}
	call.Prompt = r("prompt", s.Prompt)
	call.System = r("system", s.System)
	call.Patch = r("patch", s.Patch)
	call.Question = r("question", s.Question)
	call.Detail = r("detail", s.Detail)
	call.Dir = r("dir", s.Dir)
	for i, a := range s.Command.Args {
		call.Command = append(call.Command, r(fmt.Sprintf("command[%d]", i), a))
	}
	if err != nil {
		return call, err
	}
	if len(call.Command) > 0 && strings.TrimSpace(call.Command[0]) == "" {
		return call, fmt.Errorf("command: program name is empty after rendering")
	}
	return call, nil
}
