package models

import (
	"errors"
	"math"
	"testing"

	"codeloom/models/gguf"
)

func TestMemoryNeeded(t *testing.T) {
	g := &gguf.File{KV: map[string]any{
		"general.architecture":          "llama",
		"llama.block_count":             uint32(2),
		"llama.embedding_length":        uint32(64),
		"llama.attention.head_count":    uint32(4),
		"llama.attention.head_count_kv": uint32(2),
	}}
	// K and V, f16: 2·2 bytes · 2 layers · 100 tokens · 32 dims, plus the allowance
	if got, want := MemoryNeeded(g, 100), uint64(4*2*100*32+64<<20); got != want {
		t.Errorf("MemoryNeeded = %d, want %d", got, want)
	}
	// a corrupt header's absurd sizes must not wrap around to a small need
	g.KV["llama.block_count"] = uint64(1) << 40
	g.KV["llama.embedding_length"] = uint64(1) << 40
	if got := MemoryNeeded(g, 4096); got != math.MaxUint64 {
		t.Errorf("overflowing header: MemoryNeeded = %d, want saturation", got)
	}
	if err := CheckMemory(g, 4096); !errors.Is(err, ErrTooLarge) {
		t.Errorf("overflowing header: CheckMemory = %v, want ErrTooLarge", err)
	}
}
