package models

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

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
}

// NewOpenAI returns a client for the server at baseURL.
func NewOpenAI(baseURL, model string) *OpenAI {
	return &OpenAI{BaseURL: baseURL, Model: model}
}

// Info describes the remote model.
func (o *OpenAI) Info() ModelInfo {
	return ModelInfo{Name: o.Model, Path: o.BaseURL, Source: "endpoint"}
}

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
	Grammar        string    `json:"grammar,omitempty"`
	ResponseFormat any       `json:"response_format,omitempty"`
}

// Generate implements Engine with a streamed chat completion.
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
	if opts.JSONSchema != "" {
		var schema any
		if err := json.Unmarshal([]byte(opts.JSONSchema), &schema); err != nil {
			return "", fmt.Errorf("generate: invalid JSON schema: %w", err)
		}
		req.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "answer", "schema": schema, "strict": true}}
	}
	resp, cancel, err := o.post(ctx, "/chat/completions", req)
	if err != nil {
		return "", fmt.Errorf("generate: %w", err)
	}
	defer cancel()
	defer resp.Body.Close()
	idle := o.IdleTimeout
	if idle <= 0 {
		idle = 60 * time.Second
	}
	var timedOut atomic.Bool
	timer := time.AfterFunc(idle, func() { timedOut.Store(true); cancel() })
	defer timer.Stop()

	var out strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		timer.Reset(idle)
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "data:") {
			continue // blank separators, comments, event: lines
		}
		data := strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		if data == "[DONE]" {
			return out.String(), nil
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
		}
	}
	err = sc.Err()
	switch {
	case ctx.Err() != nil:
		return out.String(), fmt.Errorf("generate: %w", ctx.Err())
	case timedOut.Load():
		return out.String(), fmt.Errorf("generate: server silent for %s", idle)
	case err != nil:
		return out.String(), fmt.Errorf("generate: reading stream: %w", err)
	}
	// a server that closes without [DONE] has still answered
	return out.String(), nil
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
