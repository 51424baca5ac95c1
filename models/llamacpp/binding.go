package llamacpp

// This file is the only place that calls github.com/ollama/ollama/llama (cgo,
// llama.cpp). Its API is not stable: a different binding is a change to this
// file alone. Nothing here is safe for concurrent use; Engine serialises.

/*
struct llama_context;
void llama_free(struct llama_context * ctx);
*/
import "C"

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"github.com/ollama/ollama/llama"
)

// contextLayoutKnown reports whether llama.Context still starts with its C
// pointer (field c), which freeContext relies on.
var contextLayoutKnown = func() bool {
	t := reflect.TypeOf(llama.Context{})
	return t.NumField() > 0 && t.Field(0).Name == "c" && t.Field(0).Offset == 0 &&
		t.Field(0).Type.Kind() == reflect.Pointer
}()

// freeContext frees a llama.cpp context (its KV cache and compute buffers).
// The binding has no Free for contexts, so the C pointer is read from the
// Context's first field and passed to llama.cpp's own llama_free (linked
// into this program by the binding). When the binding's layout changes the
// context is left allocated rather than risking a bad free.
func freeContext(c *llama.Context) {
	if c == nil || !contextLayoutKnown {
		return
	}
	if p := *(*unsafe.Pointer)(unsafe.Pointer(c)); p != nil {
		C.llama_free((*C.struct_llama_context)(p))
	}
}

// backendOnce initialises llama.cpp's process-wide backend once; llama.cpp
// itself keeps this state globally, so it cannot live in a value.
var backendOnce sync.Once

// loadParams are the settings of one model load.
type loadParams struct {
	ctxLen    int
	batch     int
	threads   int
	noMmap    bool
	progress  func(float32)
	kvType    string // "" (f16), "q8_0" or "q4_0"
	flashAttn bool
}

// samplerParams are the settings of one generation's sampler chain.
type samplerParams struct {
	topK          int
	topP, minP    float32
	temp          float32
	repeatLastN   int
	repeatPenalty float32
	seed          uint32
	grammar       string
}

// backend is a loaded model with one context and one batch.
type backend struct {
	model *llama.Model
	lctx  *llama.Context
	batch *llama.Batch
	size  int // batch capacity
}

func loadBackend(path string, p loadParams) (*backend, error) {
	backendOnce.Do(llama.BackendInit)
	progress := p.progress
	if progress == nil { // without a callback llama.cpp prints progress dots to stderr
		progress = func(float32) {}
	}
	model, err := llama.LoadModelFromFile(path, llama.ModelParams{UseMmap: !p.noMmap, Progress: progress})
	if err != nil {
		return nil, fmt.Errorf("llama.cpp could not load the model (see log for the reason): %w", err)
	}
	lctx, err := llama.NewContextWithModel(model, llama.NewContextParams(p.ctxLen, p.batch, 1, p.threads, p.flashAttn, p.kvType))
	if err != nil {
		llama.FreeModel(model)
		return nil, fmt.Errorf("create context (%d tokens): %w", p.ctxLen, err)
	}
	batch, err := llama.NewBatch(p.batch, 1, 0)
	if err != nil {
		freeContext(lctx)
		llama.FreeModel(model)
		return nil, fmt.Errorf("create batch of %d tokens: %w", p.batch, err)
	}
	return &backend{model: model, lctx: lctx, batch: batch, size: p.batch}, nil
}

func (b *backend) free() {
	if b.batch != nil {
		b.batch.Free()
	}
	freeContext(b.lctx) // before the model it was made from
	if b.model != nil {
		llama.FreeModel(b.model)
	}
	*b = backend{}
}

func (b *backend) tokenize(text string, addSpecial bool) ([]int, error) {
	if text == "" {
		if addSpecial && b.model.AddBOSToken() {
			return b.model.Tokenize(" ", true, true)
		}
		return nil, nil
	}
	return b.model.Tokenize(text, addSpecial, true)
}

func (b *backend) piece(tok int) string { return b.model.TokenToPiece(tok) }
func (b *backend) isEOG(tok int) bool   { return b.model.TokenIsEog(tok) }
func (b *backend) nEmbd() int           { return b.model.NEmbd() }
func (b *backend) nVocab() int          { return b.model.NumVocab() }
func (b *backend) clearKV()             { b.lctx.KvCacheClear() }

// decode feeds tokens at positions start… in one batch (len(tokens) ≤ size).
// Outputs are requested for every token when allOut, else for the last only.
func (b *backend) decode(tokens []int, start int, allOut bool) error {
	if len(tokens) == 0 || len(tokens) > b.size {
		return fmt.Errorf("decode: %d tokens for a batch of %d", len(tokens), b.size)
	}
	b.batch.Clear()
	for i, t := range tokens {
		b.batch.Add(t, nil, start+i, allOut || i == len(tokens)-1, 0)
	}
	if err := b.lctx.Decode(b.batch); err != nil {
		if errors.Is(err, llama.ErrKvCacheFull) {
			return fmt.Errorf("context full: %w", err)
		}
		return err
	}
	return nil
}

// lastIndex is the batch index of the last decoded token.
func (b *backend) lastIndex() int { return b.batch.NumTokens() - 1 }

// embeddingIth is the output embedding of batch index i (nil if none).
func (b *backend) embeddingIth(i int) []float32 { return b.lctx.GetEmbeddingsIth(i) }

// pooledEmbedding is the sequence embedding of models with a pooling layer
// (nil for models without one).
func (b *backend) pooledEmbedding() []float32 { return b.lctx.GetEmbeddingsSeq(0) }

type sampler struct{ s *llama.SamplingContext }

func (b *backend) newSampler(p samplerParams) (*sampler, error) {
	s, err := llama.NewSamplingContext(b.model, llama.SamplingParams{
		TopK: p.topK, TopP: p.topP, MinP: p.minP, TypicalP: 1, Temp: p.temp,
		RepeatLastN: p.repeatLastN, PenaltyRepeat: p.repeatPenalty, Seed: p.seed, Grammar: p.grammar,
	})
	if err != nil {
		if p.grammar != "" {
			return nil, fmt.Errorf("invalid grammar: %w", err)
		}
		return nil, err
	}
	return &sampler{s}, nil
}

func (b *backend) sample(s *sampler, idx int) int { return s.s.Sample(b.lctx, idx) }
func (s *sampler) accept(tok int)                 { s.s.Accept(tok, true) }

// schemaToGrammar converts a JSON schema to GBNF ("" when invalid).
func schemaToGrammar(schema string) string { return string(llama.SchemaToGrammar([]byte(schema))) }

// bareGenerate is the reference loop for benchmarks: llama.cpp through the
// binding with nothing of CodeLoom around it (no chat template, streaming,
// stop strings or cancellation) — tokenize, decode the prompt, then sample
// greedily and decode one token at a time, n times or until end of text.
func bareGenerate(model *llama.Model, lctx *llama.Context, batchSize int, prompt string, n int) (promptTime, genTime time.Duration, genTokens int, err error) {
	toks, err := model.Tokenize(prompt, true, true)
	if err != nil {
		return 0, 0, 0, err
	}
	batch, err := llama.NewBatch(batchSize, 1, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	defer batch.Free()
	smp, err := llama.NewSamplingContext(model, llama.SamplingParams{TopP: 1, TypicalP: 1, PenaltyRepeat: 1, RepeatLastN: 64})
	if err != nil {
		return 0, 0, 0, err
	}
	lctx.KvCacheClear()
	t0 := time.Now()
	for i := 0; i < len(toks); i += batchSize {
		batch.Clear()
		end := min(i+batchSize, len(toks))
		for j := i; j < end; j++ {
			batch.Add(toks[j], nil, j, j == end-1, 0)
		}
		if err := lctx.Decode(batch); err != nil {
			return 0, 0, 0, err
		}
	}
	t1 := time.Now()
	pos := len(toks)
	for ; genTokens < n; genTokens++ {
		tok := smp.Sample(lctx, batch.NumTokens()-1)
		smp.Accept(tok, true)
		if model.TokenIsEog(tok) {
			genTokens++
			break
		}
		_ = model.TokenToPiece(tok)
		batch.Clear()
		batch.Add(tok, nil, pos, true, 0)
		if err := lctx.Decode(batch); err != nil {
			return 0, 0, 0, err
		}
		pos++
	}
	return t1.Sub(t0), time.Since(t1), genTokens, nil
}

// bare runs bareGenerate on this backend's model and context.
func (b *backend) bare(prompt string, n int) (time.Duration, time.Duration, int, error) {
	return bareGenerate(b.model, b.lctx, b.size, prompt, n)
}

// probeLoad loads the model (weights mapped, no context) and tokenizes a
// short text, then frees it: what a probe process does.
func probeLoad(path string) error {
	backendOnce.Do(llama.BackendInit)
	model, err := llama.LoadModelFromFile(path, llama.ModelParams{UseMmap: true, Progress: func(float32) {}})
	if err != nil {
		return err
	}
	defer llama.FreeModel(model)
	if _, err := model.Tokenize("def hello(): return 'world'\n", true, true); err != nil {
		return err
	}
	return nil
}
