package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/assets"
	"codeloom/models"
	"codeloom/runtime"
)

// timingRunner sums the wall time of the subprocesses it runs.
type timingRunner struct {
	r    runtime.Runner
	mu   sync.Mutex
	wall time.Duration
	runs int
}

func (t *timingRunner) Run(ctx context.Context, s runtime.Spec) (runtime.Result, error) {
	res, err := t.r.Run(ctx, s)
	t.mu.Lock()
	t.wall += res.Wall
	t.runs++
	t.mu.Unlock()
	return res, err
}

// benchCycle runs the one-patch fix of the sample project b.N times (the
// file is restored between cycles) and reports the pipeline's own time per
// cycle (everything but the subprocesses) next to the subprocesses' time.
func benchCycle(b *testing.B, policy *Policy) {
	root, err := assets.ExtractSample(filepath.Join(b.TempDir(), "sample"))
	if err != nil {
		b.Fatal(err)
	}
	store, err := memory.OpenProject(root)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	proj, err := codegraph.Open(context.Background(), root, codegraph.Options{Store: store})
	if err != nil {
		b.Fatal(err)
	}
	defer proj.Close()
	file := filepath.Join(root, "inventory", "pricing.py")
	orig, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	tr := &timingRunner{r: runtime.New(runtime.WithRecorder(store))}
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(file, orig, 0o644); err != nil {
			b.Fatal(err)
		}
		if _, err := proj.UpdateFiles(context.Background(), []string{file}); err != nil {
			b.Fatal(err)
		}
		ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
		p, err := New(Config{Root: root, Engine: models.NewScripted("edit", planAnswer, directFix), Runner: tr,
			Approver: ap, Guidance: ap, Memory: store, Graph: proj, Policy: policy})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		out, err := p.Run(context.Background(), "fix the bulk discount boundary")
		total += time.Since(start)
		if err != nil || !out.OK() {
			b.Fatalf("%v %+v", err, out.Last())
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64((total-tr.wall).Microseconds())/1000/n, "pipeline-ms/op")
	b.ReportMetric(float64(tr.wall.Microseconds())/1000/n, "subprocess-ms/op")
	b.ReportMetric(float64(tr.runs)/n, "subprocesses/op")
}

// BenchmarkCycleAllGates: classify, retrieve, plan, patch, dry-run compile,
// apply, re-index, syntax + tests + probe gates, lesson.
func BenchmarkCycleAllGates(b *testing.B) { benchCycle(b, nil) }

// BenchmarkCycleNoGates: the same cycle with every gate disabled (the
// dry-run compile check still runs).
func BenchmarkCycleNoGates(b *testing.B) {
	off := false
	benchCycle(b, &Policy{Gates: map[string]GatePolicy{
		GateSyntax: {Enabled: &off}, GateStatic: {Enabled: &off}, GateTests: {Enabled: &off}, GateProbe: {Enabled: &off}}})
}
