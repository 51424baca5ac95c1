package models_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"codeloom/models"
	"codeloom/models/modeltest"
)

const kindGrammar = `root ::= "run" | "edit" | "create" | "debug" | "explain"`

var user = []models.Message{{Role: models.RoleUser, Content: "classify: fix the bug"}}

func TestOllamaStandIn(t *testing.T) {
	ctx := context.Background()
	srv := modeltest.Start(modeltest.Config{Kind: modeltest.Ollama, Answers: []string{"edit"}})
	defer srv.Close()

	// without a name Ollama answers 400: the error says how to name one
	raw := models.NewOpenAI(srv.URL, "")
	if _, err := raw.Generate(ctx, user, models.GenOptions{}, nil); err == nil || !strings.Contains(err.Error(), "model is required") || !strings.Contains(err.Error(), "--endpoint-model") {
		t.Fatalf("unnamed model: %v", err)
	}
	// Connect takes the only model from /v1/models and learns the context
	o, err := models.Connect(ctx, srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if o.Model != "tiny:latest" || o.Server.Kind != models.ServerOllama || o.ContextLength() != 2048 || o.Server.Grammar {
		t.Fatalf("probe: model %q, %+v", o.Model, o.Server)
	}
	// a grammar choosing between words becomes a JSON-schema enum; the
	// answer comes back unquoted
	got, err := o.Generate(ctx, user, models.GenOptions{MaxTokens: 8, Grammar: kindGrammar}, nil)
	if err != nil || got != "edit" {
		t.Fatalf("classify: %q %v", got, err)
	}
	req := srv.Requests()[len(srv.Requests())-1]
	if req.Grammar != "" || !strings.Contains(string(req.ResponseFormat), `"enum":["run","edit","create","debug","explain"]`) {
		t.Fatalf("request grammar %q format %s", req.Grammar, req.ResponseFormat)
	}

	// a prompt longer than the context is refused before it is sent …
	n := len(srv.Requests())
	big := []models.Message{{Role: models.RoleUser, Content: strings.Repeat("x = 1\n", 2000)}}
	if _, err := o.Generate(ctx, big, models.GenOptions{MaxTokens: 100}, nil); !errors.Is(err, models.ErrPromptTooLong) || !strings.Contains(err.Error(), "2048") {
		t.Fatalf("long prompt: %v", err)
	}
	if len(srv.Requests()) != n {
		t.Fatal("a prompt the server would cut was sent")
	}
	// … one that fits is sent with the answer limit lowered to what is left
	mid := []models.Message{{Role: models.RoleUser, Content: strings.Repeat("x = 1\n", 900)}}
	if _, err := o.Generate(ctx, mid, models.GenOptions{MaxTokens: 1000}, nil); err != nil {
		t.Fatal(err)
	}
	req = srv.Requests()[len(srv.Requests())-1]
	if req.Cut || req.MaxTokens <= 0 || req.MaxTokens >= 1000 || req.PromptTokens+req.MaxTokens > 2048 {
		t.Fatalf("prompt %d tokens, max_tokens %d, cut %v", req.PromptTokens, req.MaxTokens, req.Cut)
	}

	// num_ctx from the model's parameters; several models need a choice
	srv2 := modeltest.Start(modeltest.Config{Kind: modeltest.Ollama, NumCtx: 8192, Models: []string{"tiny:latest", "someuser/tiny:v1"}})
	defer srv2.Close()
	if _, err := models.Connect(ctx, srv2.URL, "", ""); err == nil || !strings.Contains(err.Error(), "someuser/tiny:v1") {
		t.Fatalf("two models, none chosen: %v", err)
	}
	if _, err := models.Connect(ctx, srv2.URL, "", "other:7b"); err == nil || !strings.Contains(err.Error(), "ollama pull other:7b") {
		t.Fatalf("a model Ollama does not have: %v", err)
	}
	o2, err := models.Connect(ctx, srv2.URL, "", "someuser/tiny:v1")
	if err != nil || o2.ContextLength() != 8192 {
		t.Fatalf("num_ctx: %v %+v", err, o2)
	}
}

func TestLlamaServerStandIn(t *testing.T) {
	ctx := context.Background()
	srv := modeltest.Start(modeltest.Config{Kind: modeltest.LlamaCpp, APIKey: "sekret", Context: 512, Answers: []string{"edit"}})
	defer srv.Close()
	if _, err := models.Connect(ctx, srv.URL+"/v1", "", ""); !errors.Is(err, models.ErrNeedsKey) {
		t.Fatalf("no key: %v", err)
	}
	if _, err := models.NewOpenAI(srv.URL, "").Generate(ctx, user, models.GenOptions{}, nil); !errors.Is(err, models.ErrNeedsKey) {
		t.Fatalf("no key, not probed: %v", err)
	}
	o, err := models.Connect(ctx, srv.URL+"/v1", "sekret", "")
	if err != nil {
		t.Fatal(err)
	}
	if o.Server.Kind != models.ServerLlamaCpp || o.ContextLength() != 512 || !o.Server.Tokenize || !o.Server.Grammar || o.Model != "tiny.gguf" {
		t.Fatalf("probe: %q %+v", o.Model, o.Server)
	}
	text := strings.Repeat("abcdefgh", 50)
	if got, want := o.CountTokens(text), modeltest.Tokens(text); got != want {
		t.Fatalf("CountTokens = %d, the server's tokenizer says %d", got, want)
	}
	// exact counts let a prompt through that a cautious estimate would refuse
	fits := []models.Message{{Role: models.RoleUser, Content: strings.Repeat("abcd", 440)}}
	if models.CautiousTokens(fits[0].Content) < 512 {
		t.Fatal("test prompt too small to tell counts from estimates")
	}
	if _, err := o.Generate(ctx, fits, models.GenOptions{MaxTokens: 64, Grammar: kindGrammar}, nil); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[len(srv.Requests())-1]
	if req.Grammar != kindGrammar || req.PromptTokens+req.MaxTokens > 512 {
		t.Fatalf("grammar %q, prompt %d + answer %d tokens", req.Grammar, req.PromptTokens, req.MaxTokens)
	}
}

func TestCutAnswersAreIncomplete(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		cfg    modeltest.Config
		reason string
	}{
		{modeltest.Config{Kind: modeltest.LlamaCpp, Answers: []string{"file.py\n<<<<<<< SEARCH\nx = 1\n"}, Finish: "length"}, models.IncompleteLength},
		{modeltest.Config{Kind: modeltest.LlamaCpp, Answers: []string{"file.py\n<<<<<<< SEARCH\nx = 1\n"}, NoDone: true}, models.IncompleteStream},
	} {
		srv := modeltest.Start(c.cfg)
		o, err := models.Connect(ctx, srv.URL, "", "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := o.Generate(ctx, user, models.GenOptions{MaxTokens: 50}, nil)
		var ie *models.IncompleteError
		if !errors.As(err, &ie) || ie.Reason != c.reason || !models.IsIncomplete(err) || !strings.HasPrefix(got, "file.py") {
			t.Errorf("%s: %q %v", c.reason, got, err)
		}
		srv.Close()
	}
}
