package models

import (
	"context"
	"errors"
	"io"
	"sync"
)

// ErrNoModel is returned by a Holder with no engine set.
var ErrNoModel = errors.New("no model loaded")

// Holder is an Engine that forwards to the engine currently set, so the app
// can share one loaded model with every part and swap it (e.g. when the user
// picks another model) without handing out new references. Safe for
// concurrent use.
type Holder struct {
	mu sync.RWMutex
	e  Engine
}

// Set makes e the current engine (nil = none) and closes the previous one
// when it is an io.Closer. Calls running on the previous engine are stopped
// by its Close.
func (h *Holder) Set(e Engine) error {
	h.mu.Lock()
	old := h.e
	h.e = e
	h.mu.Unlock()
	if c, ok := old.(io.Closer); ok && old != e {
		return c.Close()
	}
	return nil
}

// Current returns the engine set, or nil.
func (h *Holder) Current() Engine {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.e
}

// Generate forwards to the current engine.
func (h *Holder) Generate(ctx context.Context, msgs []Message, opts GenOptions, onToken func(string)) (string, error) {
	e := h.Current()
	if e == nil {
		return "", ErrNoModel
	}
	return e.Generate(ctx, msgs, opts, onToken)
}

// Embed forwards to the current engine.
func (h *Holder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e := h.Current()
	if e == nil {
		return nil, ErrNoModel
	}
	return e.Embed(ctx, texts)
}

// CountTokens counts with the current engine's tokenizer, or estimates.
func (h *Holder) CountTokens(text string) int {
	if e := h.Current(); e != nil {
		return CountTokens(e, text)
	}
	return EstimateTokens(text)
}

// Info describes the current engine's model (zero when unknown).
func (h *Holder) Info() ModelInfo {
	if ip, ok := h.Current().(InfoProvider); ok {
		return ip.Info()
	}
	return ModelInfo{}
}
