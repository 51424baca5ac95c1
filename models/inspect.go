package models

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strings"

	"github.com/shirou/gopsutil/v4/mem"

	"codeloom/models/gguf"
)

// ErrUnsupportedArch is returned for models the bundled llama.cpp cannot run.
var ErrUnsupportedArch = errors.New("unsupported model architecture")

// ErrTooLarge is returned when a model does not fit in the free memory.
var ErrTooLarge = errors.New("model too large for free memory")

// Inspect reads the GGUF header at path (never the weights) and describes
// the model. It fails with a clear error for missing, non-GGUF, truncated or
// corrupt files, and for architectures llama.cpp does not support.
func Inspect(path string) (ModelInfo, *gguf.File, error) {
	g, err := gguf.ReadFile(path)
	if err != nil {
		return ModelInfo{}, nil, fmt.Errorf("inspect model: %w", err)
	}
	info := InfoFromGGUF(path, g)
	if info.Architecture == "" {
		return info, g, fmt.Errorf("inspect model %s: %w: general.architecture missing", path, ErrUnsupportedArch)
	}
	if !gguf.SupportedArchitecture(info.Architecture) {
		return info, g, fmt.Errorf("inspect model %s: %w %q", path, ErrUnsupportedArch, info.Architecture)
	}
	if g.DuplicateTokens > 0 {
		return info, g, fmt.Errorf("inspect model %s: %w: vocabulary repeats %d tokens", path, gguf.ErrCorrupt, g.DuplicateTokens)
	}
	return info, g, nil
}

// InfoFromGGUF describes the model of a parsed GGUF header.
func InfoFromGGUF(path string, g *gguf.File) ModelInfo {
	name := g.Name()
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return ModelInfo{
		Name:          name,
		Path:          path,
		Architecture:  g.Architecture(),
		Parameters:    g.ParameterCount(),
		FileType:      g.FileType(),
		ContextLength: g.ContextLength(),
		EmbeddingLen:  g.EmbeddingLength(),
		Size:          g.Size,
		ChatTemplate:  g.ChatTemplate(),
	}
}

// MemoryNeeded estimates the bytes needed to run g with a context of ctxLen
// tokens: the weights plus an f16 KV cache plus a fixed compute allowance.
func MemoryNeeded(g *gguf.File, ctxLen int) uint64 {
	arch := g.Architecture()
	layers, _ := g.Uint(arch + ".block_count")
	embd, _ := g.Uint(arch + ".embedding_length")
	heads, _ := g.Uint(arch + ".attention.head_count")
	kvHeads, ok := g.Uint(arch + ".attention.head_count_kv")
	if !ok || kvHeads == 0 {
		kvHeads = heads
	}
	kvDim := embd
	if heads > 0 {
		kvDim = mulSat(embd, kvHeads) / heads
	}
	// the header's numbers are untrusted: absurd ones saturate (and are then
	// refused as too large) instead of wrapping around to a small need
	kv := mulSat(mulSat(mulSat(4, layers), uint64(max(ctxLen, 0))), kvDim)
	return addSat(addSat(g.TensorBytes(), kv), 64<<20)
}

// mulSat is a·b, or the largest uint64 when that overflows.
func mulSat(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// addSat is a+b, or the largest uint64 when that overflows.
func addSat(a, b uint64) uint64 {
	sum, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return sum
}

// CheckMemory returns ErrTooLarge when the model would not fit in the
// memory currently available.
func CheckMemory(g *gguf.File, ctxLen int) error {
	vm, err := mem.VirtualMemory()
	if err != nil {
		return nil // cannot tell: let llama.cpp try
	}
	need := MemoryNeeded(g, ctxLen)
	if need > vm.Available {
		return fmt.Errorf("%w: needs about %d MiB, %d MiB available (try a smaller quantisation or context)", ErrTooLarge, need>>20, vm.Available>>20)
	}
	return nil
}

// fileExists reports whether path is an existing regular file.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
