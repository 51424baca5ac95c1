package workflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"codeloom/app/memory"
	"codeloom/app/patch"
	"codeloom/models"
	"codeloom/runtime"
)

// AutonomyFile is the per-project autonomy setting, under <root>/.codeloom/.
const AutonomyFile = "autonomy.yaml"

// Autonomy defaults.
const (
	DefaultMaxCycles = 3
	DefaultMaxWall   = 30 * time.Minute
)

// AutonomySettings is the per-project autonomy setting (off by default).
type AutonomySettings struct {
	Enabled   bool     `yaml:"enabled"`
	MaxCycles int      `yaml:"max_cycles"` // DefaultMaxCycles when 0
	MaxWall   Duration `yaml:"max_wall"`   // DefaultMaxWall when 0
}

func (s AutonomySettings) withDefaults() AutonomySettings {
	if s.MaxCycles <= 0 {
		s.MaxCycles = DefaultMaxCycles
	}
	if s.MaxWall <= 0 {
		s.MaxWall = Duration(DefaultMaxWall)
	}
	return s
}

// LoadAutonomy reads <root>/.codeloom/autonomy.yaml; a missing file means
// autonomy off with the default budget.
func LoadAutonomy(root string) (AutonomySettings, error) {
	path := filepath.Join(memory.DataDir(root), AutonomyFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return AutonomySettings{}.withDefaults(), nil
	}
	if err != nil {
		return AutonomySettings{}, fmt.Errorf("autonomy settings: %w", err)
	}
	var s AutonomySettings
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) {
		return AutonomySettings{}, fmt.Errorf("autonomy settings %s: %w", path, err)
	}
	if s.MaxCycles < 0 {
		return AutonomySettings{}, fmt.Errorf("autonomy settings %s: max_cycles must be 0 or more", path)
	}
	return s.withDefaults(), nil
}

// SaveAutonomy writes the setting to <root>/.codeloom/autonomy.yaml.
func SaveAutonomy(root string, s AutonomySettings) error {
	data, err := yaml.Marshal(s)
	if err != nil {
		return fmt.Errorf("autonomy settings: %w", err)
	}
	dir := memory.DataDir(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("autonomy settings: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, AutonomyFile), data, 0o644); err != nil {
		return fmt.Errorf("autonomy settings: %w", err)
	}
	return nil
}

// Cycler runs one improvement cycle (plan, patch, verify) and reports
// whether it ended verified. *TaskCycler is the production one.
type Cycler interface {
	Cycle(ctx context.Context, request string) (ok bool, summary string, err error)
}

// LessonSource lists lessons learned on the project; *memory.Store satisfies it.
type LessonSource interface {
	Lessons(limit int) ([]memory.Lesson, error)
}

// Reasons an autonomy run ends.
const (
	StopCycles   = "budget: cycle limit reached"
	StopWall     = "budget: wall time used up"
	StopDeclined = "the user declined the next cycle"
	StopFailed   = "a cycle did not verify; the project is at its last verified state"
	StopCanceled = "stopped by the user"
	StopNoIdea   = "the model proposed nothing"
	StopDisabled = "autonomy is off for this project"
)

// AutoCycle is one cycle of an autonomy run.
type AutoCycle struct {
	Proposal string        `json:"proposal"`
	OK       bool          `json:"ok"`
	Summary  string        `json:"summary,omitempty"`
	Err      string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration"`
}

// AutoReport is the outcome of an autonomy run.
type AutoReport struct {
	Cycles   []AutoCycle   `json:"cycles"`
	Stop     string        `json:"stop"`
	Duration time.Duration `json:"duration"`
}

// Autonomy repeats improvement cycles after a successful one: the model
// proposes the next improvement from the task, the cycles so far and the
// lessons; the user is asked "Start the next cycle: …?"; the budget (cycles
// and wall time) always ends it; cancelling ctx stops it. A failed or
// cancelled cycle ends the run (the Cycler leaves the project in its last
// verified state).
type Autonomy struct {
	Settings AutonomySettings
	Engine   models.Engine
	Approver Approver
	Cycler   Cycler
	Lessons  LessonSource // optional
	Activity ActivityLogger
	// OnEvent receives progress lines.
	OnEvent func(text string)
	Log     *slog.Logger
	// Now is the clock (time.Now when nil); tests drive the wall budget with it.
	Now func() time.Time
}

func (a *Autonomy) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Autonomy) logger() *slog.Logger {
	if a.Log != nil {
		return a.Log
	}
	return slog.Default()
}

func (a *Autonomy) say(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if a.OnEvent != nil {
		a.OnEvent(msg)
	}
	if a.Log != nil {
		a.Log.Info("autonomy: " + msg)
	}
}

// Run runs cycles after the successful first cycle of task until the budget,
// a "no", a failed cycle or ctx ends it.
func (a *Autonomy) Run(ctx context.Context, task string) (*AutoReport, error) {
	start := a.now()
	rep := &AutoReport{}
	s := a.Settings.withDefaults()
	finish := func(stop string, err error) (*AutoReport, error) {
		rep.Stop = stop
		rep.Duration = a.now().Sub(start)
		a.say("autonomy ended after %d cycle(s): %s", len(rep.Cycles), stop)
		if a.Activity != nil {
			if _, lerr := a.Activity.LogActivity(memory.Activity{Time: start, Module: "autonomy", Action: "run", Outcome: stop,
				Detail: fmt.Sprintf("%d cycle(s); task: %s", len(rep.Cycles), clip(task, 300)), Duration: rep.Duration}); lerr != nil {
				a.logger().Warn("autonomy: could not record the run", "err", lerr)
			}
		}
		return rep, err
	}
	if !s.Enabled {
		return finish(StopDisabled, nil)
	}
	if a.Engine == nil || a.Approver == nil || a.Cycler == nil {
		return finish("misconfigured", errors.New("autonomy: needs a model, an approver and a cycler"))
	}
	wall := s.MaxWall.D()
	for {
		if ctx.Err() != nil {
			return finish(StopCanceled, nil)
		}
		if len(rep.Cycles) >= s.MaxCycles {
			return finish(StopCycles, nil)
		}
		left := wall - a.now().Sub(start)
		if left <= 0 {
			return finish(StopWall, nil)
		}
		proposal, err := a.propose(ctx, task, rep.Cycles)
		if err != nil {
			if ctx.Err() != nil {
				return finish(StopCanceled, nil)
			}
			return finish("the model failed", fmt.Errorf("autonomy: propose: %w", err))
		}
		if proposal == "" {
			return finish(StopNoIdea, nil)
		}
		yes, err := a.Approver.Approve(ctx, Question{Kind: AskCycle, Title: "Start the next cycle: " + proposal + "?",
			Detail: fmt.Sprintf("cycle %d of at most %d; %s of the %s budget left", len(rep.Cycles)+1, s.MaxCycles, left.Round(time.Second), wall)})
		if err != nil {
			if ctx.Err() != nil {
				return finish(StopCanceled, nil)
			}
			return finish("approval failed", fmt.Errorf("autonomy: %w", err))
		}
		if !yes {
			return finish(StopDeclined, nil)
		}
		a.say("cycle %d: %s", len(rep.Cycles)+1, proposal)
		cctx, cancel := context.WithTimeout(ctx, left)
		cstart := a.now()
		ok, summary, err := a.Cycler.Cycle(cctx, proposal)
		outOfTime := errors.Is(cctx.Err(), context.DeadlineExceeded)
		cancel()
		c := AutoCycle{Proposal: proposal, OK: ok && err == nil, Summary: summary, Duration: a.now().Sub(cstart)}
		if err != nil {
			c.Err = err.Error()
		}
		rep.Cycles = append(rep.Cycles, c)
		switch {
		case ctx.Err() != nil:
			return finish(StopCanceled, nil)
		case outOfTime && !c.OK:
			return finish(StopWall, nil)
		case !c.OK:
			return finish(StopFailed, nil)
		}
	}
}

// propose asks the model for the next improvement (one line).
func (a *Autonomy) propose(ctx context.Context, task string, done []AutoCycle) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "The project's task:\n%s\n\n", task)
	if len(done) > 0 {
		b.WriteString("Improvements already made in this session:\n")
		for _, c := range done {
			fmt.Fprintf(&b, "- %s\n", c.Proposal)
		}
		b.WriteByte('\n')
	}
	if a.Lessons != nil {
		if ls, err := a.Lessons.Lessons(5); err == nil && len(ls) > 0 {
			b.WriteString("Lessons learned on this project:\n")
			for _, l := range ls {
				fmt.Fprintf(&b, "- %s: failed with %s; fixed by %s\n", clip(l.Task, 120), clip(l.Failure, 120), clip(l.Fix, 120))
			}
			b.WriteByte('\n')
		}
	}
	b.WriteString("Propose the single most useful next improvement, small enough for one change verified by tests. " +
		"Answer with one sentence in the imperative, nothing else. Answer NONE if nothing is worth doing.")
	msgs := []models.Message{{Role: models.RoleSystem, Content: RolePrompt("architect")}, {Role: models.RoleUser, Content: b.String()}}
	ans, err := a.Engine.Generate(ctx, msgs, models.GenOptions{MaxTokens: 96, Stop: []string{"\n\n"}}, nil)
	if err != nil {
		return "", err
	}
	line := strings.TrimSpace(ans)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	line = strings.Trim(line, "\"'` ")
	line = strings.TrimRight(line, ".?!")
	if strings.EqualFold(line, "none") {
		return "", nil
	}
	return clip(line, 200), nil
}

// clip returns the first n bytes of s (fewer if n would split a UTF-8
// character), marked when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// TaskCycler runs each cycle through the pipeline (TaskRunner) on Root and
// keeps the project at its last verified state: a snapshot of the project is
// taken before the cycle, and when the cycle fails or is cancelled every file
// it changed is restored from the snapshot (files it added are removed).
type TaskCycler struct {
	Root   string
	Runner *TaskRunner
	Log    *slog.Logger
}

// Cycle runs one pipeline cycle with the request.
func (t *TaskCycler) Cycle(ctx context.Context, request string) (bool, string, error) {
	snap, err := runtime.NewWorkspace(t.Root, nil)
	if err != nil {
		return false, "", fmt.Errorf("cycle: snapshot: %w", err)
	}
	defer snap.Close()
	out, err := t.Runner.Run(ctx, Call{Step: &Step{ID: "cycle"}, Workflow: &Workflow{ID: "autonomy"},
		With: map[string]string{"request": request}, Emit: func(string) {}})
	if err == nil {
		return true, out, nil
	}
	if rerr := RestoreSnapshot(t.Root, snap); rerr != nil {
		return false, "", errors.Join(err, fmt.Errorf("cycle: restore the last verified state: %w", rerr))
	}
	return false, "restored the last verified state", err
}

// RestoreSnapshot puts back every file of root that differs from the
// snapshot workspace: changed and deleted files get the snapshot's content,
// files that appeared since are removed (caches and .codeloom are left alone).
func RestoreSnapshot(root string, snap *runtime.Workspace) error {
	changes, err := snap.Diff()
	if err != nil {
		return err
	}
	var errs []error
	for _, ch := range changes {
		if ch.Status == "added" || ch.Status == "modified" { // in the snapshot, different or gone in the project
			data, err := os.ReadFile(filepath.Join(snap.Dir(), filepath.FromSlash(ch.Path)))
			if err == nil {
				err = patch.WriteFile(root, ch.Path, data, 0o644)
			}
			errs = append(errs, err)
		}
	}
	now, err := readTree(root)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for rel := range now {
		if _, err := os.Lstat(filepath.Join(snap.Dir(), filepath.FromSlash(rel))); errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, patch.RemoveFile(root, rel))
		}
	}
	return errors.Join(errs...)
}
