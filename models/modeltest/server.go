// Package modeltest runs stand-ins for the model servers CodeLoom talks to —
// Ollama and llama.cpp's llama-server — on loopback, for tests. They behave
// like the real ones at the seams that matter: Ollama needs a model name
// ("model is required"), drops GBNF grammars but honours a JSON-schema
// response_format, and silently cuts a prompt longer than its context;
// llama-server reports its context on /props, counts tokens on /tokenize,
// refuses requests without its API key (401), and refuses prompts longer
// than its context. Both list their models on /v1/models.
package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Server kinds.
const (
	Ollama   = "ollama"
	LlamaCpp = "llama.cpp"
)

// Config describes a stand-in server.
type Config struct {
	Kind    string   // Ollama or LlamaCpp
	Models  []string // served model names (default: one, "tiny:latest" or "tiny.gguf")
	APIKey  string   // llama-server: required bearer token ("" = none)
	Context int      // context in tokens (default 2048)
	// NumCtx is the num_ctx parameter Ollama's /api/show reports (0: none,
	// so Ollama's default of 2048 applies).
	NumCtx int
	// Answers are the answers to successive chat requests (the last one
	// repeats).
	Answers []string
	// Finish is the finish_reason of the last chunk ("" = "stop"); "length"
	// makes every answer a cut-off one.
	Finish string
	// NoDone ends each stream without its final chunk and without [DONE].
	NoDone bool
	// Embeddings enables /v1/embeddings (llama-server needs --embeddings).
	Embeddings bool
}

// Request is one chat request the server received.
type Request struct {
	Model          string          `json:"model"`
	Messages       []message       `json:"messages"`
	MaxTokens      int             `json:"max_tokens"`
	Grammar        string          `json:"grammar"`
	ResponseFormat json.RawMessage `json:"response_format"`
	// PromptTokens is the prompt's size by the server's tokenizer.
	PromptTokens int `json:"-"`
	// Cut is true when the server cut the prompt to its context (Ollama).
	Cut bool `json:"-"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Server is a running stand-in.
type Server struct {
	*httptest.Server
	cfg      Config
	mu       sync.Mutex
	requests []Request
	next     int
}

// Start starts a stand-in on loopback; Close stops it.
func Start(cfg Config) *Server {
	if cfg.Context == 0 {
		cfg.Context = 2048
	}
	if len(cfg.Models) == 0 {
		cfg.Models = []string{"tiny:latest"}
		if cfg.Kind == LlamaCpp {
			cfg.Models = []string{"tiny.gguf"}
		}
	}
	s := &Server{cfg: cfg}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Requests returns the chat requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Tokens is the stand-ins' tokenizer: one token per 4 bytes (rounded up), a
// typical density for code with the common vocabularies.
func Tokens(text string) int { return (len(text) + 3) / 4 }

// promptTokens is a chat's size: its texts plus 4 tokens of template per message.
func promptTokens(msgs []message) int {
	n := 0
	for _, m := range msgs {
		n += Tokens(m.Content) + 4
	}
	return n
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "type": typ}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if path == "/v1/models" || path == "/models" {
		var data []map[string]any
		for _, m := range s.cfg.Models {
			owner := "library"
			if s.cfg.Kind == LlamaCpp {
				owner = "llamacpp"
			}
			data = append(data, map[string]any{"id": m, "object": "model", "owned_by": owner})
		}
		writeJSON(w, map[string]any{"object": "list", "data": data})
		return
	}
	if s.cfg.Kind == LlamaCpp {
		s.serveLlama(w, r)
		return
	}
	s.serveOllama(w, r)
}

func (s *Server) serveLlama(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/health" {
		writeJSON(w, map[string]string{"status": "ok"})
		return
	}
	if s.cfg.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey {
		writeError(w, http.StatusUnauthorized, "authentication_error", "Invalid API Key")
		return
	}
	switch r.URL.Path {
	case "/props":
		writeJSON(w, map[string]any{"default_generation_settings": map[string]any{"n_ctx": s.cfg.Context}, "total_slots": 1, "model_path": s.cfg.Models[0]})
	case "/tokenize":
		var req struct {
			Content string `json:"content"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		toks := make([]int, Tokens(req.Content))
		for i := range toks {
			toks[i] = i + 1
		}
		writeJSON(w, map[string]any{"tokens": toks})
	case "/v1/chat/completions", "/chat/completions":
		s.chat(w, r)
	case "/v1/embeddings", "/embeddings":
		s.embed(w, r)
	default:
		writeError(w, http.StatusNotFound, "not_found_error", "File Not Found")
	}
}

func (s *Server) serveOllama(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		fmt.Fprint(w, "Ollama is running")
	case "/api/version":
		writeJSON(w, map[string]string{"version": "0.12.0"})
	case "/api/ps":
		writeJSON(w, map[string]any{"models": []any{}})
	case "/api/show":
		var req struct {
			Model string `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if !s.serves(req.Model) {
			writeError(w, http.StatusNotFound, "api_error", fmt.Sprintf("model '%s' not found", req.Model))
			return
		}
		params := "stop \"<|im_end|>\""
		if s.cfg.NumCtx > 0 {
			params = fmt.Sprintf("num_ctx %d\n%s", s.cfg.NumCtx, params)
		}
		writeJSON(w, map[string]any{"parameters": params, "model_info": map[string]any{"general.architecture": "llama", "llama.context_length": 32768}})
	case "/v1/chat/completions":
		s.chat(w, r)
	case "/v1/embeddings":
		s.embed(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) serves(name string) bool {
	for _, m := range s.cfg.Models {
		if m == name {
			return true
		}
	}
	return false
}

// context is the context a chat request gets: Ollama's num_ctx, else its default.
func (s *Server) context() int {
	if s.cfg.Kind == Ollama {
		if s.cfg.NumCtx > 0 {
			return s.cfg.NumCtx
		}
		return 2048
	}
	return s.cfg.Context
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if s.cfg.Kind == Ollama {
		if req.Model == "" {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "model is required")
			return
		}
		if !s.serves(req.Model) {
			writeError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("model %q not found, try pulling it first", req.Model))
			return
		}
		req.Grammar = "" // Ollama has no grammar field: it is dropped silently
	}
	req.PromptTokens = promptTokens(req.Messages)
	limit := s.context()
	if req.PromptTokens > limit {
		if s.cfg.Kind == LlamaCpp {
			writeError(w, http.StatusBadRequest, "exceed_context_size_error", "the request exceeds the available context size, try increasing it")
			return
		}
		req.Cut = true // Ollama keeps the prompt's end and says nothing
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	answer := ""
	if len(s.cfg.Answers) > 0 {
		answer = s.cfg.Answers[min(s.next, len(s.cfg.Answers)-1)]
		s.next++
	}
	s.mu.Unlock()
	// a JSON-schema enum constraint answers with one of its values, quoted
	var rf struct {
		JSONSchema struct {
			Schema struct {
				Enum []string `json:"enum"`
			} `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(req.ResponseFormat, &rf) == nil && len(rf.JSONSchema.Schema.Enum) > 0 {
		pick := rf.JSONSchema.Schema.Enum[0]
		for _, e := range rf.JSONSchema.Schema.Enum {
			if strings.Contains(answer, e) {
				pick = e
				break
			}
		}
		b, _ := json.Marshal(pick)
		answer = string(b)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for len(answer) > 0 {
		n := min(5, len(answer))
		b, _ := json.Marshal(answer[:n])
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", b)
		answer = answer[n:]
	}
	if s.cfg.NoDone {
		return
	}
	finish := s.cfg.Finish
	if finish == "" {
		finish = "stop"
	}
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%q}]}\n\ndata: [DONE]\n\n", finish)
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.Embeddings {
		writeError(w, http.StatusNotImplemented, "not_supported_error", "This server does not support embeddings. Start it with `--embeddings`")
		return
	}
	var req struct {
		Input []string `json:"input"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	var data []map[string]any
	for i, in := range req.Input {
		v := []float32{1, float32(len(in) % 7), float32(strings.Count(in, "e"))}
		data = append(data, map[string]any{"index": i, "embedding": v})
	}
	writeJSON(w, map[string]any{"data": data})
}
