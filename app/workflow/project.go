package workflow

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"codeloom/app/memory"
	"codeloom/app/patch"
	"codeloom/app/pipeline"
	"codeloom/assets/workflows"
	"codeloom/models"
	"codeloom/runtime"
)

// Step types of the project workflows (registered by NewProject and Builtins).
const (
	TypeBuild = "build" // files into an isolated workspace, tests, debugger loop
	TypeWrite = "write" // approved write of a built package to a new folder
	TypeTask  = "task"  // one pipeline cycle on an existing project
)

// DefaultMaxFix bounds the debugger attempts of a build step.
const DefaultMaxFix = 4

// Package is what a build step produces: the project's files, the test
// results, the debugger's log and the entry point.
type Package struct {
	Files    map[string]string `json:"files"` // relative path → content
	Entry    string            `json:"entry,omitempty"`
	Tests    TestSummary       `json:"tests"`
	DebugLog []DebugEntry      `json:"debug_log,omitempty"`
	// DebugDiff is what the debugger changed in total (unified diff) and
	// DebugSummary one line per file ("modify a.py +1 -3").
	DebugDiff    string `json:"debug_diff,omitempty"`
	DebugSummary string `json:"debug_summary,omitempty"`
	Passed       bool   `json:"passed"`
}

// Paths returns the package's file paths, sorted.
func (p *Package) Paths() []string {
	out := make([]string, 0, len(p.Files))
	for k := range p.Files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestSummary is the outcome of the last test run of a build.
type TestSummary struct {
	Framework string        `json:"framework,omitempty"`
	Command   []string      `json:"command,omitempty"`
	Passed    int           `json:"passed"`
	Failed    int           `json:"failed"`
	Errors    int           `json:"errors"`
	Skipped   int           `json:"skipped"`
	OK        bool          `json:"ok"`
	Wall      time.Duration `json:"wall"`
	PeakRSS   int64         `json:"peak_rss"`
	Output    string        `json:"output,omitempty"` // tail of the test output
	Note      string        `json:"note,omitempty"`   // why the tests could not run
}

// Line is a one-line summary ("unittest: 4 passed, 0 failed, 0 errors in 120ms").
func (t TestSummary) Line() string {
	if t.Note != "" && t.Framework == "" {
		return "tests not run: " + t.Note
	}
	line := fmt.Sprintf("%s: %d passed, %d failed, %d errors in %s", t.Framework, t.Passed, t.Failed, t.Errors, t.Wall.Round(time.Millisecond))
	if t.Note != "" {
		line += " (" + t.Note + ")"
	}
	return line
}

// DebugEntry is one attempt of the debugger.
type DebugEntry struct {
	Attempt int    `json:"attempt"`
	Failure string `json:"failure"` // what the debugger was shown (clipped)
	Changes string `json:"changes"` // the changeset summary of its fix, or why it was unusable
	Passed  bool   `json:"passed"`  // the tests passed after this attempt
}

// Builder runs build steps: the coder's and tester's answers are applied
// (app/patch, paths confined) into an isolated workspace (runtime.NewWorkspace
// of an empty folder, or of with.base), the tests run there after one
// approval, and on failure the debugger role gets the failing output and the
// files and answers with fixes, up to MaxFix times. The output is the Package
// as JSON; a build whose tests still fail is a step failure (the package is
// still handed to OnPackage).
type Builder struct {
	Engine   models.Engine
	Runner   runtime.Runner
	Approver Approver
	// MaxFix bounds the debugger attempts (DefaultMaxFix when 0; negative: none).
	MaxFix int
	// TestTimeout bounds each test run (2 minutes when 0).
	TestTimeout time.Duration
	// Limits bound the test processes (1 GiB, 128 processes when zero).
	Limits runtime.Limits
	// MaxTokens bounds each debugger answer (2048 when 0).
	MaxTokens int
	// Memory, when set, records the debugger's prompts and answers.
	Memory ExchangeRecorder
	// OnPackage, when set, receives the final package of every build.
	OnPackage func(*Package)
}

var entryRE = regexp.MustCompile(`(?im)^\W*entry(?:[ _-]?point)?\W*:\s*` + "`?" + `([A-Za-z0-9_./-]+\.[A-Za-z0-9]+)`)

// Run builds and verifies the package.
func (b *Builder) Run(ctx context.Context, c Call) (string, error) {
	if b.Runner == nil || b.Approver == nil {
		return "", errors.New("build step: needs a runner and an approver")
	}
	src := c.With["base"]
	if src == "" {
		empty, err := os.MkdirTemp("", "codeloom-new-")
		if err != nil {
			return "", fmt.Errorf("build step: %w", err)
		}
		defer os.RemoveAll(empty)
		src = empty
	}
	ws, err := runtime.NewWorkspace(src, nil)
	if err != nil {
		return "", fmt.Errorf("build step: %w", err)
	}
	defer ws.Close()
	dir := ws.Dir()
	pkg := &Package{}
	if m := entryRE.FindStringSubmatch(c.With["entry"]); m != nil {
		pkg.Entry = m[1]
	}
	var before map[string]string
	done := func(err error) (string, error) {
		if before != nil && len(pkg.DebugLog) > 0 {
			pkg.DebugDiff, pkg.DebugSummary = treeDiff(before, dir)
		}
		files, rerr := readTree(dir)
		if rerr != nil && err == nil {
			err = fmt.Errorf("build step: read workspace: %w", rerr)
		}
		pkg.Files = files
		if b.OnPackage != nil {
			b.OnPackage(pkg)
		}
		if err != nil {
			return "", err
		}
		data, merr := json.Marshal(pkg)
		if merr != nil {
			return "", fmt.Errorf("build step: %w", merr)
		}
		return string(data), nil
	}
	// The failure to show the debugger next ("" when there is none yet).
	var failure string
	for _, part := range []struct{ name, text string }{{"code", c.With["code"]}, {"tests", c.With["tests"]}} {
		if strings.TrimSpace(part.text) == "" {
			continue
		}
		if msg := applyAnswer(ctx, dir, part.text); msg != "" {
			failure += fmt.Sprintf("The %s answer could not be used: %s\n", part.name, msg)
		}
	}
	if len(mustList(dir)) == 0 {
		return done(fmt.Errorf("build step: the answers contained no usable file blocks: %s", strings.TrimSpace(failure)))
	}
	limits := b.Limits
	if limits == (runtime.Limits{}) {
		limits = runtime.Limits{Memory: 1 << 30, Procs: 128}
	}
	timeout := b.TestTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	maxFix := b.MaxFix
	if maxFix == 0 {
		maxFix = DefaultMaxFix
	}
	ok, err := b.Approver.Approve(ctx, Question{Kind: pipeline.AskRun,
		Title: "Run the generated tests in an isolated workspace?",
		Detail: fmt.Sprintf("workspace %s (a temporary copy; nothing of yours is touched)\nfiles: %s\nlimits: %s per test run, %d MiB memory, %d processes, no network\n"+
			"after a failure the debugger's fixes are tested the same way, up to %d times",
			dir, strings.Join(mustList(dir), ", "), timeout, limits.Memory>>20, limits.Procs, max(maxFix, 0))})
	if err != nil {
		return done(fmt.Errorf("build step: %w", err))
	}
	if !ok {
		pkg.Tests.Note = "the user declined to run the generated tests"
		return done(fmt.Errorf("build step: running the tests: %w", ErrDeclined))
	}
	test := func() string {
		rep, err := runtime.RunTests(ctx, b.Runner, dir, runtime.TestOptions{Timeout: timeout, Limits: limits, NoNetwork: true,
			Origin:   "workflow:" + c.Workflow.ID + "/" + c.Step.ID,
			OnOutput: func(_ runtime.Stream, chunk []byte) { c.Emit(string(chunk)) }})
		if err != nil {
			pkg.Tests = TestSummary{Note: err.Error()}
			return "The tests could not run: " + err.Error()
		}
		out := string(rep.Result.Stdout) + string(rep.Result.Stderr)
		pkg.Tests = TestSummary{Framework: rep.Framework, Command: rep.Command, Passed: rep.Passed, Failed: rep.Failed,
			Errors: rep.Errors, Skipped: rep.Skipped, OK: rep.OK(), Wall: rep.Result.Wall, PeakRSS: rep.Result.PeakRSS, Output: tail(out, 4000)}
		switch {
		case rep.Result.Canceled:
			pkg.Tests.Note = "stopped before the end"
		case rep.Result.Limit != "":
			pkg.Tests.Note = "ended by the " + rep.Result.Limit + " limit"
		}
		switch {
		case rep.OK() && rep.Passed == 0:
			return "The test run found no tests; write at least one test_*.py with unittest tests."
		case rep.OK():
			return ""
		}
		return fmt.Sprintf("The tests failed (%s):\n%s", pkg.Tests.Line(), tail(out, 3000))
	}
	if failure == "" {
		failure = test()
	}
	before, _ = readTree(dir) // what the debugger starts from
	for attempt := 1; failure != "" && attempt <= maxFix; attempt++ {
		if err := ctx.Err(); err != nil {
			return done(fmt.Errorf("build step: %w", err))
		}
		entry := DebugEntry{Attempt: attempt, Failure: tail(failure, 1500)}
		answer, err := b.debug(ctx, c, dir, failure, attempt)
		if err != nil {
			pkg.DebugLog = append(pkg.DebugLog, entry)
			return done(fmt.Errorf("build step: debugger: %w", err))
		}
		if msg := applyAnswer(ctx, dir, answer); msg != "" {
			entry.Changes = "unusable answer: " + msg
			failure = "Your previous answer could not be used: " + msg + "\n\nThe failure before it:\n" + failure
		} else {
			entry.Changes = "applied"
			failure = test()
			entry.Passed = failure == ""
		}
		pkg.DebugLog = append(pkg.DebugLog, entry)
	}
	if failure != "" {
		return done(fmt.Errorf("build step: the tests still fail after %d debugger attempt(s): %s", len(pkg.DebugLog), tail(failure, 600)))
	}
	pkg.Passed = true
	return done(nil)
}

// treeDiff compares the files before with the tree under dir now.
func treeDiff(before map[string]string, dir string) (diff, summary string) {
	after, err := readTree(dir)
	if err != nil {
		return "", ""
	}
	paths := map[string]bool{}
	for k := range before {
		paths[k] = true
	}
	for k := range after {
		paths[k] = true
	}
	sorted := make([]string, 0, len(paths))
	for k := range paths {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var d, sum strings.Builder
	for _, p := range sorted {
		old, oldOK := before[p]
		cur, newOK := after[p]
		if oldOK && newOK && old == cur {
			continue
		}
		text, added, removed := patch.UnifiedDiff(p, old, cur, oldOK, newOK)
		d.WriteString(text)
		action := "modify"
		switch {
		case !oldOK:
			action = "create"
		case !newOK:
			action = "delete"
		}
		fmt.Fprintf(&sum, "%s %s +%d -%d\n", action, p, added, removed)
	}
	return d.String(), strings.TrimSpace(sum.String())
}

// debug asks the debugger role for a fix.
func (b *Builder) debug(ctx context.Context, c Call, dir, failure string, attempt int) (string, error) {
	if b.Engine == nil {
		return "", errors.New("no model loaded")
	}
	var p strings.Builder
	if r := c.With["requirements"]; r != "" {
		fmt.Fprintf(&p, "Requirements:\n%s\n\n", r)
	}
	fmt.Fprintf(&p, "Debugging attempt %d.\n\n%s\n\nThe project's files:\n", attempt, failure)
	files, _ := readTree(dir)
	paths := make([]string, 0, len(files))
	for k := range files {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	for _, path := range paths {
		fmt.Fprintf(&p, "\nFILE: %s\n````\n%s````\n", path, ensureNL(files[path]))
	}
	p.WriteString("\nFix the cause. Answer with each changed file as 'FILE: path' and a fenced block holding the whole new file, or with SEARCH/REPLACE blocks.\n")
	msgs := []models.Message{{Role: models.RoleSystem, Content: RolePrompt("debugger")}, {Role: models.RoleUser, Content: p.String()}}
	start := time.Now()
	answer, err := b.Engine.Generate(ctx, msgs, models.GenOptions{MaxTokens: cmp.Or(b.MaxTokens, 2048)}, func(tok string) { c.Emit(tok) })
	if b.Memory != nil {
		if _, rerr := b.Memory.AddExchange(memory.Exchange{Time: start, Role: "debugger", Prompt: p.String(), Answer: answer, Duration: time.Since(start)}); rerr != nil {
			// the fix itself is still usable: a missing history entry does not fail the build
			slog.Warn("build step: could not record the debugger exchange", "step", c.Step.ID, "attempt", attempt, "err", rerr)
		}
	}
	return answer, err
}

func ensureNL(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// applyAnswer applies a model answer's edit blocks under dir (whole files
// may replace existing ones) and returns why it could not, or "".
func applyAnswer(ctx context.Context, dir, answer string) string {
	p, err := patch.Parse(answer)
	if err != nil {
		return err.Error()
	}
	if len(p.Edits) == 0 {
		return "no edit blocks found (expected 'FILE: path' followed by a fenced block)"
	}
	if _, err := patch.Apply(ctx, dir, p, patch.Options{AllowOverwrite: true}); err != nil {
		return err.Error()
	}
	return ""
}

// skipDir reports directories that are never part of a package.
func skipDir(name string) bool {
	switch name {
	case ".git", ".codeloom", "__pycache__", ".pytest_cache", ".venv", "venv", "node_modules", ".mypy_cache", ".ruff_cache":
		return true
	}
	return false
}

// readTree reads every regular file under dir (caches skipped) by relative path.
func readTree(dir string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), ".pyc") {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	return files, err
}

func mustList(dir string) []string {
	files, _ := readTree(dir)
	out := make([]string, 0, len(files))
	for k := range files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Writer runs write steps: after the user approves, the package's files are
// written (confined, atomically per file) into with.dest, which must be a
// new or empty folder. A package whose tests did not pass is refused.
type Writer struct {
	Approver Approver
	// OnWritten, when set, is called with the folder after a write.
	OnWritten func(dest string, pkg *Package)
}

// Run writes the package after approval.
func (w *Writer) Run(ctx context.Context, c Call) (string, error) {
	if w.Approver == nil {
		return "", errors.New("write step: nobody to approve the write")
	}
	var pkg Package
	if err := json.Unmarshal([]byte(c.With["package"]), &pkg); err != nil {
		return "", fmt.Errorf("write step: package: %w", err)
	}
	if !pkg.Passed {
		return "", errors.New("write step: the package's tests did not pass; nothing written")
	}
	dest := strings.TrimSpace(c.With["dest"])
	if dest == "" {
		return "", errors.New("write step: no destination folder")
	}
	dest, err := filepath.Abs(dest)
	if err != nil {
		return "", fmt.Errorf("write step: %w", err)
	}
	if err := checkNewFolder(dest); err != nil {
		return "", fmt.Errorf("write step: %w", err)
	}
	paths := pkg.Paths()
	detail := fmt.Sprintf("files:\n  %s\n%s\n", strings.Join(paths, "\n  "), pkg.Tests.Line())
	ok, err := w.Approver.Approve(ctx, Question{Kind: AskWrite, Title: fmt.Sprintf("Write the new project (%d files) to %s?", len(paths), dest), Detail: detail})
	if err != nil {
		return "", fmt.Errorf("write step: %w", err)
	}
	if !ok {
		return "", fmt.Errorf("write step: writing to %s: %w", dest, ErrDeclined)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", fmt.Errorf("write step: %w", err)
	}
	for _, p := range paths {
		if err := patch.WriteFile(dest, p, []byte(pkg.Files[p]), 0o644); err != nil {
			return "", fmt.Errorf("write step: %s: %w", p, err)
		}
	}
	if w.OnWritten != nil {
		w.OnWritten(dest, &pkg)
	}
	return fmt.Sprintf("wrote %d files to %s (%s)", len(paths), dest, pkg.Tests.Line()), nil
}

// checkNewFolder accepts a folder that does not exist or is empty.
func checkNewFolder(dest string) error {
	ents, err := os.ReadDir(dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("destination %s: %w", dest, err)
	case len(ents) > 0:
		return fmt.Errorf("destination %s exists and is not empty; choose a new folder", dest)
	}
	return nil
}

// TaskRunner runs task steps: one pipeline cycle (plan, patch, verify, debug,
// approvals) on Root with with.request. The pipeline's "Add another
// feature?" is answered no: further cycles are the autonomy loop's decision.
type TaskRunner struct {
	Config pipeline.Config
}

// Run runs one pipeline cycle.
func (t *TaskRunner) Run(ctx context.Context, c Call) (string, error) {
	cfg := t.Config
	if cfg.Approver == nil {
		return "", errors.New("task step: needs an approver")
	}
	cfg.Approver = oneCycle{cfg.Approver}
	if c.Emit != nil {
		// Forward the pipeline's progress as the step's progress text.
		prev := cfg.OnEvent
		cfg.OnEvent = func(ev pipeline.Event) {
			if prev != nil {
				prev(ev)
			}
			switch ev.Type {
			case pipeline.EventToken:
				c.Emit(ev.Text)
			case pipeline.EventStep:
				c.Emit("\n[" + ev.Step + "]\n")
			case pipeline.EventGate:
				if ev.Gate != nil {
					c.Emit("\n" + ev.Gate.Line() + "\n")
				}
			case pipeline.EventPatch, pipeline.EventApplied:
				if ev.Changes != nil {
					c.Emit("\n" + ev.Changes.Summary())
				}
			}
		}
	}
	p, err := pipeline.New(cfg)
	if err != nil {
		return "", fmt.Errorf("task step: %w", err)
	}
	out, err := p.Run(ctx, c.With["request"])
	if err != nil {
		return "", fmt.Errorf("task step: %w", err)
	}
	last := out.Last()
	if last == nil || !last.OK() {
		status := "no cycle"
		if last != nil {
			status = last.Status
			if last.Note != "" {
				status += ": " + last.Note
			}
		}
		return "", fmt.Errorf("task step: the cycle ended %s", status)
	}
	return fmt.Sprintf("%s (%d patch attempt(s))", last.Status, last.Attempts), nil
}

// oneCycle answers the pipeline's "Add another feature?" with no.
type oneCycle struct{ Approver }

// Approve says no to "Add another feature?" and forwards the rest.
func (o oneCycle) Approve(ctx context.Context, q Question) (bool, error) {
	if q.Kind == pipeline.AskNext {
		return false, nil
	}
	return o.Approver.Approve(ctx, q)
}

// Guide forwards free-text questions when the wrapped approver answers them.
func (o oneCycle) Guide(ctx context.Context, q Question) (string, error) {
	if g, ok := o.Approver.(pipeline.Guidance); ok {
		return g.Guide(ctx, q)
	}
	return "", nil
}

// Builtin returns the built-in workflow name, parsed.
func Builtin(name string) (*Workflow, error) {
	data, err := workflows.Get(name)
	if err != nil {
		return nil, err
	}
	return Parse(data, "builtin:"+name)
}

// BuiltinNames lists the built-in workflows.
func BuiltinNames() []string { return workflows.Names() }

// Resolve finds a workflow by reference: a built-in name, a name in
// <root>/.codeloom/workflows/NAME.yaml, or a file path (relative to root
// when not absolute).
func Resolve(root, ref string) (*Workflow, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, errors.New("empty workflow reference")
	}
	if !strings.ContainsAny(ref, "/\\") && !strings.HasSuffix(ref, ".yaml") && !strings.HasSuffix(ref, ".yml") {
		if root != "" {
			p := filepath.Join(root, memory.DirName, "workflows", ref+".yaml")
			if _, err := os.Stat(p); err == nil {
				return Load(p)
			}
		}
		return Builtin(ref)
	}
	p := ref
	if !filepath.IsAbs(p) && root != "" {
		if _, err := os.Stat(p); err != nil {
			p = filepath.Join(root, ref)
		}
	}
	return Load(p)
}
