package gguf

import (
	"fmt"
	"math/rand/v2"
)

// ChatMLTemplate is the Jinja chat template (as found in GGUF files of
// ChatML models such as Qwen) written into synthetic models.
const ChatMLTemplate = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

// LlamaConfig describes a random-weight llama-architecture model.
type LlamaConfig struct {
	Name         string
	Vocab        int // total vocabulary; at least BaseVocab (byte-level tokens + specials)
	Embd         int // multiple of 32 (and of Heads)
	Layers       int
	Heads        int
	HeadsKV      int // 0 = Heads
	FF           int // multiple of 32
	Context      int
	Type         TensorType // type of the 2-D weight matrices: F32, F16, Q8_0 or Q4_0
	Seed         uint64
	ChatTemplate string // "" = ChatMLTemplate; "-" = none
}

// Synthetic vocabulary layout: specials, then 256 byte tokens, then "▁", then fillers.
const (
	TokUnk      = 0
	TokBOS      = 1
	TokEOS      = 2
	TokImStart  = 3
	TokImEnd    = 4
	tokByte0    = 5
	TokSpace    = tokByte0 + 256 // "▁"
	BaseVocab   = TokSpace + 1
	tokenNormal = 1
	tokenUnk    = 2
	tokenCtrl   = 3
	tokenByte   = 6
)

// TinyLlama is a small configuration for fast tests (about 1M parameters).
func TinyLlama() LlamaConfig {
	return LlamaConfig{Name: "codeloom-tiny", Vocab: BaseVocab, Embd: 64, Layers: 2, Heads: 4, HeadsKV: 2, FF: 128, Context: 2048, Type: TypeF32, Seed: 1}
}

// WriteLlama writes a random-weight llama model with a byte-level
// SentencePiece vocabulary, ChatML special tokens and a chat template.
func WriteLlama(path string, c LlamaConfig) error {
	if c.HeadsKV == 0 {
		c.HeadsKV = c.Heads
	}
	if c.Vocab < BaseVocab || c.Embd%32 != 0 || c.FF%32 != 0 || c.Heads <= 0 || c.Embd%c.Heads != 0 || c.Heads%c.HeadsKV != 0 || c.Layers <= 0 {
		return fmt.Errorf("write llama %s: invalid config %+v", path, c)
	}
	tokens := make([]string, c.Vocab)
	scores := make([]float32, c.Vocab)
	types := make([]int32, c.Vocab)
	copy(tokens, []string{"<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"})
	types[TokUnk] = tokenUnk
	for i := TokBOS; i <= TokImEnd; i++ {
		types[i] = tokenCtrl
	}
	for b := 0; b < 256; b++ {
		tokens[tokByte0+b] = fmt.Sprintf("<0x%02X>", b)
		types[tokByte0+b] = tokenByte
	}
	tokens[TokSpace] = "▁"
	types[TokSpace] = tokenNormal
	scores[TokSpace] = -1
	for i := BaseVocab; i < c.Vocab; i++ {
		tokens[i] = fmt.Sprintf("▁w%d", i)
		types[i] = tokenNormal
		scores[i] = -float32(i)
	}
	ftype := map[TensorType]uint32{TypeF32: 0, TypeF16: 1, TypeQ4_0: 2, TypeQ8_0: 7}[c.Type]
	headDim := c.Embd / c.Heads
	kvs := []KV{
		{"general.architecture", "llama"},
		{"general.name", c.Name},
		{"general.file_type", ftype},
		{"llama.context_length", uint32(c.Context)},
		{"llama.embedding_length", uint32(c.Embd)},
		{"llama.block_count", uint32(c.Layers)},
		{"llama.feed_forward_length", uint32(c.FF)},
		{"llama.attention.head_count", uint32(c.Heads)},
		{"llama.attention.head_count_kv", uint32(c.HeadsKV)},
		{"llama.rope.dimension_count", uint32(headDim)},
		{"llama.rope.freq_base", float32(10000)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.scores", scores},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.bos_token_id", uint32(TokBOS)},
		{"tokenizer.ggml.eos_token_id", uint32(TokImEnd)}, // ChatML models end a turn with <|im_end|>
		{"tokenizer.ggml.unknown_token_id", uint32(TokUnk)},
		{"tokenizer.ggml.add_bos_token", true},
		{"tokenizer.ggml.add_eos_token", false},
	}
	switch c.ChatTemplate {
	case "":
		kvs = append(kvs, KV{"tokenizer.chat_template", ChatMLTemplate})
	case "-":
	default:
		kvs = append(kvs, KV{"tokenizer.chat_template", c.ChatTemplate})
	}
	random := normalFiller(c.Seed)
	u := func(x int) uint64 { return uint64(x) }
	kvDim := headDim * c.HeadsKV
	tensors := []TensorSpec{
		{"token_embd.weight", []uint64{u(c.Embd), u(c.Vocab)}, c.Type, random(1)},
		{"output_norm.weight", []uint64{u(c.Embd)}, TypeF32, ones},
		{"output.weight", []uint64{u(c.Embd), u(c.Vocab)}, c.Type, random(0.5)},
	}
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		tensors = append(tensors,
			TensorSpec{p + "attn_norm.weight", []uint64{u(c.Embd)}, TypeF32, ones},
			TensorSpec{p + "attn_q.weight", []uint64{u(c.Embd), u(c.Embd)}, c.Type, random(0.1)},
			TensorSpec{p + "attn_k.weight", []uint64{u(c.Embd), u(kvDim)}, c.Type, random(0.1)},
			TensorSpec{p + "attn_v.weight", []uint64{u(c.Embd), u(kvDim)}, c.Type, random(0.1)},
			TensorSpec{p + "attn_output.weight", []uint64{u(c.Embd), u(c.Embd)}, c.Type, random(0.1)},
			TensorSpec{p + "ffn_norm.weight", []uint64{u(c.Embd)}, TypeF32, ones},
			TensorSpec{p + "ffn_gate.weight", []uint64{u(c.Embd), u(c.FF)}, c.Type, random(0.1)},
			TensorSpec{p + "ffn_up.weight", []uint64{u(c.Embd), u(c.FF)}, c.Type, random(0.1)},
			TensorSpec{p + "ffn_down.weight", []uint64{u(c.FF), u(c.Embd)}, c.Type, random(0.1)},
		)
	}
	return Write(path, kvs, tensors)
}

// BertConfig describes a random-weight BERT encoder (an embedding model).
type BertConfig struct {
	Name    string
	Embd    int // multiple of 32 and of Heads
	Layers  int
	Heads   int
	FF      int // multiple of 32
	Context int
	Seed    uint64
}

// TinyBert is a small embedding model for fast tests.
func TinyBert() BertConfig {
	return BertConfig{Name: "codeloom-tiny-bert", Embd: 64, Layers: 2, Heads: 4, FF: 128, Context: 512, Seed: 7}
}

// bertWords are whole-word tokens of the synthetic WordPiece vocabulary.
var bertWords = []string{"def", "class", "return", "self", "import", "from", "if", "else", "for", "in",
	"tax", "rate", "price", "item", "items", "inventory", "total", "value", "discount", "save", "load", "json", "the", "a", "of"}

// WriteBert writes a random-weight BERT model with mean pooling and a small
// WordPiece vocabulary (specials, whole words, and every printable ASCII
// character as a word start and as a continuation, so any ASCII text
// tokenizes).
func WriteBert(path string, c BertConfig) error {
	if c.Embd%32 != 0 || c.FF%32 != 0 || c.Heads <= 0 || c.Embd%c.Heads != 0 || c.Layers <= 0 {
		return fmt.Errorf("write bert %s: invalid config %+v", path, c)
	}
	tokens := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	types := []int32{tokenCtrl, tokenUnk, tokenCtrl, tokenCtrl, tokenCtrl}
	for _, w := range bertWords {
		tokens = append(tokens, "▁"+w)
		types = append(types, tokenNormal)
	}
	have := map[string]bool{}
	for _, t := range tokens {
		have[t] = true
	}
	for ch := byte(33); ch < 127; ch++ {
		for _, t := range []string{"▁" + string(ch), string(ch)} {
			if !have[t] { // llama.cpp aborts on duplicate tokens
				have[t] = true
				tokens = append(tokens, t)
				types = append(types, tokenNormal)
			}
		}
	}
	for len(tokens)%32 != 0 {
		tokens = append(tokens, fmt.Sprintf("[unused%d]", len(tokens)))
		types = append(types, tokenNormal)
	}
	kvs := []KV{
		{"general.architecture", "bert"},
		{"general.name", c.Name},
		{"general.file_type", uint32(0)},
		{"bert.context_length", uint32(c.Context)},
		{"bert.embedding_length", uint32(c.Embd)},
		{"bert.feed_forward_length", uint32(c.FF)},
		{"bert.block_count", uint32(c.Layers)},
		{"bert.attention.head_count", uint32(c.Heads)},
		{"bert.attention.layer_norm_epsilon", float32(1e-12)},
		{"bert.attention.causal", false},
		{"bert.pooling_type", uint32(1)}, // mean
		{"tokenizer.ggml.model", "bert"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.token_type_count", uint32(2)},
		{"tokenizer.ggml.bos_token_id", uint32(2)},
		{"tokenizer.ggml.cls_token_id", uint32(2)},
		{"tokenizer.ggml.seperator_token_id", uint32(3)},
		{"tokenizer.ggml.padding_token_id", uint32(0)},
		{"tokenizer.ggml.unknown_token_id", uint32(1)},
		{"tokenizer.ggml.mask_token_id", uint32(4)},
	}
	random := normalFiller(c.Seed)
	u := func(x int) uint64 { return uint64(x) }
	e := u(c.Embd)
	tensors := []TensorSpec{
		{"token_embd.weight", []uint64{e, u(len(tokens))}, TypeF32, random(1)},
		{"token_types.weight", []uint64{e, 2}, TypeF32, random(0.1)},
		{"position_embd.weight", []uint64{e, u(c.Context)}, TypeF32, random(0.1)},
		{"token_embd_norm.weight", []uint64{e}, TypeF32, ones},
		{"token_embd_norm.bias", []uint64{e}, TypeF32, nil},
	}
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		for _, m := range []string{"attn_q", "attn_k", "attn_v", "attn_output"} {
			tensors = append(tensors,
				TensorSpec{p + m + ".weight", []uint64{e, e}, TypeF32, random(0.1)},
				TensorSpec{p + m + ".bias", []uint64{e}, TypeF32, random(0.01)})
		}
		tensors = append(tensors,
			TensorSpec{p + "attn_output_norm.weight", []uint64{e}, TypeF32, ones},
			TensorSpec{p + "attn_output_norm.bias", []uint64{e}, TypeF32, nil},
			TensorSpec{p + "ffn_up.weight", []uint64{e, u(c.FF)}, TypeF32, random(0.1)},
			TensorSpec{p + "ffn_up.bias", []uint64{u(c.FF)}, TypeF32, random(0.01)},
			TensorSpec{p + "ffn_down.weight", []uint64{u(c.FF), e}, TypeF32, random(0.1)},
			TensorSpec{p + "ffn_down.bias", []uint64{e}, TypeF32, random(0.01)},
			TensorSpec{p + "layer_output_norm.weight", []uint64{e}, TypeF32, ones},
			TensorSpec{p + "layer_output_norm.bias", []uint64{e}, TypeF32, nil},
		)
	}
	return Write(path, kvs, tensors)
}

// normalFiller returns a maker of tensor fillers drawing from a normal
// distribution with the given standard deviation; each filler it makes has
// its own seed, derived from seed, so weights are reproducible.
func normalFiller(seed uint64) func(std float32) func([]float32) {
	return func(std float32) func([]float32) {
		seed++
		s := seed
		return func(dst []float32) {
			r := rand.New(rand.NewPCG(s, s*0x9e3779b97f4a7c15))
			for i := range dst {
				dst[i] = float32(r.NormFloat64()) * std
			}
		}
	}
}

// ones fills a tensor with 1 (the neutral weight of a norm layer).
func ones(dst []float32) {
	for i := range dst {
		dst[i] = 1
	}
}
