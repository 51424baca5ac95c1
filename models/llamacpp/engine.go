// Package llamacpp runs GGUF models in-process with llama.cpp (through
// github.com/ollama/ollama/llama, cgo) behind models.Engine: streamed,
// cancellable generation with sampling, stop strings and grammar/JSON-schema
// constraints, pooled embeddings and token counting. One Engine holds one
// loaded model; calls are serialised, so it can be shared by all callers.
package llamacpp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"codeloom/models"
	"codeloom/models/gguf"
)

// Options are the load settings. Zero values pick defaults.
type Options struct {
	ContextLength int           // tokens; 0 = the model's, capped at 4096
	Threads       int           // 0 = number of CPUs
	BatchSize     int           // prompt tokens per decode; 0 = 512
	NoMmap        bool          // read the weights into memory instead of mapping the file
	KVCacheType   string        // "" (f16), "q8_0" or "q4_0"
	MaxTokens     int           // default generation limit; 0 = 512
	Progress      func(float32) // load progress 0…1 (called from the loading goroutine)
	// SkipMemoryCheck loads even when the model looks too large for free memory.
	SkipMemoryCheck bool
	// Probe loads the model once in a child process before loading it here,
	// so a file that makes llama.cpp abort cannot take the app down. The
	// executable must call MaybeProbe at start; if it does not, the probe is
	// skipped. Costs one extra (memory-mapped) load.
	Probe bool
	// ProbeExecutable is the program run as the probe ("" = this one).
	ProbeExecutable string
}

// ErrClosed is returned by calls on a closed Engine.
var ErrClosed = errors.New("model is unloaded")

// ErrEmbeddingOnly is returned by Generate on embedding models (BERT and kin).
var ErrEmbeddingOnly = errors.New("model is an embedding model and cannot generate text")

// Engine is a loaded GGUF model. It implements models.Engine,
// models.TokenCounter and models.InfoProvider, and is safe for concurrent use.
type Engine struct {
	info      models.ModelInfo
	format    models.ChatFormat
	opts      Options
	ctxLen    int
	embedOnly bool // encoder model: Embed only

	closing chan struct{} // closed by Close: running calls stop
	once    sync.Once

	life sync.RWMutex // read-held by every call; Close takes it to free
	mu   sync.Mutex   // serialises use of the llama context
	b    *backend     // nil after Close
}

// Load checks the file in pure Go (GGUF header, architecture, free memory)
// and then loads it with llama.cpp. ctx is checked before the native load
// starts; llama.cpp cannot be interrupted mid-load.
func Load(ctx context.Context, path string, opts Options) (*Engine, error) {
	info, g, err := models.Inspect(path)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	if opts.ContextLength <= 0 {
		opts.ContextLength = 4096
		if info.ContextLength > 0 && info.ContextLength < opts.ContextLength {
			opts.ContextLength = info.ContextLength
		}
	}
	if opts.Threads <= 0 {
		opts.Threads = runtime.NumCPU()
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 512
	}
	opts.BatchSize = min(opts.BatchSize, opts.ContextLength)
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = 512
	}
	if !opts.SkipMemoryCheck {
		if err := models.CheckMemory(g, opts.ContextLength); err != nil {
			return nil, fmt.Errorf("load model %s: %w", path, err)
		}
	}
	if opts.Probe {
		if err := Probe(ctx, opts.ProbeExecutable, path); err != nil {
			if !errors.Is(err, ErrProbeUnsupported) {
				return nil, fmt.Errorf("load model: %w", err)
			}
			slog.Warn("model probe skipped", "reason", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	start := time.Now()
	b, err := loadBackend(path, loadParams{
		ctxLen: opts.ContextLength, batch: opts.BatchSize, threads: opts.Threads,
		noMmap: opts.NoMmap, progress: opts.Progress, kvType: opts.KVCacheType,
	})
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	slog.Info("model loaded", "path", path, "arch", info.Architecture, "ctx", opts.ContextLength, "threads", opts.Threads, "took", time.Since(start))
	return &Engine{
		info: info, format: models.ChatFormatFor(info.ChatTemplate), opts: opts,
		ctxLen: opts.ContextLength, closing: make(chan struct{}), b: b,
		embedOnly: gguf.EmbeddingArchitecture(info.Architecture),
	}, nil
}

// Loading is a model load running in the background.
type Loading struct {
	done     chan struct{}
	engine   *Engine
	err      error
	mu       sync.Mutex
	progress float32
}

// LoadAsync starts loading path in a goroutine. opts.Progress, if set, is
// still called; Progress() reports the latest value too.
func LoadAsync(ctx context.Context, path string, opts Options) *Loading {
	l := &Loading{done: make(chan struct{})}
	user := opts.Progress
	opts.Progress = func(p float32) {
		l.mu.Lock()
		l.progress = p
		l.mu.Unlock()
		if user != nil {
			user(p)
		}
	}
	go func() {
		defer close(l.done)
		l.engine, l.err = Load(ctx, path, opts)
		if l.err == nil && ctx.Err() != nil { // cancelled while llama.cpp was loading
			l.engine.Close()
			l.engine, l.err = nil, fmt.Errorf("load model %s: %w", path, ctx.Err())
		}
	}()
	return l
}

// Done is closed when the load has finished or failed.
func (l *Loading) Done() <-chan struct{} { return l.done }

// Progress is the latest load progress, 0…1.
func (l *Loading) Progress() float32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.progress
}

// Wait blocks until the load ends or ctx is done.
func (l *Loading) Wait(ctx context.Context) (*Engine, error) {
	select {
	case <-l.done:
		return l.engine, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Info describes the loaded model.
func (e *Engine) Info() models.ModelInfo { return e.info }

// ChatFormat is the prompt format chosen from the model's chat template.
func (e *Engine) ChatFormat() models.ChatFormat { return e.format }

// ContextLength is the context size in tokens.
func (e *Engine) ContextLength() int { return e.ctxLen }

// Close unloads the model. Running calls are stopped first; later calls
// return ErrClosed. Close is idempotent.
func (e *Engine) Close() error {
	e.once.Do(func() { close(e.closing) })
	e.life.Lock()
	defer e.life.Unlock()
	if e.b != nil {
		e.b.free()
		e.b = nil
	}
	return nil
}

// acquire takes the engine for one call; release with the returned func.
func (e *Engine) acquire() (*backend, func(), error) {
	e.life.RLock()
	if e.b == nil {
		e.life.RUnlock()
		return nil, nil, ErrClosed
	}
	e.mu.Lock()
	return e.b, func() { e.mu.Unlock(); e.life.RUnlock() }, nil
}

// stopped reports why a call must stop now (nil to go on).
func (e *Engine) stopped(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-e.closing:
		return ErrClosed
	default:
		return nil
	}
}

// CountTokens counts text's tokens with the model's tokenizer (without
// BOS); on failure it falls back to an estimate. It does not wait for a
// running generation: llama.cpp's tokenizer only reads the vocabulary.
func (e *Engine) CountTokens(text string) int {
	e.life.RLock()
	defer e.life.RUnlock()
	b := e.b
	if b == nil {
		return models.EstimateTokens(text)
	}
	toks, err := b.tokenize(text, false)
	if err != nil {
		return models.EstimateTokens(text)
	}
	return len(toks)
}

// Prompt renders msgs with the model's chat format.
func (e *Engine) Prompt(msgs []models.Message) (string, error) {
	return e.format.Render(msgs)
}

// PromptTokens counts the tokens of msgs rendered with the model's chat
// template.
func (e *Engine) PromptTokens(msgs []models.Message) int {
	prompt, err := e.format.Render(msgs)
	if err != nil {
		n := 0
		for _, m := range msgs {
			n += e.CountTokens(m.Content) + 8
		}
		return n
	}
	return e.CountTokens(prompt)
}

// Generate implements models.Engine.
func (e *Engine) Generate(ctx context.Context, msgs []models.Message, opts models.GenOptions, onToken func(string)) (string, error) {
	prompt, err := e.format.Render(msgs)
	if err != nil {
		return "", fmt.Errorf("generate: %w", err)
	}
	// the format's turn markers end the answer too, besides the caller's stops
	opts.Stop = append(append([]string(nil), opts.Stop...), e.format.Stop...)
	return e.Complete(ctx, prompt, opts, onToken)
}

// Complete continues raw prompt text (no chat template), streaming pieces to
// onToken. It returns the text produced; on cancellation the text so far
// and the context's error.
func (e *Engine) Complete(ctx context.Context, prompt string, opts models.GenOptions, onToken func(string)) (string, error) {
	text, _, err := e.CompleteStats(ctx, prompt, opts, onToken)
	return text, err
}

// Stats are the measurements of one generation.
type Stats struct {
	PromptTokens int
	PromptTime   time.Duration // prompt processing
	GenTokens    int           // tokens sampled (the end-of-generation token included)
	GenTime      time.Duration // from the first sample to the end
}

// PromptRate is prompt tokens per second.
func (s Stats) PromptRate() float64 { return rate(s.PromptTokens, s.PromptTime) }

// GenRate is generated tokens per second.
func (s Stats) GenRate() float64 { return rate(s.GenTokens, s.GenTime) }

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// CompleteStats is Complete that also reports token counts and timings.
func (e *Engine) CompleteStats(ctx context.Context, prompt string, opts models.GenOptions, onToken func(string)) (string, Stats, error) {
	var st Stats
	text, err := e.complete(ctx, prompt, opts, onToken, &st)
	return text, st, err
}

func (e *Engine) complete(ctx context.Context, prompt string, opts models.GenOptions, onToken func(string), st *Stats) (string, error) {
	if e.embedOnly {
		return "", fmt.Errorf("generate: %s: %w", e.info.Name, ErrEmbeddingOnly)
	}
	grammar := opts.Grammar
	if grammar == "" && opts.JSONSchema != "" {
		grammar = schemaToGrammar(opts.JSONSchema)
		if grammar == "" {
			return "", fmt.Errorf("generate: invalid JSON schema")
		}
	}
	b, release, err := e.acquire()
	if err != nil {
		return "", fmt.Errorf("generate: %w", err)
	}
	defer release()
	if err := e.stopped(ctx); err != nil {
		return "", fmt.Errorf("generate: %w", err)
	}
	toks, err := b.tokenize(prompt, true)
	if err != nil {
		return "", fmt.Errorf("generate: tokenize prompt: %w", err)
	}
	if len(toks) >= e.ctxLen {
		return "", fmt.Errorf("generate: prompt of %d tokens does not fit the context of %d tokens", len(toks), e.ctxLen)
	}
	maxTok := opts.MaxTokens
	if maxTok <= 0 {
		maxTok = e.opts.MaxTokens
	}
	s, err := b.newSampler(samplerFor(opts, grammar))
	if err != nil {
		return "", fmt.Errorf("generate: %w", err)
	}
	b.clearKV()
	t0 := time.Now()
	for i := 0; i < len(toks); i += b.size {
		if err := e.stopped(ctx); err != nil {
			return "", fmt.Errorf("generate: %w", err)
		}
		if err := b.decode(toks[i:min(i+b.size, len(toks))], i, false); err != nil {
			return "", fmt.Errorf("generate: prompt: %w", err)
		}
	}
	t1 := time.Now()
	st.PromptTokens, st.PromptTime = len(toks), t1.Sub(t0)
	defer func() { st.GenTime = time.Since(t1) }()
	out := newStream(opts.Stop, onToken)
	pos := len(toks)
	for n := 0; ; n++ {
		if n >= maxTok || pos >= e.ctxLen {
			// the model did not end its answer: it is cut off
			cut := &models.IncompleteError{Reason: models.IncompleteLength, Limit: maxTok}
			if n < maxTok {
				cut = &models.IncompleteError{Reason: models.IncompleteContext, Limit: n}
			}
			return out.flush(), fmt.Errorf("generate: %w", cut)
		}
		if err := e.stopped(ctx); err != nil {
			return out.flush(), fmt.Errorf("generate: %w", err)
		}
		tok := b.sample(s, b.lastIndex())
		s.accept(tok)
		st.GenTokens++
		if b.isEOG(tok) {
			break
		}
		if out.add(b.piece(tok)) {
			return out.text(), nil
		}
		if err := b.decode([]int{tok}, pos, false); err != nil {
			return out.flush(), fmt.Errorf("generate: %w", err)
		}
		pos++
	}
	return out.flush(), nil
}

// samplerFor maps GenOptions to llama.cpp's sampler chain. Disabled filters
// get their neutral values (top-p 1, penalty 1); temperature ≤ 0 makes the
// chain pick the argmax.
func samplerFor(o models.GenOptions, grammar string) samplerParams {
	p := samplerParams{topK: o.TopK, topP: o.TopP, minP: o.MinP, temp: o.Temperature,
		repeatLastN: 64, repeatPenalty: o.RepeatPenalty, seed: uint32(o.Seed), grammar: grammar}
	if p.topP <= 0 || p.topP > 1 {
		p.topP = 1
	}
	if p.repeatPenalty <= 0 {
		p.repeatPenalty = 1
	}
	if p.temp < 0 {
		p.temp = 0
	}
	return p
}

// Embed implements models.Engine: each text is truncated to the context,
// run through the model and pooled — by the model's own pooling layer when
// it has one (BERT-style encoders), else the last token's final hidden
// state (decoder models) — then L2-normalised.
func (e *Engine) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	b, release, err := e.acquire()
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	defer release()
	out := make([][]float32, len(texts))
	for i, text := range texts {
		if err := e.stopped(ctx); err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		v, err := e.embedOne(b, text)
		if err != nil {
			return nil, fmt.Errorf("embed text %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

func (e *Engine) embedOne(b *backend, text string) ([]float32, error) {
	toks, err := b.tokenize(text, true)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		if toks, err = b.tokenize(" ", true); err != nil {
			return nil, err
		}
	}
	if len(toks) > e.ctxLen {
		toks = toks[:e.ctxLen]
	}
	if e.embedOnly && len(toks) > b.size { // encoders see the whole text in one batch
		toks = toks[:b.size]
	}
	b.clearKV()
	var v []float32
	for i := 0; i < len(toks); i += b.size {
		chunk := toks[i:min(i+b.size, len(toks))]
		if err := b.decode(chunk, i, e.embedOnly); err != nil {
			return nil, err
		}
		if v = b.pooledEmbedding(); v != nil {
			break // the model's own pooling layer (encoders)
		}
		if i+b.size >= len(toks) {
			// decoders: the last token's hidden state, which has attended to
			// the whole text (last-token pooling, as decoder embedding
			// models do); only one output row is computed per chunk
			v = b.embeddingIth(b.lastIndex())
		}
	}
	if v == nil {
		return nil, models.ErrNoEmbeddings
	}
	if models.Normalize(v) == 0 {
		return nil, fmt.Errorf("embedding is all zeros")
	}
	return v, nil
}

// stream turns token pieces into the streamed text: bytes are decoded into
// whole UTF-8 characters (invalid bytes become U+FFFD, an incomplete
// character is held until its last byte arrives), stop strings end the text
// and are never partly shown. The streamed pieces always add up to text().
type stream struct {
	stops   []string
	onToken func(string)
	pending []byte          // bytes of an incomplete trailing character
	buf     strings.Builder // decoded text
	sent    int             // bytes of buf already passed to onToken
}

func newStream(stops []string, onToken func(string)) *stream {
	var s []string
	for _, x := range stops {
		if x != "" {
			s = append(s, x)
		}
	}
	return &stream{stops: s, onToken: onToken}
}

// decode moves complete characters from pending to buf (all when final).
func (s *stream) decode(final bool) {
	p := s.pending
	for len(p) > 0 {
		if !final && !utf8.FullRune(p) {
			break
		}
		r, n := utf8.DecodeRune(p)
		if r == utf8.RuneError && n <= 1 {
			s.buf.WriteString("\uFFFD")
		} else {
			s.buf.Write(p[:n])
		}
		p = p[n:]
	}
	s.pending = append(s.pending[:0], p...)
}

// add appends a piece and emits what is safe; true when a stop string ended the text.
func (s *stream) add(piece string) bool {
	s.pending = append(s.pending, piece...)
	s.decode(false)
	all := s.buf.String()
	for _, stop := range s.stops {
		from := max(0, s.sent-len(stop)+1)
		if i := strings.Index(all[from:], stop); i >= 0 {
			cut := all[:from+i]
			s.buf.Reset()
			s.buf.WriteString(cut)
			s.pending = s.pending[:0]
			s.emit(len(cut))
			return true
		}
	}
	// hold back a suffix that could begin a stop string
	safe := len(all)
	for _, stop := range s.stops {
		for k := min(len(stop)-1, len(all)-s.sent); k > 0; k-- {
			if strings.HasSuffix(all, stop[:k]) {
				safe = min(safe, len(all)-k)
				break
			}
		}
	}
	s.emit(safe)
	return false
}

// emit sends buf[sent:upto].
func (s *stream) emit(upto int) {
	if upto <= s.sent {
		return
	}
	piece := s.buf.String()[s.sent:upto]
	s.sent = upto
	if s.onToken != nil {
		s.onToken(piece)
	}
}

// flush emits everything left and returns the whole text.
func (s *stream) flush() string {
	s.decode(true)
	s.emit(s.buf.Len())
	return s.text()
}

func (s *stream) text() string { return s.buf.String() }
