package workflow

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"codeloom/runtime"
)

func benchWorkflow(n int, chain bool) *Workflow {
	var b strings.Builder
	b.WriteString("id: bench\nsteps:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {id: s%d, type: llm, prompt: x", i)
		if chain && i > 0 {
			fmt.Fprintf(&b, ", depends_on: [s%d]", i-1)
		}
		b.WriteString("}\n")
	}
	w, err := Parse([]byte(b.String()), "bench")
	if err != nil {
		panic(err)
	}
	return w
}

// BenchmarkExecutorOverhead measures the executor's own cost per step
// (validation, scheduling, template rendering, events) with a no-op handler.
func BenchmarkExecutorOverhead(b *testing.B) {
	noop := HandlerFunc(func(ctx context.Context, c Call) (string, error) { return "ok", nil })
	for _, tc := range []struct {
		name  string
		chain bool
	}{{"chain100", true}, {"wide100", false}} {
		w := benchWorkflow(100, tc.chain)
		b.Run(tc.name, func(b *testing.B) {
			ex := &Executor{Workers: 2, Handlers: map[string]Handler{TypeLLM: noop}, OnEvent: func(Event) {}}
			for i := 0; i < b.N; i++ {
				if _, err := ex.Run(context.Background(), w, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/step")
		})
	}
}

// BenchmarkRunStep compares one `true` run step through the workflow and the
// runtime with the runtime alone and with bare os/exec.
func BenchmarkRunStep(b *testing.B) {
	runner := runtime.New()
	w, _ := Parse([]byte("id: one\nsteps:\n  - {id: t, type: run, command: [\"true\"]}\n"), "bench")
	ex := &Executor{}
	ex.Handlers = StandardHandlers(ex, b.TempDir(), nil, runner, nil, nil)
	b.Run("workflow", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := ex.Run(context.Background(), w, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("runtime", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := runner.Run(context.Background(), runtime.Spec{Command: []string{"true"}, Timeout: -1}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os-exec", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := exec.Command("true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkParallelSleeps runs two independent `sleep 0.3` steps with 1 and
// 2 workers: wall time per run shows the overlap (≈0.3 s vs ≈0.6 s).
func BenchmarkParallelSleeps(b *testing.B) {
	w, _ := Parse([]byte("id: par\nsteps:\n  - {id: a, type: run, command: [\"sleep\", \"0.3\"]}\n  - {id: b, type: run, command: [\"sleep\", \"0.3\"]}\n"), "bench")
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers%d", workers), func(b *testing.B) {
			ex := &Executor{Workers: workers}
			ex.Handlers = StandardHandlers(ex, b.TempDir(), nil, runtime.New(), nil, nil)
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := ex.Run(context.Background(), w, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/run")
		})
	}
}
