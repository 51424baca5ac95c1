package ui

import (
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"codeloom/runtime"
)

// timeline records when the steps of opening a project happened, in
// milliseconds since the process started, for the automation file (the
// end-to-end test and the window benchmark read it to tell where launch
// time goes). Safe for concurrent use.
type timeline struct {
	mu    sync.Mutex
	start time.Time
	marks map[string]float64
	cpu   map[string]float64 // the process's CPU time (user+system, ms) at each step
}

func newTimeline() *timeline {
	return &timeline{start: processStart(), marks: map[string]float64{}, cpu: map[string]float64{}}
}

// mark records step now, keeping the first time it was recorded.
func (t *timeline) mark(step string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.marks[step]; !ok {
		t.marks[step] = float64(time.Since(t.start).Microseconds()) / 1000
		t.cpu[step] = cpuMs()
	}
}

// cpuMs is the CPU time the process has used so far (ms): on a shared,
// loaded machine it says more about the work done than the wall clock.
func cpuMs() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// reset forgets the steps of an earlier project (a new open starts).
func (t *timeline) reset(keep ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept, keptCPU := map[string]float64{}, map[string]float64{}
	for _, k := range keep {
		if v, ok := t.marks[k]; ok {
			kept[k], keptCPU[k] = v, t.cpu[k]
		}
	}
	t.marks, t.cpu = kept, keptCPU
}

// snapshot returns the steps' wall times and CPU times (ms).
func (t *timeline) snapshot() (wall, cpu map[string]float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.marks), maps.Clone(t.cpu)
}

// processStart is when this process started (Linux: from /proc), or now
// when that cannot be read.
func processStart() time.Time {
	now := time.Now()
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return now
	}
	up, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return now
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return now
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return now
	}
	ticks, err := strconv.ParseFloat(f[19], 64) // starttime, field 22
	if err != nil {
		return now
	}
	uf := strings.Fields(string(up))
	if len(uf) == 0 {
		return now
	}
	uptime, err := strconv.ParseFloat(uf[0], 64)
	if err != nil {
		return now
	}
	const hz = 100 // USER_HZ on Linux
	age := uptime - ticks/hz
	if age < 0 || age > 1e7 {
		return now
	}
	return now.Add(-time.Duration(age * float64(time.Second)))
}

// peakRSSMB is the process's peak resident memory in MiB (VmHWM), 0 when
// unknown.
func peakRSSMB() float64 { return float64(runtime.SelfPeakRSS()) / (1 << 20) }
