package models

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// Why hand-written and not github.com/openai/openai-go: measured (see
// BENCHMARKS.md, "Model servers and stores"), the official SDK adds 18.6 MB
// to a stripped binary (this client: under 1 MB with the whole package), still
// needs the caller to detect a stream cut without [DONE], and knows none of
// the llama-server/Ollama endpoints (/props, /tokenize, /api/show) that
// budgeting needs. llama.cpp's extras (grammar) are plain fields here.

// OpenAI is an Engine backed by an OpenAI-compatible HTTP server (llama.cpp's
// llama-server, Ollama, vLLM, …): /v1/chat/completions with streaming and
// /v1/embeddings. It is off by default; CodeLoom never needs a network.
type OpenAI struct {
	// BaseURL is the server, e.g. "http://127.0.0.1:8080" (a trailing /v1 is accepted).
	BaseURL string
	// Model is sent as "model" (many local servers ignore it).
	Model string
	// EmbedModel is the model for embeddings ("" = Model).
	EmbedModel string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Client is the HTTP client (default: a client without overall timeout,
	// since answers stream; see ConnectTimeout and IdleTimeout).
	Client *http.Client
	// ConnectTimeout bounds the wait for response headers (default 30 s).
	ConnectTimeout time.Duration
	// IdleTimeout bounds the silence between streamed chunks (default 60 s).
	IdleTimeout time.Duration
	// Server describes the server, as Probe found it. The zero value (not
	// probed) sends every request as is, without a context budget.
	Server ServerInfo
}

// NewOpenAI returns a client for the server at baseURL.
func NewOpenAI(baseURL, model string) *OpenAI {
	return &OpenAI{BaseURL: baseURL, Model: model}
}

// Info describes the remote model.
func (o *OpenAI) Info() ModelInfo {
	return ModelInfo{Name: o.Model, Path: o.BaseURL, Source: "endpoint", ContextLength: o.Server.ContextLength}
}

// ContextLength is the server's context in tokens (0 when unknown).
func (o *OpenAI) ContextLength() int { return o.Server.ContextLength }

func (o *OpenAI) url(path string) string {
	base := strings.TrimRight(o.BaseURL, "/")
	base = strings.TrimSuffix(base, "/v1")
	return base + "/v1" + path
}

func (o *OpenAI) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	return http.DefaultClient
}

// post sends body as JSON; the response must be 200. cancel aborts the request.
func (o *OpenAI) post(ctx context.Context, path string, body any) (*http.Response, context.CancelFunc, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url(path), bytes.NewReader(data))
	if err != nil {
		cancel()
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	connect := o.ConnectTimeout
	if connect <= 0 {
		connect = 30 * time.Second
	}
	var late atomic.Bool
	timer := time.AfterFunc(connect, func() { late.Store(true); cancel() })
	resp, err := o.client().Do(req)
	timer.Stop()
	if err != nil {
		cancel()
		if late.Load() {
			return nil, nil, fmt.Errorf("%s: no response within %s", o.url(path), connect)
		}
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		defer cancel()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		text := strings.TrimSpace(string(msg))
		if json.Unmarshal(msg, &e) == nil && e.Error.Message != "" {
			text = e.Error.Message
		}
		switch {
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			return nil, nil, fmt.Errorf("%s: HTTP %d: %s: %w", o.url(path), resp.StatusCode, text, ErrNeedsKey)
		case resp.StatusCode == http.StatusBadRequest && o.Model == "" && strings.Contains(strings.ToLower(text), "model"):
			return nil, nil, fmt.Errorf("%s: HTTP %d: %s (name the server's model with --endpoint-model; GET /v1/models lists them)", o.url(path), resp.StatusCode, text)
		}
		return nil, nil, fmt.Errorf("%s: HTTP %d: %s", o.url(path), resp.StatusCode, text)
	}
	return resp, cancel, nil
}

type chatRequest struct {
	Model          string    `json:"model,omitempty"`
	Messages       []Message `json:"messages"`
	Stream         bool      `json:"stream"`
	MaxTokens      int       `json:"max_tokens,omitempty"`
	Temperature    float32   `json:"temperature"`
	TopP           float32   `json:"top_p,omitempty"`
	TopK           int       `json:"top_k,omitempty"`
	MinP           float32   `json:"min_p,omitempty"`
	RepeatPenalty  float32   `json:"repeat_penalty,omitempty"`
	Seed           *int      `json:"seed,omitempty"`
	Stop           []string  `json:"stop,omitempty"`
	Grammar        string    `json:"grammar,omitempty"` // llama.cpp's extra field
	ResponseFormat any       `json:"response_format,omitempty"`
}

// Generate implements Engine with a streamed chat completion. When the
// server was probed (Probe, Connect) the prompt is budgeted against its
// context: a prompt that does not fit fails with ErrPromptTooLong instead of
// being cut by the server, and the answer's token limit is lowered to what
// is left. An answer the server ends for its token limit (finish_reason
// "length"), or a stream that stops before "[DONE]" without a finish
// reason, is returned with an *IncompleteError.
func (o *OpenAI) Generate(ctx context.Context, msgs []Message, opts GenOptions, onToken func(string)) (string, error) {
	req := chatRequest{
		Model: o.Model, Messages: msgs, Stream: true, MaxTokens: opts.MaxTokens,
		Temperature: opts.Temperature, TopP: opts.TopP, TopK: opts.TopK, MinP: opts.MinP,
		RepeatPenalty: opts.RepeatPenalty, Stop: opts.Stop, Grammar: opts.Grammar,
	}
	if opts.Seed != 0 {
		seed := opts.Seed
		req.Seed = &seed
	}
	schema := opts.JSONSchema
	unquote := false // the answer is a JSON string standing for a grammar's literal
	if opts.Grammar != "" && o.Server.Kind != "" && !o.Server.Grammar {
		// servers without GBNF (Ollama) drop the field silently: a choice
		// between literals becomes a JSON-schema enum, anything else is
		// sent unconstrained (and said so in the log)
		req.Grammar = ""
		if lits := grammarLiterals(opts.Grammar); lits != nil && schema == "" {
			b, _ := json.Marshal(map[string]any{"type": "string", "enum": lits})
			schema, unquote = string(b), true
		} else {
			slog.Warn("the server does not support grammars: generating unconstrained", "server", o.BaseURL)
		}
	}
	if schema != "" {
		var v any
		if err := json.Unmarshal([]byte(schema), &v); err != nil {
			return "", fmt.Errorf("generate: invalid JSON schema: %w", err)
		}
		req.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "answer", "schema": v, "strict": true}}
	}
	limit, err := o.budget(ctx, msgs, opts.MaxTokens)
	if err != nil {
		return "", fmt.Errorf("generate: %w", err)
	}
	req.MaxTokens = limit
	resp, cancel, err := o.post(ctx, "/chat/completions", req)
	if err != nil {
		return "", fmt.Errorf("generate: %w", err)
	}
	defer cancel()
	defer resp.Body.Close()
	text, err := o.readStream(ctx, resp.Body, cancel, onToken, limit)
	if unquote {
		var s string
		if json.Unmarshal([]byte(strings.TrimSpace(text)), &s) == nil {
			text = s
		}
	}
	return text, err
}

// budget checks msgs against the server's context (when known) and returns
// the answer's token limit: maxTokens, lowered to what the context leaves.
func (o *OpenAI) budget(ctx context.Context, msgs []Message, maxTokens int) (int, error) {
	n := o.Server.ContextLength
	if n <= 0 {
		return maxTokens, nil
	}
	prompt := o.PromptTokens(msgs)
	if prompt+minAnswerTokens > n {
		return 0, fmt.Errorf("%w: about %d tokens, and the server's context is %d tokens (%s); "+
			"ask with less code (--budget) or start the server with a larger context", ErrPromptTooLong, prompt, n, o.Server.ContextFrom)
	}
	if maxTokens <= 0 || prompt+maxTokens > n {
		maxTokens = n - prompt
	}
	return maxTokens, nil
}

// minAnswerTokens is the least room an answer needs next to the prompt.
const minAnswerTokens = 16

// readStream reads a server-sent-events chat stream, calling onToken with
// each piece, and says whether the answer ended normally.
func (o *OpenAI) readStream(ctx context.Context, body io.Reader, cancel context.CancelFunc, onToken func(string), limit int) (string, error) {
	idle := o.IdleTimeout
	if idle <= 0 {
		idle = 60 * time.Second
	}
	var timedOut atomic.Bool
	timer := time.AfterFunc(idle, func() { timedOut.Store(true); cancel() })
	defer timer.Stop()

	var out strings.Builder
	finish := ""
	ended := func() (string, error) {
		if finish == "length" {
			return out.String(), fmt.Errorf("generate: %w", &IncompleteError{Reason: IncompleteLength, Limit: limit})
		}
		return out.String(), nil
	}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		timer.Reset(idle)
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "data:") {
			continue // blank separators, comments, event: lines
		}
		data := strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		if data == "[DONE]" {
			return ended()
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return out.String(), fmt.Errorf("generate: bad stream chunk %.80q: %w", data, err)
		}
		if chunk.Error != nil {
			return out.String(), fmt.Errorf("generate: server error: %s", chunk.Error.Message)
		}
		for _, c := range chunk.Choices {
			piece := c.Delta.Content + c.Message.Content
			if piece != "" {
				out.WriteString(piece)
				if onToken != nil {
					onToken(piece)
				}
			}
			if c.FinishReason != nil && *c.FinishReason != "" {
				finish = *c.FinishReason
			}
		}
	}
	err := sc.Err()
	switch {
	case ctx.Err() != nil:
		return out.String(), fmt.Errorf("generate: %w", ctx.Err())
	case timedOut.Load():
		return out.String(), fmt.Errorf("generate: server silent for %s", idle)
	case err != nil:
		return out.String(), fmt.Errorf("generate: reading stream: %w", err)
	case finish == "":
		// the stream stopped without [DONE] and without saying why: the
		// server or the connection died mid-answer
		return out.String(), fmt.Errorf("generate: %w", &IncompleteError{Reason: IncompleteStream})
	}
	// a finish reason was given: a server that then closes without [DONE]
	// has still answered
	return ended()
}

// Embed implements Engine with /v1/embeddings; vectors are L2-normalised.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	model := o.EmbedModel
	if model == "" {
		model = o.Model
	}
	resp, cancel, err := o.post(ctx, "/embeddings", map[string]any{"model": model, "input": texts})
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	defer cancel()
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<30)).Decode(&body); err != nil {
		return nil, fmt.Errorf("embed: decode response: %w", err)
	}
	if len(body.Data) != len(texts) {
		return nil, fmt.Errorf("embed: %d vectors for %d texts", len(body.Data), len(texts))
	}
	sort.SliceStable(body.Data, func(i, j int) bool { return body.Data[i].Index < body.Data[j].Index })
	out := make([][]float32, len(texts))
	for i, d := range body.Data {
		if len(d.Embedding) == 0 || Normalize(d.Embedding) == 0 {
			return nil, fmt.Errorf("embed: empty vector for text %d", i)
		}
		out[i] = d.Embedding
	}
	return out, nil
}
