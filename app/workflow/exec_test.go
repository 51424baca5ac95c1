package workflow

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"codeloom/app/memory"
)

func mustParse(t *testing.T, src string) *Workflow {
	t.Helper()
	w, err := Parse([]byte(src), "test.yaml")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return w
}

// echo is a fake llm handler: its output is the rendered prompt.
var echo = HandlerFunc(func(ctx context.Context, c Call) (string, error) { return c.Prompt, nil })

func TestValidationErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"unknown dependency", `
id: w
steps:
  - {id: a, type: llm, prompt: hi, depends_on: [nope]}
`, []string{`step "a" depends on unknown step "nope"`}},
		{"cycle named", `
id: w
steps:
  - {id: a, type: llm, prompt: "{{.c}}"}
  - {id: b, type: llm, prompt: hi, depends_on: [a]}
  - {id: c, type: llm, prompt: hi, depends_on: [b]}
`, []string{"dependency cycle: a → b → c → a"}},
		{"unknown reference", `
id: w
inputs: [{name: x}]
steps:
  - {id: a, type: llm, prompt: "{{.x}} {{.y}}"}
`, []string{"refers to {{.y}}, which is no input and no step output"}},
		{"unknown type", `
id: w
steps:
  - {id: a, type: shell, command: ls}
`, []string{`step "a": unknown type "shell"`}},
		{"duplicate id", `
id: w
steps:
  - {id: a, type: run, command: ls}
  - {id: a, type: run, command: ls}
`, []string{`duplicate step id "a"`}},
		{"missing fields", `
id: w
steps:
  - {id: a, type: llm}
  - {id: b, type: run}
  - {id: c, type: approve}
  - {id: d, type: workflow}
  - {id: e, type: patch}
`, []string{"llm step needs a prompt", "run step needs a command", "approve step needs a question", "workflow step needs", "patch step needs"}},
		{"bad template", `
id: w
steps:
  - {id: a, type: llm, prompt: "{{.x"}
`, []string{`step "a": prompt: template:`}},
		{"self dependency and no id", `
steps:
  - {id: a, type: llm, prompt: x, depends_on: [a]}
`, []string{"missing id", `step "a" depends on itself`}},
		{"output clash", `
id: w
inputs: [{name: a}]
steps:
  - {id: a, type: llm, prompt: x}
`, []string{`output "a" has the name of an input`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := mustParse(t, c.src)
			err := Validate(w)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want ValidationError, got %v", err)
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\ndoes not mention %q", err, want)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	if _, err := Parse([]byte("id: w\nstepz: []\n"), "x.yaml"); err == nil || !strings.Contains(err.Error(), "stepz") {
		t.Fatalf("unknown field not reported: %v", err)
	}
	if _, err := Parse([]byte(""), "x.yaml"); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty file: %v", err)
	}
	if _, err := Parse([]byte("id: w\nsteps:\n  - {id: a, type: run, command: ls, timeout: soon}\n"), "x.yaml"); err == nil || !strings.Contains(err.Error(), "bad duration") {
		t.Fatalf("bad duration: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestMissingInputBeforeAnythingRuns(t *testing.T) {
	w := mustParse(t, `
id: w
inputs: [{name: need}, {name: opt, default: "d"}]
steps:
  - {id: a, type: llm, prompt: "{{.need}} {{.opt}}"}
`)
	var calls atomic.Int32
	ex := &Executor{Handlers: map[string]Handler{TypeLLM: HandlerFunc(func(ctx context.Context, c Call) (string, error) {
		calls.Add(1)
		return c.Prompt, nil
	})}}
	if _, err := ex.Run(context.Background(), w, nil); err == nil || !strings.Contains(err.Error(), "missing input need") {
		t.Fatalf("want missing input error, got %v", err)
	}
	if _, err := ex.Run(context.Background(), w, map[string]string{"need": "x", "bogus": "y"}); err == nil || !strings.Contains(err.Error(), "unknown input bogus") {
		t.Fatalf("want unknown input error, got %v", err)
	}
	if calls.Load() != 0 {
		t.Fatal("a step ran although the inputs were wrong")
	}
	rep, err := ex.Run(context.Background(), w, map[string]string{"need": "x"})
	if err != nil || rep.Steps[0].Output != "x d" {
		t.Fatalf("run: %v %+v", err, rep)
	}
	// A type the executor has no handler for is refused before running.
	w2 := mustParse(t, "id: w2\nsteps:\n  - {id: a, type: run, command: ls}\n")
	if _, err := ex.Run(context.Background(), w2, nil); err == nil || !strings.Contains(err.Error(), "no handler") {
		t.Fatalf("want no handler error, got %v", err)
	}
}

func TestOrderingAndTemplates(t *testing.T) {
	w := mustParse(t, `
id: chain
inputs: [{name: name}]
outputs: [{name: final, value: "{{.d}}!"}]
steps:
  - {id: d, type: llm, prompt: "d({{.b}},{{.c}})"}
  - {id: b, type: llm, prompt: "b({{.a}})"}
  - {id: c, type: llm, prompt: "c", depends_on: [a]}
  - {id: a, type: llm, prompt: "a({{.name}})", output: a}
`)
	var mu sync.Mutex
	var order []string
	ex := &Executor{Workers: 1, Handlers: map[string]Handler{TypeLLM: HandlerFunc(func(ctx context.Context, c Call) (string, error) {
		mu.Lock()
		order = append(order, c.Step.ID)
		mu.Unlock()
		return c.Prompt, nil
	})}}
	rep, err := ex.Run(context.Background(), w, map[string]string{"name": "n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ","); got != "a,b,c,d" {
		t.Fatalf("order %s, want a,b,c,d", got)
	}
	if rep.Outputs["final"] != "d(b(a(n)),c)!" {
		t.Fatalf("final = %q", rep.Outputs["final"])
	}
	nodes, edges := Graph(w)
	if len(nodes) != 4 || len(edges) != 4 {
		t.Fatalf("graph: %d nodes %d edges", len(nodes), len(edges))
	}
	if dot := DOT(w, map[string]State{"a": StateDone}); !strings.Contains(dot, `"a" -> "b"`) || !strings.Contains(dot, "palegreen") {
		t.Fatalf("dot:\n%s", dot)
	}
}

func TestWithMapping(t *testing.T) {
	w := mustParse(t, `
id: w
inputs: [{name: x}]
steps:
  - id: a
    type: llm
    with: {greeting: "hello {{.x}}"}
    prompt: "{{.greeting}}/{{upper .x}}"
`)
	rep, err := (&Executor{Handlers: map[string]Handler{TypeLLM: echo}}).Run(context.Background(), w, map[string]string{"x": "bob"})
	if err != nil || rep.Steps[0].Output != "hello bob/BOB" {
		t.Fatalf("%v %q", err, rep.Steps[0].Output)
	}
}

func TestFailureCancelsAndSkips(t *testing.T) {
	w := mustParse(t, `
id: w
steps:
  - {id: slow, type: llm, prompt: slow}
  - {id: bad, type: llm, prompt: bad}
  - {id: after, type: llm, prompt: after, depends_on: [bad]}
  - {id: later, type: llm, prompt: later, depends_on: [slow]}
`)
	slowCanceled := make(chan bool, 1)
	slowStarted := make(chan struct{})
	ex := &Executor{Workers: 2, Handlers: map[string]Handler{TypeLLM: HandlerFunc(func(ctx context.Context, c Call) (string, error) {
		switch c.Step.ID {
		case "slow":
			close(slowStarted)
			select {
			case <-ctx.Done():
				slowCanceled <- true
				return "", ctx.Err()
			case <-time.After(10 * time.Second):
				slowCanceled <- false
				return "finished", nil
			}
		case "bad":
			<-slowStarted
			return "", errors.New("boom")
		}
		return c.Prompt, nil
	})}}
	var events []Event
	var emu sync.Mutex
	ex.OnEvent = func(ev Event) { emu.Lock(); events = append(events, ev); emu.Unlock() }
	rep, err := ex.Run(context.Background(), w, nil)
	var se *StepError
	if !errors.As(err, &se) || se.Step != "bad" || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("want step bad error, got %v", err)
	}
	if !<-slowCanceled {
		t.Fatal("the running step was not cancelled")
	}
	want := map[string]State{"slow": StateFailed, "bad": StateFailed, "after": StateSkipped, "later": StateSkipped}
	for id, st := range want {
		if r, _ := rep.Step(id); r.State != st {
			t.Errorf("%s: state %s, want %s", id, r.State, st)
		}
	}
	tr := NewTracker("w")
	for _, ev := range events {
		tr.Observe(ev)
	}
	if got := tr.States(); got["after"] != StateSkipped || got["bad"] != StateFailed {
		t.Fatalf("tracker states %v", got)
	}
}

func TestContinueOnError(t *testing.T) {
	w := mustParse(t, `
id: w
steps:
  - {id: bad, type: llm, prompt: bad, continue_on_error: true}
  - {id: next, type: llm, prompt: "got [{{.bad}}]"}
`)
	ex := &Executor{Handlers: map[string]Handler{TypeLLM: HandlerFunc(func(ctx context.Context, c Call) (string, error) {
		if c.Step.ID == "bad" {
			return "", errors.New("boom")
		}
		return c.Prompt, nil
	})}}
	rep, err := ex.Run(context.Background(), w, nil)
	if err != nil {
		t.Fatalf("continue_on_error failure ended the run: %v", err)
	}
	if r, _ := rep.Step("bad"); r.State != StateFailed {
		t.Fatalf("bad: %s", r.State)
	}
	if r, _ := rep.Step("next"); r.State != StateDone || r.Output != "got []" {
		t.Fatalf("next: %+v", r)
	}
}

func TestRetriesWithBackoff(t *testing.T) {
	w := mustParse(t, `
id: w
steps:
  - {id: flaky, type: llm, prompt: x, retries: 3, backoff: 20ms}
  - {id: hopeless, type: llm, prompt: x, retries: 1, backoff: 1ms, depends_on: [flaky]}
`)
	var mu sync.Mutex
	times := map[string][]time.Time{}
	ex := &Executor{Handlers: map[string]Handler{TypeLLM: HandlerFunc(func(ctx context.Context, c Call) (string, error) {
		mu.Lock()
		times[c.Step.ID] = append(times[c.Step.ID], time.Now())
		mu.Unlock()
		if c.Step.ID == "flaky" && c.Attempt < 3 {
			return "", fmt.Errorf("attempt %d failed", c.Attempt)
		}
		if c.Step.ID == "hopeless" {
			return "", fmt.Errorf("attempt %d failed", c.Attempt)
		}
		return "ok", nil
	})}}
	rep, err := ex.Run(context.Background(), w, nil)
	if r, _ := rep.Step("flaky"); r.State != StateDone || r.Attempts != 3 {
		t.Fatalf("flaky: %+v", r)
	}
	ft := times["flaky"]
	// Backoff doubles: at least 20ms before attempt 2 and 40ms before attempt 3.
	if len(ft) != 3 || ft[1].Sub(ft[0]) < 20*time.Millisecond || ft[2].Sub(ft[1]) < 40*time.Millisecond {
		t.Fatalf("flaky attempts at %v", ft)
	}
	r, _ := rep.Step("hopeless")
	if r.State != StateFailed || r.Attempts != 2 || !strings.Contains(err.Error(), "attempt 2 failed") {
		t.Fatalf("hopeless: %+v err %v", r, err)
	}
}

func TestTimeout(t *testing.T) {
	w := mustParse(t, `
id: w
steps:
  - {id: hang, type: llm, prompt: x, timeout: 50ms, retries: 1}
`)
	var attempts atomic.Int32
	ex := &Executor{Handlers: map[string]Handler{TypeLLM: HandlerFunc(func(ctx context.Context, c Call) (string, error) {
		attempts.Add(1)
		<-ctx.Done()
		return "", ctx.Err()
	})}}
	rep, err := ex.Run(context.Background(), w, nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
	if attempts.Load() != 2 || rep.Steps[0].Attempts != 2 {
		t.Fatalf("attempts %d (report %d), want 2 (a timeout is retried)", attempts.Load(), rep.Steps[0].Attempts)
	}
}

func TestCancellation(t *testing.T) {
	w := mustParse(t, `
id: w
steps:
  - {id: a, type: llm, prompt: x, retries: 5, backoff: 1s}
  - {id: b, type: llm, prompt: x, depends_on: [a]}
`)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var attempts atomic.Int32
	ex := &Executor{Handlers: map[string]Handler{TypeLLM: HandlerFunc(func(ctx context.Context, c Call) (string, error) {
		if attempts.Add(1) == 1 {
			close(started)
		}
		<-ctx.Done()
		return "", ctx.Err()
	})}}
	go func() { <-started; cancel() }()
	rep, err := ex.Run(ctx, w, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if attempts.Load() != 1 {
		t.Fatalf("a cancelled step was retried: %d attempts", attempts.Load())
	}
	if r, _ := rep.Step("b"); r.State != StateSkipped {
		t.Fatalf("b: %s", r.State)
	}
}

func TestWorkerLimitAndConcurrency(t *testing.T) {
	w := mustParse(t, `
id: w
steps:
  - {id: a, type: llm, prompt: x}
  - {id: b, type: llm, prompt: x}
  - {id: c, type: llm, prompt: x}
  - {id: d, type: llm, prompt: x}
`)
	var cur, peak atomic.Int32
	h := HandlerFunc(func(ctx context.Context, c Call) (string, error) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(30 * time.Millisecond)
		cur.Add(-1)
		return "", nil
	})
	ex := &Executor{Workers: 2, Handlers: map[string]Handler{TypeLLM: h}}
	if _, err := ex.Run(context.Background(), w, nil); err != nil {
		t.Fatal(err)
	}
	if peak.Load() != 2 {
		t.Fatalf("peak concurrency %d, want exactly the worker limit 2", peak.Load())
	}
}

func TestPanicIsAFailure(t *testing.T) {
	w := mustParse(t, "id: w\nsteps:\n  - {id: a, type: llm, prompt: x}\n")
	ex := &Executor{Handlers: map[string]Handler{TypeLLM: HandlerFunc(func(ctx context.Context, c Call) (string, error) { panic("oops") })}}
	if _, err := ex.Run(context.Background(), w, nil); err == nil || !strings.Contains(err.Error(), "panicked: oops") {
		t.Fatalf("got %v", err)
	}
}

func TestStepsRecordedInMemory(t *testing.T) {
	st, err := memory.Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := mustParse(t, `
id: rec
steps:
  - {id: a, type: llm, prompt: x}
  - {id: b, type: llm, prompt: x, depends_on: [a]}
`)
	ex := &Executor{Activity: st, Handlers: map[string]Handler{TypeLLM: HandlerFunc(func(ctx context.Context, c Call) (string, error) {
		if c.Step.ID == "b" {
			return "", errors.New("nope")
		}
		time.Sleep(5 * time.Millisecond)
		return "fine", nil
	})}}
	ex.Run(context.Background(), w, nil)
	acts, err := st.Activities(10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]memory.Activity{}
	for _, a := range acts {
		got[a.Action] = a
	}
	if a := got["rec/a"]; a.Outcome != "done" || a.Duration < 5*time.Millisecond || a.Module != "workflow" {
		t.Fatalf("rec/a: %+v", a)
	}
	if a := got["rec/b"]; a.Outcome != "failed" || !strings.Contains(a.Detail, "nope") {
		t.Fatalf("rec/b: %+v", a)
	}
	if a := got["run rec"]; a.Outcome != "failed" {
		t.Fatalf("run rec: %+v", a)
	}
}

func TestParallelGroups(t *testing.T) {
	w := mustParse(t, `
id: groups
steps:
  - {id: a1, type: llm, prompt: x, group: 1}
  - {id: a2, type: llm, prompt: x, group: 1}
  - {id: b1, type: llm, prompt: x, group: 2}
  - {id: c1, type: llm, prompt: x, group: 3}
`)
	deps := Dependencies(w)
	if len(deps["a1"]) != 0 || len(deps["b1"]) != 2 || len(deps["c1"]) != 3 {
		t.Fatalf("deps %v", deps)
	}
	var mu sync.Mutex
	var order []string
	ex := &Executor{Workers: 4, Handlers: map[string]Handler{TypeLLM: HandlerFunc(func(ctx context.Context, c Call) (string, error) {
		mu.Lock()
		order = append(order, c.Step.ID)
		mu.Unlock()
		return "", nil
	})}}
	if _, err := ex.Run(context.Background(), w, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(order[2:], ",") != "b1,c1" {
		t.Fatalf("order %v", order)
	}
	// A group-1 step depending on a group-2 step is a cycle.
	bad := mustParse(t, "id: g\nsteps:\n  - {id: a, type: llm, prompt: x, group: 1, depends_on: [b]}\n  - {id: b, type: llm, prompt: x, group: 2}\n")
	if err := Validate(bad); err == nil || !strings.Contains(err.Error(), "dependency cycle") {
		t.Fatalf("got %v", err)
	}
}

func TestBackoffWaitDoublesAndSaturates(t *testing.T) {
	cases := []struct {
		base time.Duration
		n    int
		want time.Duration
	}{
		{200 * time.Millisecond, 1, 200 * time.Millisecond},
		{200 * time.Millisecond, 2, 400 * time.Millisecond},
		{200 * time.Millisecond, 4, 1600 * time.Millisecond},
		{0, 5, 0},
		{time.Second, 70, math.MaxInt64}, // 1s·2^69 overflows int64 nanoseconds
	}
	for _, c := range cases {
		if got := backoffWait(c.base, c.n); got != c.want {
			t.Errorf("backoffWait(%s, %d) = %s, want %s", c.base, c.n, got, c.want)
		}
	}
}
