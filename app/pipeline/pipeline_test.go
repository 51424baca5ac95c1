package pipeline

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/assets"
	"codeloom/models"
	"codeloom/runtime"
)

const planAnswer = `{"steps":[{"objective":"Give the 10 % discount from 100 units on","files":["inventory/pricing.py"],"tests":["tests/test_pricing.py"],"risks":"off-by-one at the boundary"}]}`

// wrongPatch changes the boundary but still misses 100 units.
const wrongPatch = "I will adjust the boundary.\n\ninventory/pricing.py\n```python\n<<<<<<< SEARCH\n    if quantity > 100:\n        return 10\n=======\n    if quantity > 101:\n        return 10\n>>>>>>> REPLACE\n```\n"

// fixAfterWrong fixes the boundary on top of wrongPatch.
const fixAfterWrong = "The test expects 10 % at exactly 100 units.\n\n--- a/inventory/pricing.py\n+++ b/inventory/pricing.py\n@@ -21,2 +21,2 @@\n-    if quantity > 101:\n+    if quantity >= 100:\n         return 10\n"

// directFix fixes the original code.
const directFix = "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 100:\n=======\n    if quantity >= 100:\n>>>>>>> REPLACE\n"

// fixture is a copy of the sample project with its store, graph and runner.
type fixture struct {
	root  string
	store *memory.Store
	proj  *codegraph.Project
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root, err := assets.ExtractSample(filepath.Join(t.TempDir(), "sample"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := memory.OpenProject(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	proj, err := codegraph.Open(context.Background(), root, codegraph.Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proj.Close() })
	return &fixture{root: root, store: store, proj: proj}
}

func (f *fixture) config(engine models.Engine, ap *ScriptedApprover) Config {
	// The probe gate is covered by the first test (default policy); the
	// others skip it to keep the suite's Python start-ups down.
	off := false
	return Config{
		Policy:   &Policy{Gates: map[string]GatePolicy{GateProbe: {Enabled: &off}}},
		Root:     f.root,
		Engine:   engine,
		Runner:   runtime.New(runtime.WithRecorder(f.store)),
		Approver: ap,
		Guidance: ap,
		Memory:   f.store,
		Graph:    f.proj,
	}
}

// tree reads the project's files (without CodeLoom's own data).
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".codeloom" || d.Name() == "__pycache__") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("file count changed: %d → %d", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("%s changed", k)
		}
	}
}

func run(t *testing.T, cfg Config, request string) (*Pipeline, *Outcome, []Event) {
	t.Helper()
	var events []Event
	cfg.OnEvent = func(e Event) { events = append(events, e) }
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Run(context.Background(), request)
	if err != nil {
		t.Fatalf("run: %v (outcome %+v)", err, out.Last())
	}
	return p, out, events
}

func TestFailingPatchIsDebuggedAndLeavesALesson(t *testing.T) {
	f := newFixture(t)
	eng := models.NewScripted("edit", planAnswer, wrongPatch, fixAfterWrong)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	cfg := f.config(eng, ap)
	cfg.Policy = nil // the project's policy: defaults, every gate on
	p, out, events := run(t, cfg, "bulk_discount should give 10 % from 100 units, the test fails")
	c := out.Last()
	if c.Status != StatusPassed || c.Attempts != 2 || c.Kind != KindEdit {
		t.Fatalf("cycle = %+v", c)
	}
	code := tree(t, f.root)["inventory/pricing.py"]
	if !strings.Contains(code, "if quantity >= 100:") {
		t.Fatalf("fix not applied:\n%s", code)
	}
	// The debugger saw the failing test output and the frame mapped to its node.
	calls := eng.Calls()
	if len(calls) != 4 {
		t.Fatalf("model calls = %d", len(calls))
	}
	dbg := calls[3].Messages[len(calls[3].Messages)-1].Content
	for _, want := range []string{"Failed check: tests", "AssertionError: 5 != 10", "tests/test_pricing.py:17 in tests.test_pricing.BulkDiscountTest.test_one_hundred_units_earn_ten_percent", "if quantity > 101:"} {
		if !strings.Contains(dbg, want) {
			t.Fatalf("debugger prompt lacks %q:\n%s", want, dbg)
		}
	}
	// Every role's system prompt carries the original request.
	for i, call := range calls {
		if !strings.Contains(call.Messages[0].Content, "bulk_discount should give 10 %") {
			t.Fatalf("call %d's system prompt lacks the request", i)
		}
	}
	if calls[0].Options.Grammar == "" || calls[1].Options.JSONSchema == "" {
		t.Fatal("classification/plan were not constrained")
	}
	// Gates: the tests gate failed first, then passed with counts.
	var gates []GateResult
	for _, e := range events {
		if e.Type == EventGate {
			gates = append(gates, *e.Gate)
		}
	}
	var testGates []GateResult
	for _, g := range gates {
		if g.Name == GateTests {
			testGates = append(testGates, g)
		}
	}
	if last := gates[len(gates)-1]; last.Name != GateProbe || last.Status != GatePassed {
		t.Fatalf("probe gate = %+v", last)
	}
	if len(testGates) != 2 || testGates[0].Status != GateFailed || testGates[1].Status != GatePassed {
		t.Fatalf("test gates = %+v", testGates)
	}
	if tc := testGates[0].Tests; tc == nil || tc.Failed != 1 || tc.Passed < 1 {
		t.Fatalf("test counts = %+v", testGates[0].Tests)
	}
	if testGates[1].Wall <= 0 || testGates[1].PeakRSS <= 0 {
		t.Fatalf("gate metrics missing: %+v", testGates[1])
	}
	// Memory: lesson card, versions, exchanges, approvals, runs.
	lessons, err := f.store.Lessons(0)
	if err != nil || len(lessons) != 1 {
		t.Fatalf("lessons = %v, %v", lessons, err)
	}
	l := lessons[0]
	if !strings.Contains(l.Failure, "tests failed") || !strings.Contains(l.Failure, "5 != 10") ||
		!strings.Contains(l.Fix, "+    if quantity >= 100:") || !strings.Contains(l.DiffSummary, "modify inventory/pricing.py +1 -1") {
		t.Fatalf("lesson = %+v", l)
	}
	if c.LessonID != l.ID {
		t.Fatalf("cycle lesson %q, stored %q", c.LessonID, l.ID)
	}
	all, _ := f.store.Versions("inventory/pricing.py", 0)
	var vers, nodeVers []memory.Version
	for _, v := range all {
		if IsNodeVersion(v) {
			nodeVers = append(nodeVers, v)
		} else {
			vers = append(vers, v)
		}
	}
	if len(vers) != 2 || !strings.Contains(string(vers[1].Content), "if quantity > 100:") {
		t.Fatalf("file versions = %d", len(vers))
	}
	// Node versions keep just the changed function, innermost only.
	if len(nodeVers) != 2 || nodeVers[1].NodeName != "inventory.pricing.bulk_discount" ||
		!strings.HasPrefix(string(nodeVers[1].Content), "def bulk_discount(quantity):") || !strings.Contains(string(nodeVers[1].Content), "if quantity > 100:") {
		t.Fatalf("node versions = %+v", nodeVers)
	}
	exs, _ := f.store.Exchanges(p.Session(), 0)
	if len(exs) != 4 || exs[0].Role != RoleDebugger {
		t.Fatalf("exchanges = %d", len(exs))
	}
	apps, _ := f.store.Approvals(0)
	if len(apps) < 5 { // apply, run, apply, run, confirm, next
		t.Fatalf("approvals = %d", len(apps))
	}
	runs, _ := f.store.Runs(0)
	if len(runs) < 4 {
		t.Fatalf("runs = %d", len(runs))
	}
	// The graph was re-indexed: the node's code is the fixed one.
	g := f.proj.Graph()
	n, ok := g.NodeAt("inventory/pricing.py", 21)
	if !ok || n.Kind != codegraph.KindFunction {
		t.Fatalf("no function node at the fixed line: %+v", n)
	}
	if code, _ := g.Code(n.ID); !strings.Contains(string(code), ">= 100") {
		t.Fatalf("graph not re-indexed: %s", code)
	}
	// The session exports as Markdown and JSON.
	log, err := ExportSession(f.store, p.Session(), 0)
	if err != nil {
		t.Fatal(err)
	}
	md := log.Markdown()
	for _, want := range []string{"# CodeLoom session " + p.Session(), "Apply this patch? → **yes**", "### ", "gate:tests", "## Lessons"} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}

	// A later, similar request gets the lesson as a few-shot example.
	eng2 := models.NewScripted("explain", "bulk_discount returns 10 from 100 units.")
	ap2 := &ScriptedApprover{Default: true}
	_, out2, _ := run(t, f.config(eng2, ap2), "how does bulk_discount decide the discount?")
	if out2.Last().Status != StatusAnswered || !strings.Contains(out2.Last().Answer, "10 from 100") {
		t.Fatalf("explain cycle = %+v", out2.Last())
	}
	if prompt := eng2.Calls()[1].Messages[1].Content; !strings.Contains(prompt, "Lessons from earlier tasks") || !strings.Contains(prompt, "5 != 10") {
		t.Fatalf("lesson not offered as an example:\n%s", prompt)
	}
}

func TestMalformedPatchIsReasked(t *testing.T) {
	f := newFixture(t)
	malformed := "--- a/inventory/pricing.py\n+++ b/inventory/pricing.py\n@@ -25,3 +25,3 @@\n-    if quantity > 100:\n+    if quantity >= 100:\n"
	eng := models.NewScripted("edit", planAnswer, malformed, directFix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	_, out, _ := run(t, f.config(eng, ap), "fix the bulk discount boundary")
	if c := out.Last(); c.Status != StatusPassed || c.Attempts != 1 {
		t.Fatalf("cycle = %+v", c)
	}
	calls := eng.Calls()
	if len(calls) != 4 {
		t.Fatalf("calls = %d", len(calls))
	}
	re := calls[3].Messages
	if len(re) != 4 || re[2].Role != models.RoleAssistant || re[2].Content != malformed {
		t.Fatalf("re-ask does not carry the bad answer: %+v", re)
	}
	if !strings.Contains(re[3].Content, "hunk 1: header says 3 old and 3 new lines") {
		t.Fatalf("re-ask lacks the parse error:\n%s", re[3].Content)
	}
}

func TestEscapingPathsAreRefusedAndNothingChanges(t *testing.T) {
	f := newFixture(t)
	outside := t.TempDir()
	before := tree(t, f.root)
	dotdot := "FILE: ../evil.py\n```python\nprint('escaped')\n```\n"
	abs := "--- /dev/null\n+++ " + filepath.Join(outside, "evil.py") + "\n@@ -0,0 +1 @@\n+print('escaped')\n"
	eng := models.NewScripted("create", planAnswer, dotdot, abs)
	ap := &ScriptedApprover{Default: true}
	cfg := f.config(eng, ap)
	cfg.MaxFixAttempts = 1
	cfg.Policy = &Policy{MaxReasks: 1}
	_, out, events := run(t, cfg, "add a helper module")
	c := out.Last()
	if c.Status != StatusFailed {
		t.Fatalf("cycle = %+v", c)
	}
	var refusals []string
	for _, e := range events {
		if e.Type == EventInfo && strings.Contains(e.Text, "refused") {
			refusals = append(refusals, e.Text)
		}
	}
	if len(refusals) != 2 || !strings.Contains(refusals[0], "escapes the project root") || !strings.Contains(refusals[1], "absolute paths are not allowed") {
		t.Fatalf("refusals = %q", refusals)
	}
	if ap.AskedKind(AskApply) != 0 {
		t.Fatal("a refused patch was offered for approval")
	}
	if ap.AskedKind(AskGuidance) != 1 {
		t.Fatalf("guidance asked %d times", ap.AskedKind(AskGuidance))
	}
	sameFiles(t, before, tree(t, f.root))
	if _, err := os.Stat(filepath.Join(filepath.Dir(f.root), "evil.py")); err == nil {
		t.Fatal("../evil.py was written")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatal("absolute path was written")
	}
}

func TestRejectedApprovalChangesNothing(t *testing.T) {
	f := newFixture(t)
	before := tree(t, f.root)
	eng := models.NewScripted("edit", planAnswer, directFix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskApply: {false}}}
	_, out, _ := run(t, f.config(eng, ap), "fix the bulk discount boundary")
	if c := out.Last(); c.Status != StatusRejected || len(c.Changes) != 0 {
		t.Fatalf("cycle = %+v", c)
	}
	sameFiles(t, before, tree(t, f.root))
	if ap.AskedKind(AskRun) != 0 {
		t.Fatal("checks were run after a rejected patch")
	}
	apps, _ := f.store.Approvals(0)
	if len(apps) != 1 || apps[0].Answer || apps[0].Question != "Apply this patch?" {
		t.Fatalf("approvals = %+v", apps)
	}
	if vers, _ := f.store.Versions("", 0); len(vers) != 0 {
		t.Fatalf("versions recorded for a rejected patch: %d", len(vers))
	}
}

func TestExhaustedFixAttemptsAskForGuidance(t *testing.T) {
	f := newFixture(t)
	wrong2 := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 101:\n=======\n    if quantity > 102:\n>>>>>>> REPLACE\n"
	fix := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 102:\n=======\n    if quantity >= 100:\n>>>>>>> REPLACE\n"
	eng := models.NewScripted("edit", planAnswer, wrongPatch, wrong2, fix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}},
		Guidance: []string{"compare with >= so that exactly 100 units count"}}
	cfg := f.config(eng, ap)
	cfg.MaxFixAttempts = 2
	_, out, _ := run(t, cfg, "fix the bulk discount boundary")
	c := out.Last()
	if c.Status != StatusPassed || c.Attempts != 3 {
		t.Fatalf("cycle = %+v", c)
	}
	qs := ap.Questions()
	var guidance []Question
	for _, q := range qs {
		if q.Kind == AskGuidance {
			guidance = append(guidance, q)
		}
	}
	if len(guidance) != 1 || !strings.Contains(guidance[0].Title, "2 fix attempts") {
		t.Fatalf("guidance questions = %+v", guidance)
	}
	last := eng.Calls()[4].Messages[1].Content
	if !strings.Contains(last, "The user adds:\n- compare with >= so that exactly 100 units count") {
		t.Fatalf("guidance not fed back:\n%s", last)
	}

	// Without guidance the loop stops after max_fix_attempts and records an
	// unresolved lesson.
	f2 := newFixture(t)
	eng2 := models.NewScripted("edit", planAnswer, wrongPatch, wrong2)
	ap2 := &ScriptedApprover{Default: true}
	cfg2 := f2.config(eng2, ap2)
	cfg2.MaxFixAttempts = 2
	_, out2, _ := run(t, cfg2, "fix the bulk discount boundary")
	if c := out2.Last(); c.Status != StatusFailed || c.Attempts != 2 {
		t.Fatalf("cycle = %+v", c)
	}
	if ap2.AskedKind(AskGuidance) != 1 || eng2.Remaining() != 0 {
		t.Fatal("loop did not stop at the guidance question")
	}
	lessons, _ := f2.store.Lessons(0)
	if len(lessons) != 1 || !contains(lessons[0].Tags, "unresolved") {
		t.Fatalf("lessons = %+v", lessons)
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

func TestNoModelFallsBackToTheUserForTheKind(t *testing.T) {
	f := newFixture(t)
	ap := &ScriptedApprover{Default: true, Guidance: []string{"run"}}
	cfg := f.config(nil, ap)
	cfg.Policy = &Policy{Gates: map[string]GatePolicy{GateProbe: {Command: []string{"python3", "-m", "inventory.cli", "report"}}}}
	_, out, _ := run(t, cfg, "show me the stock report")
	c := out.Last()
	if c.Kind != KindRun || c.Status != StatusAnswered || !strings.Contains(c.Answer, "widget") && c.Answer == "" {
		t.Fatalf("cycle = %+v", c)
	}
	if ap.AskedKind(AskKind) != 1 || ap.AskedKind(AskRun) != 1 {
		t.Fatalf("questions = %+v", ap.Questions())
	}
	// Declining "Run this?" runs nothing.
	ap2 := &ScriptedApprover{Default: false, Guidance: []string{"run"}}
	cfg2 := f.config(nil, ap2)
	cfg2.Policy = cfg.Policy
	_, out2, _ := run(t, cfg2, "show me the stock report")
	if out2.Last().Status != StatusNotRun {
		t.Fatalf("cycle = %+v", out2.Last())
	}
	// An edit without a model is a clear error, nothing changes.
	before := tree(t, f.root)
	p, err := New(Config{Root: f.root, Approver: ap, Kind: KindEdit, Memory: f.store})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(context.Background(), "change something")
	if err == nil || !strings.Contains(err.Error(), "no model is loaded") {
		t.Fatalf("err = %v", err)
	}
	sameFiles(t, before, tree(t, f.root))
}

func TestPolicyFile(t *testing.T) {
	root := t.TempDir()
	p, err := LoadPolicy(root)
	if err != nil || p.MaxFixAttempts != DefaultMaxFixAttempts || p.MaxReasks != DefaultMaxReasks || !p.Gate(GateTests).On() {
		t.Fatalf("defaults = %+v, %v", p, err)
	}
	os.MkdirAll(filepath.Join(root, ".codeloom"), 0o755)
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(root, PolicyFile), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("max_fix_attempts: 2\ngates:\n  static: {enabled: false}\n  tests: {command: [make, test], timeout: 90s}\n")
	p, err = LoadPolicy(root)
	if err != nil || p.MaxFixAttempts != 2 || p.Gate(GateStatic).On() || p.Gate(GateTests).Command[0] != "make" {
		t.Fatalf("policy = %+v, %v", p, err)
	}
	for _, bad := range []string{"gates:\n  lint: {}\n", "gates:\n  tests: {timeout: soon}\n", "max_fix: 3\n", "max_fix_attempts: -1\n", "limits: {memory_mb: -5}\n", "gates: [\n"} {
		write(bad)
		if _, err := LoadPolicy(root); err == nil {
			t.Fatalf("accepted %q", bad)
		}
	}
}

func TestParseFramesAndTestCounts(t *testing.T) {
	f := newFixture(t)
	out := "Traceback (most recent call last):\n  File \"" + filepath.Join(f.root, "tests/test_pricing.py") + "\", line 17, in test_x\n" +
		"  File \"/usr/lib/python3.11/unittest/case.py\", line 9, in assertEqual\n  File \"" + filepath.Join(f.root, "inventory/pricing.py") + "\", line 21, in bulk_discount\n" +
		"AssertionError\ninventory/pricing.py:21: more\n\nRan 9 tests in 0.005s\n\nFAILED (failures=1, errors=2)\n"
	frames := MapFrames(f.proj.Graph(), ParseFrames(f.root, out, 8), 2000)
	if len(frames) != 2 || frames[0].Path != "tests/test_pricing.py" || frames[1].Path != "inventory/pricing.py" || frames[1].Line != 21 {
		t.Fatalf("frames = %+v", frames)
	}
	if frames[1].NodeName != "inventory.pricing.bulk_discount" || !strings.Contains(frames[1].Code, "def bulk_discount") {
		t.Fatalf("frame not mapped: %+v", frames[1])
	}
	tc := parseTestCounts(out)
	if tc == nil || tc.Failed != 1 || tc.Errors != 2 || tc.Passed != 6 {
		t.Fatalf("counts = %+v", tc)
	}
	if tc := parseTestCounts("3 passed, 1 failed in 0.1s"); tc == nil || tc.Passed != 3 || tc.Failed != 1 {
		t.Fatalf("pytest counts = %+v", tc)
	}
}

func TestApprovers(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	ta := NewTerminalApprover(strings.NewReader("y\nno\nadd logging\n"), &out)
	if ok, err := ta.Approve(ctx, Question{Kind: AskApply, Title: "Apply this patch?", Detail: "diff"}); !ok || err != nil {
		t.Fatalf("y → %v %v", ok, err)
	}
	if ok, _ := ta.Approve(ctx, Question{Kind: AskRun, Title: "Run this?"}); ok {
		t.Fatal("no → yes")
	}
	if g, _ := ta.Guide(ctx, Question{Title: "Guidance?"}); g != "add logging" {
		t.Fatalf("guide = %q", g)
	}
	if _, err := ta.Approve(ctx, Question{Title: "again?"}); err == nil {
		t.Fatal("closed input gave an answer")
	}
	if !strings.Contains(out.String(), "Apply this patch? [y/N]") || !strings.Contains(out.String(), "diff") {
		t.Fatalf("terminal output = %q", out.String())
	}
	var notified []string
	aa := &AutoApprover{Notify: func(q Question, a bool) { notified = append(notified, q.Kind) }}
	if ok, _ := aa.Approve(ctx, Question{Kind: AskApply}); !ok {
		t.Fatal("auto said no to apply")
	}
	if ok, _ := aa.Approve(ctx, Question{Kind: AskNext}); ok {
		t.Fatal("auto said yes to another feature")
	}
	if g, _ := aa.Guide(ctx, Question{Kind: AskGuidance}); g != "" {
		t.Fatal("auto invented guidance")
	}
	if len(notified) != 3 {
		t.Fatalf("auto answers not reported: %v", notified)
	}
}

func TestPatchThatDoesNotCompileIsReaskedBeforeApproval(t *testing.T) {
	f := newFixture(t)
	broken := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 100:\n=======\n    if quantity >= 100\n>>>>>>> REPLACE\n"
	eng := models.NewScripted("edit", planAnswer, broken, directFix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	_, out, _ := run(t, f.config(eng, ap), "fix the bulk discount boundary")
	if c := out.Last(); c.Status != StatusPassed || c.Attempts != 1 {
		t.Fatalf("cycle = %+v", c)
	}
	if ap.AskedKind(AskApply) != 1 {
		t.Fatalf("apply asked %d times: the broken patch was offered", ap.AskedKind(AskApply))
	}
	re := eng.Calls()[3].Messages
	if !strings.Contains(re[len(re)-1].Content, "does not compile") || !strings.Contains(re[len(re)-1].Content, "inventory/pricing.py") {
		t.Fatalf("re-ask lacks the compile error:\n%s", re[len(re)-1].Content)
	}
}

func TestNotWhatIWantedLoopsWithTheUsersWords(t *testing.T) {
	f := newFixture(t)
	more := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity >= 100:\n=======\n    if quantity >= 200:\n        return 15\n    if quantity >= 100:\n>>>>>>> REPLACE\n"
	eng := models.NewScripted("edit", planAnswer, directFix, more)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskConfirm: {false, true}, AskNext: {false}},
		Guidance: []string{"also give 15 % from 200 units"}}
	_, out, _ := run(t, f.config(eng, ap), "fix the bulk discount boundary")
	if c := out.Last(); c.Status != StatusPassed || c.Attempts != 2 {
		t.Fatalf("cycle = %+v", c)
	}
	if !strings.Contains(tree(t, f.root)["inventory/pricing.py"], "return 15") {
		t.Fatal("second change not applied")
	}
	second := eng.Calls()[3].Messages[1].Content
	if !strings.Contains(second, "Failed check: user review") || !strings.Contains(second, "also give 15 % from 200 units") {
		t.Fatalf("the user's words did not reach the model:\n%s", second)
	}
}

func TestInterjectionReachesTheNextPrompt(t *testing.T) {
	f := newFixture(t)
	eng := models.NewScripted("edit", planAnswer, directFix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	cfg := f.config(eng, ap)
	var p *Pipeline
	cfg.OnEvent = func(e Event) {
		if e.Type == EventStepDone && e.Step == "plan" {
			p.Interject("keep the docstring in sync")
		}
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Run(context.Background(), "fix the bulk discount boundary")
	if err != nil || !out.OK() {
		t.Fatalf("%v %+v", err, out.Last())
	}
	if coder := eng.Calls()[2].Messages[1].Content; !strings.Contains(coder, "- keep the docstring in sync") {
		t.Fatalf("interjection missing:\n%s", coder)
	}
	// A cancelled context stops the loop with the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p2, _ := New(f.config(models.NewScripted("edit"), ap))
	if _, err := p2.Run(ctx, "anything"); err == nil {
		t.Fatal("cancelled run did not fail")
	}
}

func TestTesterRoleAddsTests(t *testing.T) {
	f := newFixture(t)
	newTest := "FILE: tests/test_boundary.py\n```python\nimport unittest\n\nfrom inventory import pricing\n\n\nclass BoundaryTest(unittest.TestCase):\n    def test_just_below_one_hundred(self):\n        self.assertEqual(pricing.bulk_discount(99), 5)\n```\n"
	eng := models.NewScripted("edit", planAnswer, directFix, newTest)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	cfg := f.config(eng, ap)
	cfg.WriteTests = true
	_, out, events := run(t, cfg, "fix the bulk discount boundary")
	c := out.Last()
	if c.Status != StatusPassed || len(c.Changes) != 2 {
		t.Fatalf("cycle = %+v", c)
	}
	if !strings.Contains(eng.Calls()[3].Messages[0].Content, "As the tester") || !strings.Contains(eng.Calls()[3].Messages[1].Content, "+    if quantity >= 100:") {
		t.Fatal("tester prompt lacks its role or the change")
	}
	var tests *GateResult
	for _, e := range events {
		if e.Type == EventGate && e.Gate.Name == GateTests {
			tests = e.Gate
		}
	}
	if tests == nil || tests.Tests == nil || tests.Tests.Passed != 10 {
		t.Fatalf("tests gate = %+v", tests)
	}
}

func TestRestoreVersion(t *testing.T) {
	f := newFixture(t)
	orig := tree(t, f.root)
	newFile := "FILE: inventory/extra.py\n```python\nX = 1\n```\n\ninventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 100:\n=======\n    if quantity >= 100:\n>>>>>>> REPLACE\n"
	eng := models.NewScripted("edit", planAnswer, newFile)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	run(t, f.config(eng, ap), "fix the boundary and add a constant")
	if _, ok := tree(t, f.root)["inventory/extra.py"]; !ok {
		t.Fatal("patch not applied")
	}
	vers, err := f.store.Versions("", 0)
	if err != nil || len(vers) != 3 {
		t.Fatalf("versions = %d, %v", len(vers), err)
	}
	var node memory.Version
	for _, v := range vers {
		if IsNodeVersion(v) {
			node = v
			if _, err := RestoreVersion(context.Background(), f.root, f.store, v.ID); err == nil {
				t.Fatal("a node version was restored as a whole file")
			}
		}
	}
	// One node back: only bulk_discount returns to its old code.
	if _, err := RestoreNodeVersion(context.Background(), f.root, f.store, f.proj.Graph(), node.ID); err != nil {
		t.Fatal(err)
	}
	now := tree(t, f.root)
	if now["inventory/pricing.py"] != orig["inventory/pricing.py"] || now["inventory/extra.py"] != "X = 1\n" {
		t.Fatalf("node restore: pricing.py =\n%s", now["inventory/pricing.py"])
	}
	if _, err := f.proj.UpdateFiles(context.Background(), []string{"inventory/pricing.py"}); err != nil {
		t.Fatal(err)
	}
	for _, v := range vers {
		if !IsNodeVersion(v) {
			if _, err := RestoreVersion(context.Background(), f.root, f.store, v.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	sameFiles(t, orig, tree(t, f.root))
	// Restoring keeps what it replaced: restoring that brings the fix back.
	all, _ := f.store.Versions("inventory/pricing.py", 0)
	var kept memory.Version
	for _, v := range all {
		if IsNodeVersion(v) && strings.Contains(v.Reason, "before restoring") {
			kept = v
			break
		}
	}
	if _, err := f.proj.UpdateFiles(context.Background(), []string{"inventory/pricing.py"}); err != nil {
		t.Fatal(err)
	}
	if _, err := RestoreNodeVersion(context.Background(), f.root, f.store, f.proj.Graph(), kept.ID); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tree(t, f.root)["inventory/pricing.py"], ">= 100") {
		t.Fatal("restore of the restore did not bring the fix back")
	}
	if _, err := RestoreVersion(context.Background(), f.root, f.store, "nonsense"); err == nil {
		t.Fatal("restored a missing version")
	}
}

// editingApprover edits a file when first asked to apply, as a user typing
// in the editor while the question is open would.
type editingApprover struct {
	*ScriptedApprover
	edit func()
	done bool
}

func (e *editingApprover) Approve(ctx context.Context, q Question) (bool, error) {
	if q.Kind == AskApply && !e.done {
		e.done = true
		e.edit()
	}
	return e.ScriptedApprover.Approve(ctx, q)
}

func TestFileChangedBeforeApplyIsReportedToTheModel(t *testing.T) {
	f := newFixture(t)
	file := filepath.Join(f.root, "inventory", "pricing.py")
	fix := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 100:  # checked\n=======\n    if quantity >= 100:  # checked\n>>>>>>> REPLACE\n"
	eng := models.NewScripted("edit", planAnswer, directFix, fix)
	sa := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	ap := &editingApprover{ScriptedApprover: sa, edit: func() {
		b, _ := os.ReadFile(file)
		os.WriteFile(file, []byte(strings.Replace(string(b), "if quantity > 100:", "if quantity > 100:  # checked", 1)), 0o644)
	}}
	cfg := f.config(eng, sa)
	cfg.Approver = ap
	_, out, _ := run(t, cfg, "fix the bulk discount boundary")
	if c := out.Last(); c.Status != StatusPassed || c.Attempts != 2 || len(c.Changes) != 1 {
		t.Fatalf("cycle = %+v", c)
	}
	if dbg := eng.Calls()[3].Messages[1].Content; !strings.Contains(dbg, "the patch no longer applies") {
		t.Fatalf("debugger not told:\n%s", dbg)
	}
}

func TestAnotherFeatureStartsANewCycleThatKnowsTheSession(t *testing.T) {
	f := newFixture(t)
	more := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity >= 100:\n=======\n    if quantity >= 200:\n        return 15\n    if quantity >= 100:\n>>>>>>> REPLACE\n"
	eng := models.NewScripted("edit", planAnswer, directFix, "edit", planAnswer, more)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {true, false}},
		Guidance: []string{"give 15 % from 200 units"}}
	_, out, _ := run(t, f.config(eng, ap), "fix the bulk discount boundary")
	if len(out.Cycles) != 2 || !out.OK() || out.Cycles[1].Request != "give 15 % from 200 units" {
		t.Fatalf("outcome = %+v", out)
	}
	sys := eng.Calls()[5].Messages[0].Content
	if !strings.Contains(sys, "fix the bulk discount boundary") || !strings.Contains(sys, "The current request, building on it:\n\"\"\"\ngive 15 % from 200 units") {
		t.Fatalf("second cycle's system prompt:\n%s", sys)
	}
	lessons, _ := f.store.Lessons(0)
	if len(lessons) != 2 {
		t.Fatalf("lessons = %d", len(lessons))
	}
}

func TestTerminalApproverSurvivesAnAbandonedQuestion(t *testing.T) {
	pr, pw := io.Pipe()
	ta := NewTerminalApprover(pr, io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ta.Approve(ctx, Question{Title: "abandoned?"}); err == nil {
		t.Fatal("cancelled question got an answer")
	}
	go pw.Write([]byte("yes\n"))
	if ok, err := ta.Approve(context.Background(), Question{Title: "next?"}); !ok || err != nil {
		t.Fatalf("next question: %v %v", ok, err)
	}
	pw.Close()
	if _, err := ta.Approve(context.Background(), Question{Title: "after close?"}); err == nil {
		t.Fatal("closed input answered")
	}
}

func TestDebugRequestReproducesTheFailureFirst(t *testing.T) {
	f := newFixture(t)
	eng := models.NewScripted("debug", planAnswer, directFix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	_, out, _ := run(t, f.config(eng, ap), "why does test_one_hundred_units_earn_ten_percent fail?")
	if c := out.Last(); c.Status != StatusPassed || c.Kind != KindDebug || c.Attempts != 1 {
		t.Fatalf("cycle = %+v", c)
	}
	calls := eng.Calls()
	if !strings.Contains(calls[2].Messages[0].Content, "As the debugger") || !strings.Contains(calls[2].Messages[1].Content, "AssertionError: 5 != 10") {
		t.Fatalf("first patch was not asked from the debugger with the failure:\n%s", calls[2].Messages[1].Content)
	}
	if qs := ap.Questions(); qs[0].Kind != AskRun {
		t.Fatalf("first question = %+v, want the run of the checks", qs[0])
	}
}

// stuckEngine never answers until its context ends.
type stuckEngine struct{}

func (stuckEngine) Generate(ctx context.Context, _ []models.Message, _ models.GenOptions, _ func(string)) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

func (stuckEngine) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return nil, models.ErrNoEmbeddings
}

func TestModelTimeoutIsAClearError(t *testing.T) {
	f := newFixture(t)
	before := tree(t, f.root)
	ap := &ScriptedApprover{Default: true}
	cfg := f.config(stuckEngine{}, ap)
	cfg.Kind = KindEdit
	cfg.GenTimeout = 200 * time.Millisecond
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Run(context.Background(), "fix the bulk discount boundary")
	if err == nil || !strings.Contains(err.Error(), "did not finish within 200ms") || out.Last().Status != StatusError {
		t.Fatalf("err = %v, cycle = %+v", err, out.Last())
	}
	sameFiles(t, before, tree(t, f.root))
}

func TestWholeFileRewriteNeedsThePolicy(t *testing.T) {
	f := newFixture(t)
	fixed := strings.Replace(tree(t, f.root)["inventory/pricing.py"], "if quantity > 100:", "if quantity >= 100:", 1)
	whole := "FILE: inventory/pricing.py\n```python\n" + fixed + "```\n"
	// Refused by default: re-asked, then a diff is accepted.
	eng := models.NewScripted("edit", planAnswer, whole, directFix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	_, out, _ := run(t, f.config(eng, ap), "fix the bulk discount boundary")
	if c := out.Last(); c.Status != StatusPassed || !strings.Contains(eng.Calls()[3].Messages[3].Content, "already exists") {
		t.Fatalf("cycle = %+v", c)
	}
	// Allowed by policy: applied as is.
	f2 := newFixture(t)
	eng2 := models.NewScripted("edit", planAnswer, whole)
	ap2 := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	cfg := f2.config(eng2, ap2)
	cfg.Policy.AllowOverwrite = true
	_, out2, _ := run(t, cfg, "fix the bulk discount boundary")
	if c := out2.Last(); c.Status != StatusPassed || c.Changes[0].Changes[0].Added != 1 {
		t.Fatalf("cycle = %+v", c)
	}
	if !strings.Contains(eng2.Calls()[2].Messages[1].Content, "or the whole new content of an existing file") {
		t.Fatal("prompt does not offer whole-file rewrites")
	}
}

func TestGoProjectGates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go module")
	}
	root := t.TempDir()
	files := map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.21\n",
		"calc.go":      "package calc\n\n// Max returns the larger of a and b.\nfunc Max(a, b int) int {\n\tif a < b {\n\t\treturn a\n\t}\n\treturn b\n}\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) {\n\tif got := Max(2, 3); got != 3 {\n\t\tt.Fatalf(\"Max(2, 3) = %d\", got)\n\t}\n}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store, err := memory.OpenProject(root)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	proj, err := codegraph.Open(context.Background(), root, codegraph.Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer proj.Close()
	fix := "calc.go\n<<<<<<< SEARCH\n\tif a < b {\n=======\n\tif a > b {\n>>>>>>> REPLACE\n"
	eng := models.NewScripted("debug", `{"steps":[{"objective":"fix Max","files":["calc.go"],"tests":["calc_test.go"],"risks":"none"}]}`, fix)
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	_, out, events := run(t, Config{Root: root, Engine: eng, Runner: runtime.New(runtime.WithRecorder(store)),
		Approver: ap, Guidance: ap, Memory: store, Graph: proj}, "TestMax fails")
	if c := out.Last(); c.Status != StatusPassed {
		t.Fatalf("cycle = %+v", c)
	}
	var names []string
	for _, e := range events {
		if e.Type == EventGate {
			names = append(names, e.Gate.Name+":"+e.Gate.Status)
		}
	}
	// debug reproduces first (tests fail), then syntax (go vet) … probe (go build) pass.
	want := "syntax:skipped static:skipped tests:failed probe:skipped syntax:passed static:skipped tests:passed probe:passed"
	if strings.Join(names, " ") != want {
		t.Fatalf("gates = %s", strings.Join(names, " "))
	}
	if dbg := eng.Calls()[2].Messages[1].Content; !strings.Contains(dbg, "Max(2, 3) = 2") || !strings.Contains(dbg, "calc_test.go:7") {
		t.Fatalf("debugger prompt lacks the go test failure:\n%s", dbg)
	}
}

func TestNormalizeKind(t *testing.T) {
	for in, want := range map[string]string{"edit": "edit", " Debug.\n": "debug", "This is an explain request": "explain",
		"`create`": "create", "refactor": "", "": "", "running": ""} {
		if got := normalizeKind(in); got != want {
			t.Fatalf("normalizeKind(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClipTextCutsAtARuneBoundary(t *testing.T) {
	got := clipText("x"+strings.Repeat("é", 10), 4)
	if !utf8.ValidString(got) || !strings.HasPrefix(got, "xé\n") {
		t.Fatalf("clipText = %q", got)
	}
	if got := clipText("short", 10); got != "short" {
		t.Fatalf("clipText(short) = %q", got)
	}
}
