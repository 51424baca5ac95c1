//go:build !linux

package runtime

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// sandbox is the portable fallback: the tree is tracked through gopsutil
// (children, recursively) and killed process by process; rlimits, pids
// cgroups and network namespaces are Linux-only and reported as unavailable.
type sandbox struct {
	log       *slog.Logger
	limits    Limits
	prog      []string
	pid       int
	netWanted bool
	notesList []string
	seen      map[int32]*member
	dirName   string
	confine   bool
}

type member struct {
	user, sys float64 // seconds, last seen
	rss       int64
	alive     bool
}

// holderPool keeps PID namespace holders on Linux; nothing here.
type holderPool struct{}

func newSandbox(spec Spec, prog []string, id string, log *slog.Logger, _ *holderPool) (*sandbox, error) {
	sb := &sandbox{log: log, limits: spec.Limits, prog: prog, netWanted: spec.NoNetwork, seen: map[int32]*member{},
		dirName: spec.Dir, confine: spec.Confine}
	l := spec.Limits
	if l.CPUTime > 0 || l.Memory > 0 || l.FileSize > 0 || l.Procs > 0 {
		sb.notesList = append(sb.notesList, "rlimits are Linux-only here; CPU, memory and process limits are enforced by the sampling watchdog only")
	}
	return sb, nil
}

func (sb *sandbox) argv() []string             { return sb.prog }
func (sb *sandbox) attr() *syscall.SysProcAttr { return nil }
func (sb *sandbox) dropIsolation(error) bool   { return false }
func (sb *sandbox) notes() []string            { return sb.notesList }
func (sb *sandbox) procsRefused() bool         { return false }
func (sb *sandbox) procsAtLimit(snapshot) bool { return false }
func (sb *sandbox) close()                     {}
func (sb *sandbox) dir() string                { return sb.dirName }
func (sb *sandbox) start(cmd *exec.Cmd) error  { return cmd.Start() }

// confinement reports that filesystem confinement is Linux-only.
func (sb *sandbox) confinement() (bool, string) {
	if sb.confine {
		return false, "filesystem NOT confined: mount namespaces are Linux-only"
	}
	return false, ""
}

func (sb *sandbox) network() (bool, string) {
	if sb.netWanted {
		return false, "network NOT isolated: network namespaces are Linux-only"
	}
	return false, ""
}

func (sb *sandbox) started(pid int) {
	sb.pid = pid
	sb.seen[int32(pid)] = &member{alive: true}
}

func (sb *sandbox) scan() snapshot {
	ctx := context.Background()
	for _, m := range sb.seen {
		m.alive = false
	}
	var walk func(p *process.Process)
	walk = func(p *process.Process) {
		m := sb.seen[p.Pid]
		if m == nil {
			m = &member{}
			sb.seen[p.Pid] = m
		}
		m.alive = true
		if t, err := p.TimesWithContext(ctx); err == nil {
			m.user, m.sys = t.User, t.System
		}
		if mi, err := p.MemoryInfoWithContext(ctx); err == nil {
			m.rss = int64(mi.RSS)
		}
		kids, _ := p.ChildrenWithContext(ctx)
		for _, k := range kids {
			walk(k)
		}
	}
	if p, err := process.NewProcessWithContext(ctx, int32(sb.pid)); err == nil {
		walk(p)
	}
	return sb.totals()
}

func (sb *sandbox) totals() snapshot {
	var s snapshot
	var u, sy float64
	for _, m := range sb.seen {
		u += m.user
		sy += m.sys
		if m.alive {
			s.procs++
			s.rss += m.rss
		}
	}
	s.cpuUser = time.Duration(u * float64(time.Second))
	s.cpuSys = time.Duration(sy * float64(time.Second))
	return s
}

func (sb *sandbox) limitHit(s snapshot) string {
	l := sb.limits
	switch {
	case l.Procs > 0 && s.procs >= l.Procs:
		return LimitProcs
	case l.Memory > 0 && s.rss > l.Memory:
		return LimitMemory
	case l.CPUTime > 0 && s.cpuUser+s.cpuSys > l.CPUTime:
		return LimitCPU
	}
	return ""
}

func (sb *sandbox) signal(kill bool) int {
	n := 0
	for pid, m := range sb.seen {
		if !m.alive {
			continue
		}
		p, err := os.FindProcess(int(pid))
		if err != nil {
			continue
		}
		if kill {
			_ = p.Kill()
		} else {
			_ = p.Signal(os.Interrupt)
		}
		n++
	}
	return n
}

func (sb *sandbox) terminate() {
	sb.scan()
	sb.signal(false)
}

func (sb *sandbox) killAll() {
	for round := 0; round < 50; round++ {
		if sb.scan().procs == 0 {
			return
		}
		sb.signal(true)
		time.Sleep(10 * time.Millisecond)
	}
}

func (sb *sandbox) final() snapshot { return sb.totals() }

func exitStatus(state *os.ProcessState) (int, string) {
	if !state.Exited() && state.ExitCode() == -1 {
		return -1, "signal"
	}
	return state.ExitCode(), ""
}

func rusage(state *os.ProcessState) (user, sys time.Duration, maxRSS int64) {
	return state.UserTime(), state.SystemTime(), 0
}

// signalName names signal number n; numbers are not portable here.
func signalName(int) string { return "" }
