package workflow

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"codeloom/app/memory"
	"codeloom/models"
	"codeloom/runtime"
)

// NewProjectConfig configures a run of the built-in new-project workflow.
type NewProjectConfig struct {
	Requirements string
	// Dest is the new folder (must not exist or be empty).
	Dest     string
	Engine   models.Engine
	Model    string // recorded with exchanges
	Runner   runtime.Runner
	Approver Approver
	// MaxFix bounds the debugger attempts (DefaultMaxFix when 0).
	MaxFix int
	// MaxTokens bounds each model answer (2048 when 0).
	MaxTokens int
	// Workers bounds concurrent steps (the executor default when 0).
	Workers int
	// TestTimeout bounds each test run (2 minutes when 0).
	TestTimeout time.Duration
	// OnEvent receives every step event (the CLI prints them, the GUI colours its graph).
	OnEvent func(Event)
	Log     *slog.Logger
}

// ProjectSummary is the package a new-project run ends with: where it was
// written, its files, the test results, the debug log and the plan.
type ProjectSummary struct {
	Dest     string       `json:"dest"`
	Written  bool         `json:"written"`
	Files    []string     `json:"files"`
	Entry    string       `json:"entry,omitempty"`
	Tests    TestSummary  `json:"tests"`
	DebugLog []DebugEntry `json:"debug_log,omitempty"`
	// DebugSummary lists what the debugger changed ("modify a.py +1 -3").
	DebugSummary string `json:"debug_summary,omitempty"`
	// LessonID is the lesson card written when the debugger fixed a failure.
	LessonID string        `json:"lesson_id,omitempty"`
	Analysis string        `json:"analysis,omitempty"`
	Plan     string        `json:"plan,omitempty"`
	Report   *Report       `json:"report,omitempty"`
	Duration time.Duration `json:"duration"`
}

// Text renders the summary for a terminal.
func (s *ProjectSummary) Text() string {
	var b strings.Builder
	if s.Written {
		fmt.Fprintf(&b, "new project written to %s\n", s.Dest)
	} else {
		fmt.Fprintf(&b, "nothing written to %s\n", s.Dest)
	}
	if s.Entry != "" {
		fmt.Fprintf(&b, "entry point: %s\n", s.Entry)
	}
	fmt.Fprintf(&b, "files (%d):\n", len(s.Files))
	for _, f := range s.Files {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	fmt.Fprintf(&b, "tests: %s\n", s.Tests.Line())
	if len(s.DebugLog) > 0 {
		fmt.Fprintf(&b, "debug log (%d attempt(s)):\n", len(s.DebugLog))
		for _, d := range s.DebugLog {
			res := "still failing"
			if d.Passed {
				res = "tests pass"
			}
			fmt.Fprintf(&b, "  %d. %s → %s\n", d.Attempt, d.Changes, res)
		}
		if s.DebugSummary != "" {
			fmt.Fprintf(&b, "debugger's changes:\n%s\n", indentText(s.DebugSummary, "  "))
		}
		if s.LessonID != "" {
			fmt.Fprintf(&b, "lesson card %s recorded\n", s.LessonID)
		}
	}
	if s.Plan != "" {
		fmt.Fprintf(&b, "plan:\n%s\n", indentText(strings.TrimSpace(s.Plan), "  "))
	}
	fmt.Fprintf(&b, "took %s\n", s.Duration.Round(time.Millisecond))
	return b.String()
}

// indentText puts pad before every line of s.
func indentText(s, pad string) string {
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// buffer keeps records in memory until the new project's folder (and its
// store) exists; then they are flushed into it.
type buffer struct {
	mu        sync.Mutex
	acts      []memory.Activity
	exchanges []memory.Exchange
	runs      []memory.RunRecord
	lesson    *memory.Lesson
}

// LogActivity keeps an activity.
func (b *buffer) LogActivity(a memory.Activity) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.acts = append(b.acts, a)
	return fmt.Sprint(len(b.acts)), nil
}

// AddExchange keeps a prompt and its answer.
func (b *buffer) AddExchange(e memory.Exchange) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.exchanges = append(b.exchanges, e)
	return fmt.Sprint(len(b.exchanges)), nil
}

// AddRun keeps a run record.
func (b *buffer) AddRun(r memory.RunRecord) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.runs = append(b.runs, r)
	return fmt.Sprint(len(b.runs)), nil
}

// RecordRun keeps a run handed over by the runtime.
func (b *buffer) RecordRun(r runtime.RunRecord) error {
	_, err := b.AddRun(memory.RunFromRuntime(r))
	return err
}

// flush writes the buffered records and the summary into the project's store.
func (b *buffer) flush(dest string, summary *ProjectSummary) error {
	st, err := memory.OpenProject(dest)
	if err != nil {
		return err
	}
	defer st.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	for _, a := range b.acts {
		_, err := st.LogActivity(a)
		errs = append(errs, err)
	}
	for _, e := range b.exchanges {
		_, err := st.AddExchange(e)
		errs = append(errs, err)
	}
	for _, r := range b.runs {
		_, err := st.AddRun(r)
		errs = append(errs, err)
	}
	if b.lesson != nil {
		id, err := st.AddLesson(*b.lesson)
		summary.LessonID = id
		errs = append(errs, err)
	}
	data, err := json.Marshal(summary)
	errs = append(errs, err)
	if err == nil {
		errs = append(errs, st.PutBlob("workflow", "new-project", data))
	}
	return errors.Join(errs...)
}

// NewProjectExecutor returns an executor with every handler the new-project
// workflow needs (llm, build, write, plus run/approve/patch/workflow), its
// records going to rec. onPackage and onWritten observe the build and write.
func NewProjectExecutor(cfg NewProjectConfig, rec interface {
	ActivityLogger
	ExchangeRecorder
}, onPackage func(*Package), onWritten func(string, *Package)) *Executor {
	ex := &Executor{Workers: cfg.Workers, Activity: rec, OnEvent: cfg.OnEvent, Log: cfg.Log}
	ex.Handlers = StandardHandlers(ex, "", cfg.Engine, cfg.Runner, cfg.Approver, func(ref string) (*Workflow, error) { return Resolve("", ref) })
	ex.Handlers[TypeLLM] = &LLMHandler{Engine: cfg.Engine, Model: cfg.Model, Memory: rec, Options: models.GenOptions{MaxTokens: cmp.Or(cfg.MaxTokens, 2048)}}
	ex.Handlers[TypeBuild] = &Builder{Engine: cfg.Engine, Runner: cfg.Runner, Approver: cfg.Approver, MaxFix: cfg.MaxFix,
		TestTimeout: cfg.TestTimeout, MaxTokens: cfg.MaxTokens, Memory: rec, OnPackage: onPackage}
	ex.Handlers[TypeWrite] = &Writer{Approver: cfg.Approver, OnWritten: onWritten}
	delete(ex.Handlers, TypeRun) // new-project runs only its tests, through the build step
	delete(ex.Handlers, TypePatch)
	return ex
}

// NewProject runs the built-in new-project workflow: architect (analysis,
// file structure with entry point, plan) → coder → tester → tests in an
// isolated workspace with the debugger loop → approved write to cfg.Dest.
// The records of the run (steps, prompts and answers, test runs) and the
// summary go into the new project's store once it is written. The summary is
// returned even when the run fails (what was built, why it stopped).
func NewProject(ctx context.Context, cfg NewProjectConfig) (*ProjectSummary, error) {
	start := time.Now()
	sum := &ProjectSummary{Dest: cfg.Dest}
	if strings.TrimSpace(cfg.Requirements) == "" {
		return sum, errors.New("new project: the requirements are empty")
	}
	if cfg.Dest == "" {
		return sum, errors.New("new project: no destination folder")
	}
	if err := checkNewFolder(cfg.Dest); err != nil {
		return sum, fmt.Errorf("new project: %w", err)
	}
	if cfg.Engine == nil {
		return sum, errors.New("new project: no model (give --model, --endpoint or --script)")
	}
	if cfg.Approver == nil {
		return sum, errors.New("new project: an approver is required")
	}
	w, err := Builtin("new-project")
	if err != nil {
		return sum, err
	}
	buf := &buffer{}
	if cfg.Runner == nil {
		cfg.Runner = runtime.New(runtime.WithRecorder(buf))
	}
	var pkg *Package
	var mu sync.Mutex
	ex := NewProjectExecutor(cfg, buf, func(p *Package) { mu.Lock(); pkg = p; mu.Unlock() },
		func(dest string, _ *Package) { sum.Written = true })
	rep, runErr := ex.Run(ctx, w, map[string]string{"requirements": cfg.Requirements, "dest": cfg.Dest})
	sum.Report = rep
	if rep != nil {
		if r, ok := rep.Step("analysis"); ok {
			sum.Analysis = r.Output
		}
		if r, ok := rep.Step("plan"); ok {
			sum.Plan = r.Output
		}
	}
	mu.Lock()
	if pkg != nil {
		sum.Files = pkg.Paths()
		sum.Entry = pkg.Entry
		sum.Tests = pkg.Tests
		sum.DebugLog = pkg.DebugLog
		sum.DebugSummary = pkg.DebugSummary
	}
	mu.Unlock()
	sum.Duration = time.Since(start)
	if sum.Written {
		if n := len(sum.DebugLog); n > 0 && sum.DebugLog[n-1].Passed {
			// What failed and what fixed it, for later requests' few-shot examples.
			buf.lesson = &memory.Lesson{Time: time.Now(), Task: clip(cfg.Requirements, 500),
				Failure: clip(sum.DebugLog[0].Failure, 800), Fix: fmt.Sprintf("debugger, %d attempt(s)", n),
				DiffSummary: sum.DebugSummary, Tags: []string{"new-project", "debug"}}
		}
		if err := buf.flush(cfg.Dest, sum); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("record history in %s: %w", cfg.Dest, err)) // prefixed below
		}
	}
	if runErr != nil {
		return sum, fmt.Errorf("new project: %w", runErr)
	}
	return sum, nil
}
