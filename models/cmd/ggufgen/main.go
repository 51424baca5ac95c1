// Command ggufgen writes a random-weight llama-architecture GGUF model with
// a byte-level vocabulary and a ChatML chat template, for tests, benchmarks
// and trying CodeLoom without downloading a model. Its answers are noise.
//
//	go run ./models/cmd/ggufgen -o tiny.gguf                 # ~1M parameters
//	go run ./models/cmd/ggufgen -o m.gguf -size 250m -type q8_0
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"codeloom/models/gguf"
)

func main() {
	out := flag.String("o", "", "output file (required)")
	size := flag.String("size", "tiny", "tiny (~1M params), 25m, 100m or 250m")
	typ := flag.String("type", "f32", "weight type: f32, f16, q8_0 or q4_0")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "ggufgen: -o FILE is required")
		os.Exit(2)
	}
	c, ok := Config(*size)
	if !ok {
		fmt.Fprintf(os.Stderr, "ggufgen: unknown -size %q\n", *size)
		os.Exit(2)
	}
	t, ok := map[string]gguf.TensorType{"f32": gguf.TypeF32, "f16": gguf.TypeF16, "q8_0": gguf.TypeQ8_0, "q4_0": gguf.TypeQ4_0}[strings.ToLower(*typ)]
	if !ok {
		fmt.Fprintf(os.Stderr, "ggufgen: unknown -type %q\n", *typ)
		os.Exit(2)
	}
	c.Type, c.Seed = t, *seed
	if err := gguf.WriteLlama(*out, c); err != nil {
		fmt.Fprintf(os.Stderr, "ggufgen: %v\n", err)
		os.Exit(1)
	}
	g, err := gguf.ReadFile(*out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ggufgen: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %s %s, %.1fM parameters, %.1f MB\n", *out, g.Architecture(), g.FileType(), float64(g.ParameterCount())/1e6, float64(g.Size)/1e6)
}

// Config returns the model shape for a size name.
func Config(size string) (gguf.LlamaConfig, bool) {
	c := gguf.TinyLlama()
	switch size {
	case "tiny":
	case "25m":
		c = gguf.LlamaConfig{Name: "codeloom-25m", Vocab: 8000, Embd: 512, Layers: 6, Heads: 8, HeadsKV: 8, FF: 1024, Context: 2048}
	case "100m":
		c = gguf.LlamaConfig{Name: "codeloom-100m", Vocab: 32000, Embd: 768, Layers: 8, Heads: 12, HeadsKV: 12, FF: 2048, Context: 2048}
	case "250m":
		c = gguf.LlamaConfig{Name: "codeloom-250m", Vocab: 32000, Embd: 1024, Layers: 12, Heads: 16, HeadsKV: 16, FF: 2816, Context: 2048}
	default:
		return c, false
	}
	return c, true
}
