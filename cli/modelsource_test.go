package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"codeloom/models/gguf"
	"codeloom/models/modeltest"
)

// clearModelEnv empties the variables that choose a model server.
func clearModelEnv(t *testing.T) {
	for _, v := range []string{"OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY", "OLLAMA_HOST"} {
		t.Setenv(v, "")
	}
}

// TestAskThroughOllamaFromTheEnvironment: OLLAMA_HOST as a bare host:port
// selects the server, its only model is named from /v1/models (Ollama
// answers "model is required" otherwise), and the prompt is budgeted to
// Ollama's context so the server never cuts it.
func TestAskThroughOllamaFromTheEnvironment(t *testing.T) {
	clearModelEnv(t)
	dir := t.TempDir()
	// a project far larger than a 2048-token context
	var b strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "def tax_step_%d(amount):\n    \"\"\"Apply tax step %d to the amount.\"\"\"\n    rate = 0.%02d\n    return amount * (1 + rate) + %d\n\n\n", i, i, i%100, i)
	}
	os.WriteFile(filepath.Join(dir, "tax.py"), []byte(b.String()), 0o644)
	srv := modeltest.Start(modeltest.Config{Kind: modeltest.Ollama, Answers: []string{"tax_step_1 adds 1 %."}})
	defer srv.Close()
	t.Setenv("OLLAMA_HOST", strings.TrimPrefix(srv.URL, "http://"))
	code, out, errs := askRun("ask", dir, "how is the tax step applied to the amount?", "--max-tokens", "512", "--budget", "100000")
	if code != ExitOK || strings.TrimSpace(out) != "tax_step_1 adds 1 %." {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "ollama, model tiny:latest, context 2048 tokens") {
		t.Errorf("the server's facts are not reported: %s", errs)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != "tiny:latest" || reqs[0].Cut || reqs[0].PromptTokens+reqs[0].MaxTokens > 2048 || reqs[0].PromptTokens < 1000 {
		t.Fatalf("requests: %+v", reqs)
	}
}

// TestKeyProtectedLlamaServer: task and ask take --api-key (or
// OPENAI_API_KEY); without a key the message says what is missing.
func TestKeyProtectedLlamaServer(t *testing.T) {
	clearModelEnv(t)
	srv := modeltest.Start(modeltest.Config{Kind: modeltest.LlamaCpp, APIKey: "sekret", Context: 4096, Answers: []string{"It applies TAX_RATE."}})
	defer srv.Close()
	root := taskSampleCopy(t)
	code, out, errs := taskRunCLI(t, "", "task", root, "explain the tax", "--kind", "explain", "--yes", "--endpoint", srv.URL)
	if code != ExitFailure || !strings.Contains(errs, "API key") {
		t.Fatalf("no key: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = taskRunCLI(t, "", "task", root, "explain the tax", "--kind", "explain", "--yes", "--endpoint", srv.URL, "--api-key", "sekret")
	if code != ExitOK || !strings.Contains(out, "It applies TAX_RATE.") {
		t.Fatalf("--api-key: exit %d\n%s\n%s", code, out, errs)
	}
	t.Setenv("OPENAI_API_KEY", "sekret")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	code, out, errs = askRun("ask", root, "where is the tax rate?")
	if code != ExitOK || !strings.Contains(out, "It applies TAX_RATE.") || !strings.Contains(errs, "llama.cpp, model tiny.gguf, context 4096 tokens (GET /props)") {
		t.Fatalf("OPENAI_BASE_URL + OPENAI_API_KEY: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestSearchFallsBackWithoutEmbeddings: a chat-only llama-server (no
// --embeddings) still gives a lexical ranking, with a note.
func TestSearchFallsBackWithoutEmbeddings(t *testing.T) {
	clearModelEnv(t)
	srv := modeltest.Start(modeltest.Config{Kind: modeltest.LlamaCpp})
	defer srv.Close()
	dir := askSample(t)
	code, out, errs := askRun("search", dir, "tax rate from the environment", "--endpoint", srv.URL)
	if code != ExitOK || !strings.Contains(errs, "lexical search only") || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "inventory.pricing.tax_rate") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

// TestTruncatedAnswerIsNotApplied: a patch answer cut at the token limit is
// re-asked and, still cut, fails the attempt; the project is unchanged.
func TestTruncatedAnswerIsNotApplied(t *testing.T) {
	clearModelEnv(t)
	cut := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 100:\n=======\n    if quantity >= 100:\n>>>>>>> REPLACE\n"
	srv := modeltest.Start(modeltest.Config{Kind: modeltest.LlamaCpp, Answers: []string{cut}, Finish: "length"})
	defer srv.Close()
	root := taskSampleCopy(t)
	before := taskReadFile(t, filepath.Join(root, "inventory/pricing.py"))
	code, out, errs := taskRunCLI(t, "", "task", root, "fix the bulk discount", "--kind", "edit", "--yes", "--max-fix", "1", "--endpoint", srv.URL)
	if code != ExitFailure || !strings.Contains(out, "cut off") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if taskReadFile(t, filepath.Join(root, "inventory/pricing.py")) != before {
		t.Fatal("a cut-off answer was applied")
	}
}

// TestModelByStoreName: --model takes the names `codeloom models` lists.
func TestModelByStoreName(t *testing.T) {
	clearModelEnv(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE", "OLLAMA_MODELS", "LLAMA_CACHE"} {
		t.Setenv(v, "")
	}
	blob := filepath.Join(home, ".ollama/models/blobs/sha256-deadbeef")
	os.MkdirAll(filepath.Dir(blob), 0o755)
	if err := gguf.WriteLlama(blob, gguf.TinyLlama()); err != nil {
		t.Fatal(err)
	}
	man := filepath.Join(home, ".ollama/models/manifests/registry.ollama.ai/library/tiny/latest")
	os.MkdirAll(filepath.Dir(man), 0o755)
	os.WriteFile(man, []byte(`{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:deadbeef"}]}`), 0o644)
	code, out, errs := askRun("models")
	if code != ExitOK || !strings.Contains(out, "tiny:latest") {
		t.Fatalf("listing: %d\n%s\n%s", code, out, errs)
	}
	dir := askSample(t)
	code, _, errs = askRun("ask", dir, "tax rate", "--model", "tiny:latest", "--max-tokens", "4", "--threads", "1")
	if !strings.Contains(errs, "model tiny:latest (llama") {
		t.Fatalf("--model tiny:latest: exit %d\n%s", code, errs)
	}
	code, _, errs = askRun("ask", dir, "tax rate", "--model", "nope:latest")
	if code != ExitFailure || !strings.Contains(errs, "codeloom models") {
		t.Fatalf("unknown name: exit %d\n%s", code, errs)
	}
}
