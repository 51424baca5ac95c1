package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"codeloom/app/memory"
	"codeloom/app/pipeline"
	"codeloom/assets"
	"codeloom/models/gguf"
)

const sampleScript = "../app/pipeline/testdata/sample-fix.script"

func taskSampleCopy(t *testing.T) string {
	t.Helper()
	root, err := assets.ExtractSample(filepath.Join(t.TempDir(), "sample"))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func taskRunCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func taskReadFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTaskFixesTheSampleWithAScript(t *testing.T) {
	root := taskSampleCopy(t)
	code, out, errs := taskRunCLI(t, "", "task", root, "bulk_discount should give 10 % from 100 units", "--yes", "--script", sampleScript)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"gate tests   failed", "AssertionError: 5 != 10", "[debugger]", "gate tests   passed", "Apply this patch? → yes (automatic, --yes)", "result: passed (edit, 2 attempt(s)"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(taskReadFile(t, filepath.Join(root, "inventory/pricing.py")), "if quantity >= 100:") {
		t.Fatal("sample not fixed")
	}

	code, out, _ = taskRunCLI(t, "", "lessons", root)
	if code != ExitOK || !strings.Contains(out, "1 lesson card(s)") || !strings.Contains(out, "what failed: tests failed") || !strings.Contains(out, "+    if quantity >= 100:") {
		t.Fatalf("lessons: %d\n%s", code, out)
	}
	code, out, _ = taskRunCLI(t, "", "history", root)
	if code != ExitOK || !strings.Contains(out, "1 pipeline session(s)") || !strings.Contains(out, "passed kind=edit attempts=2") || !strings.Contains(out, "gate:tests") {
		t.Fatalf("history: %d\n%s", code, out)
	}
	code, out, _ = taskRunCLI(t, "", "history", root, "--md", "--session", "last")
	if code != ExitOK || !strings.Contains(out, "# CodeLoom session ") || !strings.Contains(out, "### ") || !strings.Contains(out, "→ **yes (automatic)**") {
		t.Fatalf("history --md: %d\n%s", code, out)
	}
	code, out, _ = taskRunCLI(t, "", "history", root, "--versions")
	var lines, nodeLines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(l, "node before") {
			nodeLines = append(nodeLines, l)
		} else {
			lines = append(lines, l)
		}
	}
	if code != ExitOK || len(lines) != 2 || !strings.Contains(lines[1], "inventory/pricing.py") ||
		len(nodeLines) != 2 || !strings.Contains(nodeLines[0], "inventory.pricing.bulk_discount") {
		t.Fatalf("history --versions: %d\n%s", code, out)
	}
	// One function back: bulk_discount as the coder's patch left it.
	if code, out, errs := taskRunCLI(t, "", "history", root, "--restore", strings.Fields(nodeLines[0])[0], "--yes"); code != ExitOK {
		t.Fatalf("node restore: %d %s %s", code, out, errs)
	}
	if !strings.Contains(taskReadFile(t, filepath.Join(root, "inventory/pricing.py")), "if quantity > 101:") {
		t.Fatal("node restore did not bring the function back")
	}
	oldest := strings.Fields(lines[1])[0]
	if code, out, _ := taskRunCLI(t, "n\n", "history", root, "--restore", oldest); code != ExitFailure || !strings.Contains(out, "not restored") {
		t.Fatalf("declined restore: %d %s", code, out)
	}
	if code, _, errs := taskRunCLI(t, "", "history", root, "--restore", oldest); code != ExitFailure || !strings.Contains(errs, "input closed") {
		t.Fatalf("restore without an answer: %d %s", code, errs)
	}
	if code, out, errs := taskRunCLI(t, "y\n", "history", root, "--restore", oldest); code != ExitOK || !strings.Contains(out, "restored inventory/pricing.py") {
		t.Fatalf("restore: %d %s %s", code, out, errs)
	}
	if !strings.Contains(taskReadFile(t, filepath.Join(root, "inventory/pricing.py")), "if quantity > 100:") {
		t.Fatal("restore did not bring the original back")
	}
	code, out, _ = taskRunCLI(t, "", "history", root, "--json")
	var log pipeline.SessionLog
	if code != ExitOK || json.Unmarshal([]byte(out), &log) != nil || len(log.Exchanges) != 4 || len(log.Lessons) != 1 || len(log.Versions) < 2 {
		t.Fatalf("history --json: %d, %d exchanges\n%s", code, len(log.Exchanges), out)
	}
}

func TestTaskAsksOnTheTerminal(t *testing.T) {
	root := taskSampleCopy(t)
	before := taskReadFile(t, filepath.Join(root, "inventory/pricing.py"))
	code, out, _ := taskRunCLI(t, "n\n", "task", root, "fix the discount", "--script", sampleScript)
	if code != ExitFailure || !strings.Contains(out, "Apply this patch? [y/N]") || !strings.Contains(out, "result: rejected") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if taskReadFile(t, filepath.Join(root, "inventory/pricing.py")) != before {
		t.Fatal("a declined patch changed the file")
	}
	// Closed input is a "no" with an error, never a yes.
	code, _, errs := taskRunCLI(t, "", "task", root, "fix the discount", "--script", sampleScript)
	if code != ExitFailure || !strings.Contains(errs, "no answer") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if taskReadFile(t, filepath.Join(root, "inventory/pricing.py")) != before {
		t.Fatal("file changed without an answer")
	}
}

func TestTaskUsageErrors(t *testing.T) {
	root := taskSampleCopy(t)
	empty := filepath.Join(t.TempDir(), "empty.script")
	os.WriteFile(empty, []byte("\n"), 0o644)
	badJSON := filepath.Join(t.TempDir(), "bad.script")
	os.WriteFile(badJSON, []byte("[1, 2]"), 0o644)
	cases := [][]string{
		{"task"},
		{"task", root},
		{"task", filepath.Join(root, "missing"), "do it"},
		{"task", root, "  "},
		{"task", root, "do it", "--script", sampleScript, "--model", "x.gguf"},
		{"task", root, "do it", "--script", empty},
		{"task", root, "do it", "--script", badJSON},
		{"task", root, "do it", "--script", sampleScript, "--kind", "refactor"},
		{"history"},
		{"history", filepath.Join(root, "missing")},
		{"history", root, "--json", "--md"},
		{"lessons", filepath.Join(root, "missing")},
	}
	for _, args := range cases {
		if code, _, errs := taskRunCLI(t, "", args...); code != ExitUsage || errs == "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	// A missing model file fails cleanly.
	code, _, errs := taskRunCLI(t, "", "task", root, "do it", "--model", filepath.Join(root, "nope.gguf"))
	if code != ExitFailure || errs == "" {
		t.Fatalf("missing model: exit %d %q", code, errs)
	}
	// history and lessons on a project without data create nothing.
	fresh := t.TempDir()
	if code, out, _ := taskRunCLI(t, "", "lessons", fresh); code != ExitOK || !strings.Contains(out, "no CodeLoom history") {
		t.Fatalf("lessons on fresh dir: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(fresh, memory.DirName)); err == nil {
		t.Fatal("lessons created a data folder")
	}
}

func TestReadScript(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s")
	os.WriteFile(p, []byte("edit\n----- answer -----\n{\"steps\":[]}\n----- answer -----\n\nx.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"), 0o644)
	got, err := ReadScript(p)
	if err != nil || len(got) != 3 || got[0] != "edit\n" || !strings.HasPrefix(got[2], "x.py\n<<<<<<< SEARCH") {
		t.Fatalf("%q %v", got, err)
	}
	os.WriteFile(p, []byte(`["edit", "{}"]`), 0o644)
	if got, err := ReadScript(p); err != nil || len(got) != 2 {
		t.Fatalf("%q %v", got, err)
	}
}

// TestTaskWithARealTinyModel runs the loop on llama.cpp with a random-weight
// GGUF: the answers are nonsense, so this proves the wiring (grammar-
// constrained classification, streaming, recording), the per-answer token
// and time limits and the bounded re-asks — not quality.
func TestTaskWithARealTinyModel(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a model")
	}
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	c := gguf.TinyLlama()
	c.Vocab = gguf.BaseVocab + 64
	c.Context = 4096 // prompts carry code and the patch formats; the vocabulary is byte-level
	if err := gguf.WriteLlama(model, c); err != nil {
		t.Fatal(err)
	}
	root := taskSampleCopy(t)
	before := taskReadFile(t, filepath.Join(root, "inventory/pricing.py"))

	// Classification through the grammar yields a valid kind.
	code, out, errs := taskRunCLI(t, "", "task", root, "fix the bulk discount", "--model", model, "--yes", "--json", "--max-fix", "1", "--max-tokens", "16", "--gen-timeout", "60s", "--ctx", "4096")
	var res pipeline.Outcome
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("exit %d, no JSON outcome: %v\n%s\n%s", code, err, out, errs)
	}
	if k := res.Last().Kind; k == "" || !taskContains(pipeline.Kinds, k) {
		t.Fatalf("kind %q is not a request kind", k)
	}

	// An edit gets nonsense patches: re-asked max_reasks times, then the
	// attempt fails, and with --max-fix 1 and --yes the loop stops.
	code, out, errs = taskRunCLI(t, "", "task", root, "fix the bulk discount", "--model", model, "--yes", "--kind", "edit", "--max-fix", "1", "--max-tokens", "16", "--gen-timeout", "60s", "--ctx", "4096")
	if code != ExitFailure || !strings.Contains(out, "result: failed") || !strings.Contains(out, "patch not usable") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if taskReadFile(t, filepath.Join(root, "inventory/pricing.py")) != before {
		t.Fatal("nonsense changed the project")
	}
	st, err := memory.OpenProject(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sessions, _ := pipeline.Sessions(st)
	exs, _ := st.Exchanges(sessions[0], 0)
	roles := map[string]int{}
	for _, e := range exs {
		roles[e.Role]++
		if e.Model != "codeloom-tiny" {
			t.Fatalf("exchange model = %q", e.Model)
		}
	}
	// plan (architect) + 1 coder answer + max_reasks (2) re-asks.
	if roles[pipeline.RoleArchitect] != 1 || roles[pipeline.RoleCoder] != 1+pipeline.DefaultMaxReasks {
		t.Fatalf("exchanges by role = %v", roles)
	}
}

func taskContains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// TestTaskThroughAnEndpoint drives the loop through an OpenAI-compatible
// server on loopback that replays the sample fix script.
func TestTaskThroughAnEndpoint(t *testing.T) {
	answers, err := ReadScript(sampleScript)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	next := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		if next >= len(answers) {
			mu.Unlock()
			http.Error(w, "no more answers", http.StatusServiceUnavailable)
			return
		}
		a := answers[next]
		next++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for len(a) > 0 {
			n := min(7, len(a))
			b, _ := json.Marshal(a[:n])
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%s}}]}\n\n", b)
			a = a[n:]
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	root := taskSampleCopy(t)
	code, out, errs := taskRunCLI(t, "", "task", root, "bulk_discount should give 10 % from 100 units", "--yes", "--endpoint", srv.URL)
	if code != ExitOK || !strings.Contains(out, "result: passed (edit, 2 attempt(s)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if next != len(answers) {
		t.Fatalf("server answered %d of %d", next, len(answers))
	}
}
