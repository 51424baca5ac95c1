package gguf

import (
	"fmt"
	"slices"
)

// TensorType is ggml's tensor element type.
type TensorType uint32

// Tensor types the writer produces (the reader knows all of ggml's).
const (
	TypeF32  TensorType = 0
	TypeF16  TensorType = 1
	TypeQ4_0 TensorType = 2
	TypeQ8_0 TensorType = 8
)

type typeInfo struct {
	name      string
	blockSize uint64 // values per block
	typeSize  uint64 // bytes per block
}

// typeInfos follows ggml.h / ggml.c (type_traits) of the llama.cpp inside
// github.com/ollama/ollama v0.11.4.
var typeInfos = map[TensorType]typeInfo{
	0: {"f32", 1, 4}, 1: {"f16", 1, 2}, 2: {"q4_0", 32, 18}, 3: {"q4_1", 32, 20},
	6: {"q5_0", 32, 22}, 7: {"q5_1", 32, 24}, 8: {"q8_0", 32, 34}, 9: {"q8_1", 32, 36},
	10: {"q2_k", 256, 84}, 11: {"q3_k", 256, 110}, 12: {"q4_k", 256, 144}, 13: {"q5_k", 256, 176},
	14: {"q6_k", 256, 210}, 15: {"q8_k", 256, 292}, 16: {"iq2_xxs", 256, 66}, 17: {"iq2_xs", 256, 74},
	18: {"iq3_xxs", 256, 98}, 19: {"iq1_s", 256, 50}, 20: {"iq4_nl", 32, 18}, 21: {"iq3_s", 256, 110},
	22: {"iq2_s", 256, 82}, 23: {"iq4_xs", 256, 136}, 24: {"i8", 1, 1}, 25: {"i16", 1, 2},
	26: {"i32", 1, 4}, 27: {"i64", 1, 8}, 28: {"f64", 1, 8}, 29: {"iq1_m", 256, 56},
	30: {"bf16", 1, 2}, 34: {"tq1_0", 256, 54}, 35: {"tq2_0", 256, 66}, 39: {"mxfp4", 32, 17},
}

// Known reports whether ggml knows the type.
func (t TensorType) Known() bool { _, ok := typeInfos[t]; return ok }

// BlockSize is the number of values per quantisation block.
func (t TensorType) BlockSize() uint64 {
	if i, ok := typeInfos[t]; ok {
		return i.blockSize
	}
	return 1
}

// RowBytes is the storage size of n values (n must be a multiple of BlockSize).
func (t TensorType) RowBytes(n uint64) uint64 {
	i, ok := typeInfos[t]
	if !ok {
		return 0
	}
	return n / i.blockSize * i.typeSize
}

// String is ggml's name of the type.
func (t TensorType) String() string {
	if i, ok := typeInfos[t]; ok {
		return i.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// llamaCppArchitectures lists general.architecture values the llama.cpp
// inside github.com/ollama/ollama v0.11.4 can load (LLM_ARCH_NAMES in
// llama/llama.cpp/src/llama-arch.cpp).
var llamaCppArchitectures = []string{
	"llama", "llama4", "deci", "falcon", "grok", "gpt2", "gptj", "gptneox", "mpt", "baichuan",
	"starcoder", "refact", "bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "bloom",
	"stablelm", "qwen", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen3moe", "phi2", "phi3",
	"phimoe", "plamo", "codeshell", "orion", "internlm2", "minicpm", "minicpm3", "gemma", "gemma2",
	"gemma3", "starcoder2", "mamba", "xverse", "command-r", "cohere2", "dbrx", "olmo", "olmo2",
	"olmoe", "openelm", "arctic", "deepseek", "deepseek2", "chatglm", "glm4", "bitnet", "t5",
	"t5encoder", "jais", "nemotron", "exaone", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7", "granite",
	"granitemoe", "chameleon", "solar", "wavtokenizer-dec", "plm", "bailingmoe",
}

// SupportedArchitecture reports whether the bundled llama.cpp can load arch.
func SupportedArchitecture(arch string) bool {
	return slices.Contains(llamaCppArchitectures, arch)
}

// EmbeddingArchitecture reports whether arch is an encoder made for embeddings.
func EmbeddingArchitecture(arch string) bool {
	switch arch {
	case "bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "t5encoder":
		return true
	}
	return false
}
