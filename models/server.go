package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Server kinds Probe tells apart.
const (
	ServerLlamaCpp = "llama.cpp" // llama-server: /props, /tokenize, GBNF grammars
	ServerOllama   = "ollama"    // Ollama: /api/show, JSON-schema formats, no grammars
	ServerOpenAI   = "openai"    // any other OpenAI-compatible server
)

// ServerInfo is what a server said about itself.
type ServerInfo struct {
	Kind          string   `json:"kind"`             // ServerLlamaCpp, ServerOllama or ServerOpenAI
	Models        []string `json:"models,omitempty"` // from GET /v1/models
	ContextLength int      `json:"context_length,omitempty"`
	ContextFrom   string   `json:"context_from,omitempty"` // where ContextLength came from
	Tokenize      bool     `json:"tokenize,omitempty"`     // POST /tokenize counts tokens exactly
	Grammar       bool     `json:"grammar,omitempty"`      // GBNF grammars are honoured
}

// ErrPromptTooLong is returned when a prompt does not fit the server's
// context (the server would cut it silently).
var ErrPromptTooLong = errors.New("the prompt does not fit the model's context")

// ErrNeedsKey is returned when a server refuses requests without a valid API key.
var ErrNeedsKey = errors.New("the server needs an API key (--api-key, or OPENAI_API_KEY)")

// ollamaDefaultContext is Ollama's context when neither the model's
// parameters nor a running instance say otherwise (its num_ctx default; a
// server started with a larger OLLAMA_CONTEXT_LENGTH is under-used, never
// overrun).
const ollamaDefaultContext = 2048

// Connect returns a client for the server at baseURL that has asked the
// server what it is (see Probe).
func Connect(ctx context.Context, baseURL, apiKey, model string) (*OpenAI, error) {
	o := NewOpenAI(baseURL, model)
	o.APIKey = apiKey
	if err := o.Probe(ctx); err != nil {
		return nil, err
	}
	return o, nil
}

// Probe asks the server what it is and fills o.Server: the models it serves
// (GET /v1/models), its kind, its context size (/props on llama-server,
// /api/show and /api/ps on Ollama) and whether it counts tokens (/tokenize).
// When o.Model is empty and the server needs a name, the only model it
// serves is chosen; with several, the error lists them.
func (o *OpenAI) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	info := ServerInfo{Kind: ServerOpenAI}
	var list struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	status, err := o.getJSON(ctx, o.url("/models"), &list)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", o.BaseURL, err)
	}
	if status == http.StatusOK {
		for _, m := range list.Data {
			info.Models = append(info.Models, m.ID)
		}
	}
	var props struct {
		Default struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
		NCtx int `json:"n_ctx"`
	}
	var version struct {
		Version string `json:"version"`
	}
	if st, err := o.getJSON(ctx, o.root()+"/props", &props); err != nil {
		return fmt.Errorf("connect to %s: %w", o.BaseURL, err)
	} else if st == http.StatusOK && (props.Default.NCtx > 0 || props.NCtx > 0) {
		info.Kind, info.Grammar, info.Tokenize = ServerLlamaCpp, true, true
		info.ContextLength, info.ContextFrom = max(props.Default.NCtx, props.NCtx), "GET /props"
	} else if st, err := o.getJSON(ctx, o.root()+"/api/version", &version); err == nil && st == http.StatusOK && version.Version != "" {
		info.Kind = ServerOllama
	}
	if o.Model == "" && (len(info.Models) > 1 || info.Kind == ServerOllama) {
		switch len(info.Models) {
		case 0:
			return fmt.Errorf("connect to %s: the server serves no model (pull one, e.g. `ollama pull NAME`)", o.BaseURL)
		case 1:
		default:
			return fmt.Errorf("connect to %s: the server serves %d models: choose one with --endpoint-model (%s)", o.BaseURL, len(info.Models), strings.Join(info.Models, ", "))
		}
	}
	if o.Model == "" && len(info.Models) == 1 {
		o.Model = info.Models[0]
	}
	if info.Kind == ServerOllama {
		if !contains(info.Models, o.Model) && !contains(info.Models, o.Model+":latest") {
			return fmt.Errorf("connect to %s: Ollama has no model %q (it has: %s; `ollama pull %s` fetches it)", o.BaseURL, o.Model, strings.Join(info.Models, ", "), o.Model)
		}
		info.ContextLength, info.ContextFrom = o.ollamaContext(ctx)
	}
	o.Server = info
	return nil
}

// ollamaContext finds the context Ollama will give o.Model: a running
// instance's (GET /api/ps), else the model's num_ctx parameter (POST
// /api/show) or Ollama's default, never more than the model was trained for.
func (o *OpenAI) ollamaContext(ctx context.Context) (int, string) {
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if st, err := o.getJSON(ctx, o.root()+"/api/ps", &ps); err == nil && st == http.StatusOK {
		for _, m := range ps.Models {
			if (m.Name == o.Model || m.Model == o.Model) && m.ContextLength > 0 {
				return m.ContextLength, "GET /api/ps"
			}
		}
	}
	n, from := ollamaDefaultContext, "Ollama's default num_ctx"
	var show struct {
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
	}
	if st, err := o.postJSON(ctx, o.root()+"/api/show", map[string]string{"model": o.Model}, &show); err == nil && st == http.StatusOK {
		for _, line := range strings.Split(show.Parameters, "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == "num_ctx" {
				if v, err := strconv.Atoi(f[1]); err == nil && v > 0 {
					n, from = v, "num_ctx of POST /api/show"
				}
			}
		}
		arch, _ := show.ModelInfo["general.architecture"].(string)
		if v, ok := show.ModelInfo[arch+".context_length"].(float64); ok && v > 0 && int(v) < n {
			n, from = int(v), "context_length of POST /api/show"
		}
	}
	return n, from
}

// root is the server's address without the /v1 API prefix.
func (o *OpenAI) root() string {
	return strings.TrimSuffix(strings.TrimRight(o.BaseURL, "/"), "/v1")
}

// getJSON GETs url into v. It returns the HTTP status; an error only when
// the server cannot be reached or refuses the key.
func (o *OpenAI) getJSON(ctx context.Context, url string, v any) (int, error) {
	return o.doJSON(ctx, http.MethodGet, url, nil, v)
}

// postJSON POSTs body to url and decodes the answer into v (see getJSON).
func (o *OpenAI) postJSON(ctx context.Context, url string, body, v any) (int, error) {
	return o.doJSON(ctx, http.MethodPost, url, body, v)
}

func (o *OpenAI) doJSON(ctx context.Context, method, url string, body, v any) (int, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	resp, err := o.client().Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return resp.StatusCode, fmt.Errorf("%s: HTTP %d: %w", url, resp.StatusCode, ErrNeedsKey)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(v); err != nil {
		return 0, nil // not the JSON we know: treat as absent
	}
	return resp.StatusCode, nil
}

// CountTokens counts text's tokens with the server's tokenizer (POST
// /tokenize on llama-server) or, without one, estimates them cautiously
// (3 bytes per token: code rarely packs fewer bytes into a token, so a
// budget built on it is not overrun).
func (o *OpenAI) CountTokens(text string) int {
	if o.Server.Tokenize && text != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var toks struct {
			Tokens []json.RawMessage `json:"tokens"`
		}
		if st, err := o.postJSON(ctx, o.root()+"/tokenize", map[string]any{"content": text}, &toks); err == nil && st == http.StatusOK {
			return len(toks.Tokens)
		}
	}
	return CautiousTokens(text)
}

// CautiousTokens over-estimates text's tokens without a tokenizer
// (ceil(bytes/3)).
func CautiousTokens(text string) int { return (len(text) + 2) / 3 }

// PromptTokens counts the tokens msgs take in the server's prompt: their
// text plus an allowance for the chat template's markers.
func (o *OpenAI) PromptTokens(msgs []Message) int {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return o.CountTokens(b.String()) + templateAllowance*(len(msgs)+1)
}

// templateAllowance is the tokens a chat template adds per message (role
// markers, separators); generous for the common templates.
const templateAllowance = 8

// grammarLit matches one double-quoted GBNF literal without escapes.
var grammarLit = regexp.MustCompile(`^"([^"\\]*)"$`)

// grammarLiterals returns the choices of a GBNF grammar that is one rule
// choosing between plain literals (`root ::= "a" | "b"`), else nil.
func grammarLiterals(g string) []string {
	g = strings.TrimSpace(g)
	rest, ok := strings.CutPrefix(g, "root")
	if !ok {
		return nil
	}
	rest, ok = strings.CutPrefix(strings.TrimSpace(rest), "::=")
	if !ok || strings.Contains(rest, "\n") {
		return nil
	}
	var out []string
	for _, alt := range strings.Split(rest, "|") {
		m := grammarLit.FindStringSubmatch(strings.TrimSpace(alt))
		if m == nil {
			return nil
		}
		out = append(out, m[1])
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}
