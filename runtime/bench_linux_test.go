//go:build linux

package runtime

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// BenchmarkRunOverhead runs the same short program with a bare os/exec and
// with Run, alternating in one loop, and reports both and their ratio.
func BenchmarkRunOverhead(b *testing.B) {
	r := New(WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	ctx := context.Background()
	var bare, run, bareCPU, runCPU time.Duration
	for i := 0; i < b.N; i++ {
		c0 := cpuNow()
		t0 := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		c1 := cpuNow()
		if _, err := r.Run(ctx, Spec{Command: []string{"/bin/true"}}); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		bareCPU += c1 - c0
		runCPU += cpuNow() - c1
		bare += t1.Sub(t0)
		run += t2.Sub(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(bare.Microseconds())/n/1000, "bare-ms/op")
	b.ReportMetric(float64(run.Microseconds())/n/1000, "run-ms/op")
	b.ReportMetric(float64((run-bare).Microseconds())/n/1000, "overhead-ms/op")
	b.ReportMetric(float64(run)/float64(bare), "ratio")
	b.ReportMetric(float64((runCPU-bareCPU).Microseconds())/n/1000, "runner-cpu-overhead-ms/op")
}

// cpuNow is the CPU time (user+system) this process has used so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRunWithLimits is Run of /bin/true with each isolation feature
// alone and all together: rlimits (prlimit wrapper), the pids cgroup (root)
// or RLIMIT_NPROC, and the user+network namespace.
func BenchmarkRunWithLimits(b *testing.B) {
	r := New(WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	all := Limits{CPUTime: 5 * time.Second, Memory: 512 << 20, Procs: 64, FileSize: 64 << 20}
	for _, c := range []struct {
		name string
		spec Spec
	}{
		{"none", Spec{}},
		{"rlimits", Spec{Limits: Limits{CPUTime: 5 * time.Second, Memory: 512 << 20, FileSize: 64 << 20}}},
		{"procs", Spec{Limits: Limits{Procs: 64}}},
		{"no-net", Spec{NoNetwork: true}},
		{"confine", Spec{Confine: true}},
		{"all", Spec{Limits: all, NoNetwork: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			spec := c.spec
			spec.Command = []string{"/bin/true"}
			for i := 0; i < b.N; i++ {
				if _, err := r.Run(context.Background(), spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// startTree starts a shell with 10 sleeping children in a sandbox and
// waits until all 11 processes are visible.
func startTree(b *testing.B) (*sandbox, *exec.Cmd) {
	cmd := exec.Command("sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 60 & done; wait")
	sb, err := newSandbox(Spec{}, []string{"sh"}, "bench", slog.Default(), nil)
	if err != nil {
		b.Fatal(err)
	}
	cmd.SysProcAttr = sb.attr()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sb.started(cmd.Process.Pid)
	b.Cleanup(func() { sb.killAll(); cmd.Wait() })
	for i := 0; i < 500 && sb.scanProcs(true).procs < 11; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return sb, cmd
}

// BenchmarkSamplerScan is one sample of a running tree of 11 processes (a
// shell and 10 sleeping children): the sampler's cost per tick. The
// reported core-% is that cost at the default 100 ms period.
func BenchmarkSamplerScan(b *testing.B) {
	sb, _ := startTree(b)
	b.ResetTimer()
	c0 := cpuNow()
	var procs int
	for i := 0; i < b.N; i++ {
		procs = sb.scan().procs
	}
	perOp := (cpuNow() - c0) / time.Duration(b.N)
	b.StopTimer()
	if procs != 11 {
		b.Fatalf("tree has %d processes, want 11", procs)
	}
	b.ReportMetric(float64(perOp)/1e3, "cpu-µs/op")
	b.ReportMetric(100*float64(perOp)/float64(DefaultSampleEvery), "core-%@100ms")
}

// BenchmarkGopsutilTreeScan does the same discovery and metrics with
// gopsutil (Processes, Ppid, Times, MemoryInfo): the measured reason the
// Linux sampler reads /proc/<pid>/stat itself.
func BenchmarkGopsutilTreeScan(b *testing.B) {
	_, cmd := startTree(b)
	ctx := context.Background()
	root := int32(cmd.Process.Pid)
	b.ResetTimer()
	c0 := cpuNow()
	var n int
	for i := 0; i < b.N; i++ {
		procs, err := process.ProcessesWithContext(ctx)
		if err != nil {
			b.Fatal(err)
		}
		in := map[int32]bool{root: true}
		n = 0
		var rss uint64
		var cpu float64
		for changed := true; changed; {
			changed = false
			for _, p := range procs {
				if in[p.Pid] {
					continue
				}
				if pp, err := p.PpidWithContext(ctx); err == nil && in[pp] {
					in[p.Pid] = true
					changed = true
				}
			}
		}
		for _, p := range procs {
			if !in[p.Pid] {
				continue
			}
			n++
			if t, err := p.TimesWithContext(ctx); err == nil {
				cpu += t.User + t.System
			}
			if m, err := p.MemoryInfoWithContext(ctx); err == nil {
				rss += m.RSS
			}
		}
		_ = cpu
	}
	perOp := (cpuNow() - c0) / time.Duration(b.N)
	b.StopTimer()
	if n != 11 {
		b.Fatalf("tree has %d processes, want 11", n)
	}
	b.ReportMetric(float64(perOp)/1e3, "cpu-µs/op")
	b.ReportMetric(100*float64(perOp)/float64(DefaultSampleEvery), "core-%@100ms")
}
