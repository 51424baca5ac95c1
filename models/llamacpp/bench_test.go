package llamacpp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"codeloom/models"
	"codeloom/models/gguf"
)

// benchModelPath returns a generated ~220M-parameter llama model of type t
// (32k vocabulary, 1024 wide, 12 layers), written once into
// $CODELOOM_BENCH_DIR (default: the temp dir) and reused.
func benchModelPath(b *testing.B, t gguf.TensorType) string {
	b.Helper()
	dir := os.Getenv("CODELOOM_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "codeloom-bench")
	}
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "llama-250m-"+t.String()+".gguf")
	if _, err := gguf.ReadFile(path); err == nil {
		return path
	}
	c := gguf.LlamaConfig{Name: "codeloom-250m", Vocab: 32000, Embd: 1024, Layers: 12, Heads: 16, HeadsKV: 16, FF: 2816, Context: 2048, Type: t, Seed: 42}
	tmp := path + ".part"
	if err := gguf.WriteLlama(tmp, c); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchPrompt is about 250 tokens with the byte-level vocabulary.
var benchPrompt = strings.Repeat("def tax_rate(): return float(os.environ.get('TAX_RATE', 0.2))\n", 4)

const benchGenTokens = 64

// BenchmarkGenerate measures prompt processing and generation speed of
// CodeLoom's Engine and, interleaved in the same run, of a bare decoding
// loop on the binding (same model, same context); engine/bare is the
// overhead of CodeLoom's layers (target ≥ 0.9).
func BenchmarkGenerate(b *testing.B) {
	for _, typ := range []gguf.TensorType{gguf.TypeQ8_0, gguf.TypeQ4_0} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", typ, threads), func(b *testing.B) {
				path := benchModelPath(b, typ)
				e, err := Load(context.Background(), path, Options{ContextLength: 1024, Threads: threads, BatchSize: 512})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				// warm up both paths (page in the weights)
				e.Complete(context.Background(), benchPrompt, models.GenOptions{MaxTokens: 4}, nil)
				var eng, bare Stats
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					_, st, err := e.CompleteStats(context.Background(), benchPrompt, models.GenOptions{MaxTokens: benchGenTokens}, func(string) {})
					if err != nil {
						b.Fatal(err)
					}
					eng.PromptTokens += st.PromptTokens
					eng.PromptTime += st.PromptTime
					eng.GenTokens += st.GenTokens
					eng.GenTime += st.GenTime
					pt, gt, n, err := e.bareRun(benchPrompt, benchGenTokens)
					if err != nil {
						b.Fatal(err)
					}
					bare.PromptTokens += st.PromptTokens
					bare.PromptTime += pt
					bare.GenTokens += n
					bare.GenTime += gt
				}
				b.ReportMetric(eng.PromptRate(), "prompt_tok/s")
				b.ReportMetric(eng.GenRate(), "gen_tok/s")
				b.ReportMetric(bare.PromptRate(), "bare_prompt_tok/s")
				b.ReportMetric(bare.GenRate(), "bare_gen_tok/s")
				b.ReportMetric(eng.GenRate()/bare.GenRate(), "gen_ratio")
			})
		}
	}
}

// bareRun runs the reference loop under the engine's lock.
func (e *Engine) bareRun(prompt string, n int) (time.Duration, time.Duration, int, error) {
	b, release, err := e.acquire()
	if err != nil {
		return 0, 0, 0, err
	}
	defer release()
	return b.bare(prompt, n)
}

// BenchmarkEmbed measures embedding throughput (last-token hidden states of
// the generated llama model; 16 texts of about 60 tokens per call).
func BenchmarkEmbed(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			path := benchModelPath(b, gguf.TypeQ8_0)
			e, err := Load(context.Background(), path, Options{ContextLength: 512, Threads: threads})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			texts := make([]string, 16)
			tokens := 0
			for i := range texts {
				texts[i] = fmt.Sprintf("def f%d(x):\n    \"\"\"Return x scaled by %d.\"\"\"\n    return x * %d\n", i, i, i)
				tokens += e.CountTokens(texts[i])
			}
			e.Embed(context.Background(), texts[:1]) // warm up
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(len(texts)*b.N)/sec, "texts/s")
			b.ReportMetric(float64(tokens*b.N)/sec, "tok/s")
		})
	}
}
