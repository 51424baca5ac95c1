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
	"testing"

	"codeloom/assets"
	"codeloom/models"
	"codeloom/models/gguf"
)

func askSample(t *testing.T) string {
	t.Helper()
	root, err := assets.ExtractSample(filepath.Join(t.TempDir(), "sample"))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func askRun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestSearchCLI(t *testing.T) {
	dir := askSample(t)
	code, out, errs := askRun("search", dir, "tax rate from the environment")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	first := strings.SplitN(out, "\n", 2)[0]
	if !strings.Contains(first, "inventory.pricing.tax_rate") || !strings.Contains(first, "inventory/pricing.py:8-13") {
		t.Fatalf("first line %q", first)
	}
	code, out, _ = askRun("search", dir, "bulk discount", "--json", "--limit", "2")
	var hits []searchHit
	if code != ExitOK || json.Unmarshal([]byte(out), &hits) != nil || len(hits) != 2 || hits[0].Node.Name != "bulk_discount" || hits[0].Score <= 0 {
		t.Fatalf("json: exit %d, %s", code, out)
	}
	for _, bad := range [][]string{{"search", filepath.Join(dir, "missing"), "x"}, {"search", dir}, {"search", dir, "  "}, {"search", dir, "x", "--limit", "0"}, {"search", dir, "x", "--model", "a", "--endpoint", "b"}} {
		if code, _, errs := askRun(bad...); code != ExitUsage || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errs)
		}
	}
}

func TestAskWithInProcessModel(t *testing.T) {
	dir := askSample(t)
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := gguf.WriteLlama(model, gguf.TinyLlama()); err != nil {
		t.Fatal(err)
	}
	code, out, errs := askRun("ask", dir, "how is the tax rate computed?", "--model", model, "--max-tokens", "12", "--threads", "1")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.TrimSpace(out) == "" {
		t.Fatal("no answer streamed")
	}
	if !strings.Contains(errs, "inventory.pricing.tax_rate") || !strings.Contains(errs, "chat format chatml") {
		t.Fatalf("stderr lacks the context summary: %s", errs)
	}
	// with --embed the nodes are embedded once, then reused from the store
	code, _, errs = askRun("ask", dir, "tax rate", "--model", model, "--max-tokens", "4", "--threads", "1", "--embed")
	if code != ExitOK || !strings.Contains(errs, "computed") {
		t.Fatalf("--embed: exit %d: %s", code, errs)
	}
	code, _, errs = askRun("ask", dir, "tax rate", "--model", model, "--max-tokens", "4", "--threads", "1", "--embed")
	if code != ExitOK || !strings.Contains(errs, "0 computed") {
		t.Fatalf("--embed again: exit %d: %s", code, errs)
	}
	// search fuses vector scores when given a model
	code, out2, errs := askRun("search", dir, "tax rate", "--model", model, "--threads", "1", "--json", "--limit", "3")
	if code != ExitOK || !strings.Contains(out2, `"vector"`) {
		t.Fatalf("search with model: exit %d %s %s", code, out2, errs)
	}
	// the exchange is recorded in the project's store
	code, out, _ = askRun("history", dir, "--json")
	if code == ExitOK && !strings.Contains(out, "how is the tax rate computed?") {
		t.Errorf("exchange not in history: %.300s", out)
	}
	// a broken model file fails cleanly
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	os.WriteFile(bad, []byte("GGUF\x03\x00\x00\x00garbage"), 0o644)
	code, _, errs = askRun("ask", dir, "q", "--model", bad)
	if code != ExitFailure || !strings.Contains(errs, "truncated") {
		t.Fatalf("bad model: exit %d %s", code, errs)
	}
	code, _, errs = askRun("ask", dir, "q")
	if code != ExitUsage || !strings.Contains(errs, "need a model") {
		t.Fatalf("no model: exit %d %s", code, errs)
	}
	code, _, errs = askRun("ask", dir, "q", "--model", model, "--ctx", "128", "--max-tokens", "100")
	if code != ExitUsage || !strings.Contains(errs, "no room") {
		t.Fatalf("tiny context: exit %d %s", code, errs)
	}
}

func TestAskWithEndpoint(t *testing.T) {
	dir := askSample(t)
	var prompt string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string }
		}
		json.NewDecoder(r.Body).Decode(&req)
		for _, m := range req.Messages {
			prompt += m.Role + ": " + m.Content + "\n"
		}
		for _, p := range []string{"tax_rate reads ", "TAX_RATE ", "(pricing.py:8)."} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", p)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	code, out, errs := askRun("ask", dir, "where does the tax rate come from?", "--endpoint", srv.URL)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.TrimSpace(out) != "tax_rate reads TAX_RATE (pricing.py:8)." {
		t.Fatalf("stdout %q", out)
	}
	if !strings.Contains(prompt, "def tax_rate():") || !strings.Contains(prompt, "where does the tax rate come from?") || !strings.Contains(prompt, "system: You are CodeLoom") {
		t.Fatalf("prompt lacks the retrieved code or question:\n%s", prompt)
	}
	srv.Close()
	code, _, errs = askRun("ask", dir, "q", "--endpoint", srv.URL)
	if code != ExitFailure || errs == "" {
		t.Fatalf("dead endpoint: exit %d %s", code, errs)
	}
}

func TestModelsCLI(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("HF_HOME", "")
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("OLLAMA_MODELS", "")
	os.MkdirAll(filepath.Join(home, "models"), 0o755)
	if err := gguf.WriteLlama(filepath.Join(home, "models", "tiny.gguf"), gguf.TinyLlama()); err != nil {
		t.Fatal(err)
	}
	extra := t.TempDir()
	os.WriteFile(filepath.Join(extra, "junk.gguf"), []byte("junk"), 0o644)
	var out, errb bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errb}
	if code := runModels(context.Background(), env, []string{extra}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "tiny  ") || !strings.Contains(out.String(), "llama") || !strings.Contains(out.String(), "unusable: ") {
		t.Fatalf("listing:\n%s", out.String())
	}
	out.Reset()
	if code := runModels(context.Background(), env, []string{"--json"}); code != ExitOK || !strings.Contains(out.String(), `"architecture": "llama"`) {
		t.Fatalf("json: %s", out.String())
	}
	if code := runModels(context.Background(), env, []string{filepath.Join(extra, "nope")}); code != ExitUsage {
		t.Fatalf("missing folder: %d", code)
	}
}

func TestAskModelNameFallsBackToEndpoint(t *testing.T) {
	mf := modelFlags{endpoint: "http://127.0.0.1:1"}
	if got := mf.name(models.NewOpenAI(mf.endpoint, "")); got != mf.endpoint {
		t.Errorf("unnamed endpoint model recorded as %q, want %q", got, mf.endpoint)
	}
	if got := mf.name(models.NewOpenAI(mf.endpoint, "qwen")); got != "qwen" {
		t.Errorf("named endpoint model recorded as %q, want qwen", got)
	}
}
