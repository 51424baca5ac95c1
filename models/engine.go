// Package models is CodeLoom's local language model layer: the Engine
// interface every consumer codes against, model discovery and GGUF header
// reading (pure Go, no weights loaded), chat templates, an OpenAI-compatible
// HTTP client and a scripted engine for tests. The llama.cpp runtime lives in
// the sub-package models/llamacpp, the only package that needs cgo.
package models

import (
	"context"
	"errors"
)

// Message is one turn of a chat.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// Chat roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// GenOptions controls one generation. The zero value means: engine default
// token limit, greedy decoding (temperature 0 is true argmax), no stop
// sequences and no constraint.
type GenOptions struct {
	MaxTokens     int      // 0 = engine default
	Temperature   float32  // 0 = greedy (argmax)
	TopK          int      // 0 = disabled
	TopP          float32  // 0 or 1 = disabled
	MinP          float32  // 0 = disabled
	RepeatPenalty float32  // 0 or 1 = disabled
	Seed          int      // sampling seed; ignored when greedy
	Stop          []string // generation ends before any of these strings
	Grammar       string   // GBNF grammar constraining the output
	JSONSchema    string   // JSON schema constraining the output (converted to a grammar)
}

// Engine is a language model: streamed chat generation and embeddings.
// Implementations are safe for concurrent use.
type Engine interface {
	// Generate answers the chat msgs, calling onToken (if non-nil) with each
	// piece of text as it is produced (always whole UTF-8 characters), and
	// returns the full answer. Cancelling ctx stops generation promptly; the
	// text produced so far is returned with ctx's error.
	Generate(ctx context.Context, msgs []Message, opts GenOptions, onToken func(string)) (string, error)
	// Embed returns one L2-normalised vector per text.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// TokenCounter is implemented by engines that can count the tokens of a text
// with the model's own tokenizer (for context budgeting).
type TokenCounter interface {
	CountTokens(text string) int
}

// InfoProvider is implemented by engines that can describe their model.
type InfoProvider interface {
	Info() ModelInfo
}

// ModelInfo describes a model, as read from its GGUF header or reported by a server.
type ModelInfo struct {
	Name          string `json:"name"`
	Path          string `json:"path,omitempty"`
	Source        string `json:"source,omitempty"` // where discovery found it: "models", "lmstudio", "huggingface", "ollama", "folder", "endpoint"
	Architecture  string `json:"architecture,omitempty"`
	Parameters    uint64 `json:"parameters,omitempty"`
	FileType      string `json:"file_type,omitempty"` // quantisation, e.g. "Q8_0"
	ContextLength int    `json:"context_length,omitempty"`
	EmbeddingLen  int    `json:"embedding_length,omitempty"`
	Size          int64  `json:"size,omitempty"` // file size in bytes
	ChatTemplate  string `json:"-"`
}

// ErrNoEmbeddings is returned by engines whose model cannot embed.
var ErrNoEmbeddings = errors.New("model does not support embeddings")

// CountTokens counts text's tokens with e's tokenizer when it has one, else
// estimates about 4 bytes per token (a common rule of thumb for code).
func CountTokens(e Engine, text string) int {
	if tc, ok := e.(TokenCounter); ok {
		return tc.CountTokens(text)
	}
	return EstimateTokens(text)
}

// EstimateTokens estimates the token count of text without a tokenizer
// (ceil(bytes/4)).
func EstimateTokens(text string) int {
	return (len(text) + 3) / 4
}

// ContextLength is e's context in tokens when it knows it (an in-process
// model, a probed server), else 0.
func ContextLength(e Engine) int {
	if cl, ok := e.(interface{ ContextLength() int }); ok {
		return cl.ContextLength()
	}
	return 0
}

// PromptTokens counts the tokens msgs take as a prompt of e: rendered with
// its chat template when it has one, else their text plus an allowance for
// the template's markers.
func PromptTokens(e Engine, msgs []Message) int {
	if pc, ok := e.(interface{ PromptTokens([]Message) int }); ok {
		return pc.PromptTokens(msgs)
	}
	n := 0
	for _, m := range msgs {
		n += CountTokens(e, m.Content) + templateAllowance
	}
	return n + templateAllowance
}
