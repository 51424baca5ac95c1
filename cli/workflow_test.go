package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"codeloom/app/memory"
	"codeloom/app/workflow"
	"codeloom/models/gguf"
)

const wordcountScript = "../app/workflow/testdata/wordcount.script"

func TestWorkflowValidateCLI(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := taskRunCLI(t, "", "workflow", dir, "validate", "hello")
	if code != ExitOK || !strings.Contains(out, "hello is valid: 3 steps") {
		t.Fatalf("builtin: %d %q %q", code, out, errs)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("id: bad\nsteps:\n  - {id: a, type: run, command: ls, depends_on: [b]}\n  - {id: b, type: run, command: \"{{.a}}\"}\n  - {id: c, type: llm, prompt: \"{{.missing}}\"}\n"), 0o644)
	code, _, errs = taskRunCLI(t, "", "workflow", dir, "validate", "bad.yaml")
	if code != ExitFailure || !strings.Contains(errs, "dependency cycle") || !strings.Contains(errs, "{{.missing}}") {
		t.Fatalf("invalid: %d %q", code, errs)
	}
	code, out, _ = taskRunCLI(t, "", "workflow", dir, "validate", "new-project", "--dot")
	if code != ExitOK || !strings.Contains(out, `"tests" -> "build"`) {
		t.Fatalf("dot: %d %q", code, out)
	}
	for _, args := range [][]string{
		{"workflow"},
		{"workflow", filepath.Join(dir, "nope"), "validate", "hello"},
		{"workflow", dir, "frobnicate", "hello"},
		{"workflow", dir, "validate", "no-such-workflow"},
		{"workflow", dir, "run", "hello", "--input", "nobody"},
		{"workflow", dir, "run", "hello", "--input", "whom=x", "--yes"},
		{"workflow", dir, "auto", "improve it", "--script", wordcountScript},
	} {
		if code, _, errs := taskRunCLI(t, "", args...); code != ExitUsage || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	code, out, _ = taskRunCLI(t, "", "workflow", dir, "list")
	if code != ExitOK || !strings.Contains(out, "new-project") {
		t.Fatalf("list: %d %q", code, out)
	}
}

func TestWorkflowRunCLI(t *testing.T) {
	dir := t.TempDir()
	// Asked on the terminal: "n" runs nothing.
	code, out, _ := taskRunCLI(t, "n\n", "workflow", dir, "run", "hello")
	if code != ExitFailure || !strings.Contains(out, "Run workflow hello?") || strings.Contains(out, "greeting =") {
		t.Fatalf("declined: %d %q", code, out)
	}
	code, out, errs := taskRunCLI(t, "y\n", "workflow", dir, "run", "hello", "--input", "who=Ada")
	if code != ExitOK || !strings.Contains(out, "greeting = hello, Ada!") {
		t.Fatalf("run: %d %q %q", code, out, errs)
	}
	// A failing step: exit 1, the step named.
	os.WriteFile(filepath.Join(dir, "fail.yaml"), []byte("id: fail\nsteps:\n  - {id: boom, type: run, command: \"exit 7\"}\n  - {id: never, type: run, command: \"echo x\", depends_on: [boom]}\n"), 0o644)
	code, out, errs = taskRunCLI(t, "", "workflow", dir, "run", "fail.yaml", "--yes")
	if code != ExitFailure || !strings.Contains(errs, "step boom") || !strings.Contains(out, "never") {
		t.Fatalf("failing: %d %q %q", code, out, errs)
	}
	// Every step is in the project's history.
	st, err := memory.OpenProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acts, _ := st.Activities(50)
	seen := map[string]string{}
	for _, a := range acts {
		seen[a.Action] = a.Outcome
	}
	if seen["hello/joined"] != "done" || seen["fail/boom"] != "failed" || seen["fail/never"] != "skipped" {
		t.Fatalf("history: %v", seen)
	}
}

func TestWorkflowDraftCLI(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "draft.script")
	os.WriteFile(script, []byte("```yaml\nid: twice\nsteps:\n  - {id: a, type: run, command: \"echo one\"}\n  - {id: b, type: run, command: \"echo {{.a}} two\"}\noutputs:\n  - {name: both, value: \"{{.b}}\"}\n```\n"), 0o644)
	code, out, errs := taskRunCLI(t, "", "workflow", dir, "draft", "print one then two", "--script", script, "--save", "twice", "--yes")
	if code != ExitOK || !strings.Contains(out, "both = one two") {
		t.Fatalf("draft: %d %q %q", code, out, errs)
	}
	if _, err := workflow.Load(filepath.Join(dir, ".codeloom", "workflows", "twice.yaml")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = taskRunCLI(t, "", "workflow", dir, "run", "twice", "--yes")
	if code != ExitOK || !strings.Contains(out, "both = one two") {
		t.Fatalf("saved draft run: %d %q", code, out)
	}
	saved := filepath.Join(dir, ".codeloom", "workflows", "twice.yaml")
	before, _ := os.ReadFile(saved)
	os.WriteFile(script, []byte("```yaml\nid: other\nsteps:\n  - {id: a, type: run, command: \"echo three\"}\n```\n"), 0o644)
	code, _, errs = taskRunCLI(t, "", "workflow", dir, "draft", "print three", "--script", script, "--save", "twice", "--yes")
	if after, _ := os.ReadFile(saved); code != ExitFailure || !strings.Contains(errs, "not overwritten") || string(after) != string(before) {
		t.Fatalf("second save under the same name: %d %q; file now %q", code, errs, after)
	}
}

func TestNewCLI(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	dest := filepath.Join(t.TempDir(), "wc")
	code, out, errs := taskRunCLI(t, "", "new", dest, "A tool that counts the words of a text", "--yes", "--script", wordcountScript)
	if code != ExitOK {
		t.Fatalf("new: %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"new project written to", "unittest: 4 passed, 0 failed", "1. applied → tests pass", "[--yes] Write the new project (2 files)", "indexed: 2 files"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The destination is now not empty: refused.
	code, _, errs = taskRunCLI(t, "", "new", dest, "again", "--yes", "--script", wordcountScript)
	if code != ExitUsage || !strings.Contains(errs, "not empty") {
		t.Fatalf("second new: %d %q", code, errs)
	}
	// On the terminal, "no" to running the tests writes nothing.
	dest2 := filepath.Join(t.TempDir(), "wc2")
	code, out, _ = taskRunCLI(t, "n\n", "new", dest2, "count words", "--script", wordcountScript)
	if code != ExitFailure || !strings.Contains(out, "Run the generated tests") {
		t.Fatalf("declined: %d %q", code, out)
	}
	if _, err := os.Stat(dest2); !os.IsNotExist(err) {
		t.Fatal("declined run wrote the project")
	}
	if code, _, errs := taskRunCLI(t, "", "new", dest2, "count words"); code != ExitUsage || !strings.Contains(errs, "model") {
		t.Fatalf("no model: %d %q", code, errs)
	}
}

// TestNewWithAutonomyCLI: the project is built, then one autonomy cycle
// runs through the pipeline and the budget (1 cycle) ends it.
func TestNewWithAutonomyCLI(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	data, err := os.ReadFile(wordcountScript)
	if err != nil {
		t.Fatal(err)
	}
	more := "\n----- answer -----\nAdd a count_lines function\n----- answer -----\n" +
		`{"steps":[{"objective":"add count_lines","files":["wordcount.py"],"tests":[],"risks":"none"}]}` +
		"\n----- answer -----\nwordcount.py\n<<<<<<< SEARCH\ndef main(argv=None):\n=======\ndef count_lines(text):\n    return len(text.splitlines())\n\n\ndef main(argv=None):\n>>>>>>> REPLACE\n"
	script := filepath.Join(t.TempDir(), "auto.script")
	os.WriteFile(script, append(data, []byte(more)...), 0o644)
	dest := filepath.Join(t.TempDir(), "wc")
	code, out, errs := taskRunCLI(t, "", "new", dest, "count words", "--yes", "--script", script, "--autonomy", "--cycles", "1")
	if code != ExitOK {
		t.Fatalf("new --autonomy: %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "Start the next cycle: Add a count_lines function?") || !strings.Contains(out, workflow.StopCycles) {
		t.Fatalf("output:\n%s", out)
	}
	b, _ := os.ReadFile(filepath.Join(dest, "wordcount.py"))
	if !strings.Contains(string(b), "def count_lines") {
		t.Fatalf("cycle change missing:\n%s", b)
	}
	s, err := workflow.LoadAutonomy(dest)
	if err != nil || !s.Enabled || s.MaxCycles != 1 {
		t.Fatalf("setting: %+v %v", s, err)
	}
}

// TestNewWithARealTinyModel runs `codeloom new` on llama.cpp with a
// random-weight GGUF: the answers are nonsense, so this proves the wiring
// (every role called, token limits, bounded debugging) and that nonsense
// writes nothing — not quality.
func TestNewWithARealTinyModel(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a model")
	}
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	c := gguf.TinyLlama()
	c.Vocab = gguf.BaseVocab + 64
	c.Context = 4096
	if err := gguf.WriteLlama(model, c); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "p")
	code, out, errs := taskRunCLI(t, "", "new", dest, "count words", "--model", model, "--ctx", "4096", "--max-tokens", "16", "--max-fix", "1", "--yes")
	if code != ExitFailure {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("nonsense was written to %s", dest)
	}
	if !strings.Contains(out, "▶ analysis") || !strings.Contains(errs, "codeloom new:") {
		t.Fatalf("output:\n%s\n%s", out, errs)
	}
	// An llm workflow step on the same model: streamed, bounded, recorded.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ask.yaml"), []byte("id: ask\nsteps:\n  - {id: a, type: llm, prompt: \"Say hi\", timeout: 2m}\n"), 0o644)
	code, out, errs = taskRunCLI(t, "", "workflow", dir, "run", "ask.yaml", "--model", model, "--ctx", "4096", "--max-tokens", "8", "--yes")
	st, err := memory.OpenProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exs, _ := st.Exchanges("", 5)
	acts, _ := st.Activities(5)
	if len(acts) == 0 {
		t.Fatalf("nothing recorded; exit %d\n%s\n%s", code, out, errs)
	}
	// A tiny random model may answer with nothing at all (then the step fails
	// with "empty answer") or reach --max-tokens (then the answer is cut off,
	// incomplete, and the step fails); otherwise its answer is recorded.
	if code == ExitOK && (len(exs) != 1 || exs[0].Model != "codeloom-tiny") {
		t.Fatalf("exchanges %+v", exs)
	}
	if code != ExitOK && !strings.Contains(errs, "empty answer") && !strings.Contains(errs, "cut off") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

// TestWorkflowAutoCLI: autonomy on an existing project is off until enabled;
// enabled, the terminal's "n" to "Start the next cycle" ends it unchanged.
func TestWorkflowAutoCLI(t *testing.T) {
	root := taskSampleCopy(t)
	before := taskReadFile(t, filepath.Join(root, "inventory/pricing.py"))
	script := filepath.Join(t.TempDir(), "p.script")
	os.WriteFile(script, []byte("Fix the bulk discount boundary\n"), 0o644)
	code, _, errs := taskRunCLI(t, "", "workflow", root, "auto", "an inventory library", "--script", script)
	if code != ExitUsage || !strings.Contains(errs, "autonomy is off") {
		t.Fatalf("off: %d %q", code, errs)
	}
	code, out, errs := taskRunCLI(t, "n\n", "workflow", root, "auto", "an inventory library", "--script", script, "--enable", "--cycles", "2")
	if code != ExitOK || !strings.Contains(out, "Start the next cycle: Fix the bulk discount boundary?") || !strings.Contains(out, workflow.StopDeclined) {
		t.Fatalf("declined: %d\n%s\n%s", code, out, errs)
	}
	if taskReadFile(t, filepath.Join(root, "inventory/pricing.py")) != before {
		t.Fatal("a declined cycle changed the project")
	}
	if s, _ := workflow.LoadAutonomy(root); !s.Enabled || s.MaxCycles != 2 {
		t.Fatalf("setting not saved: %+v", s)
	}
}
