//go:build linux

package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, the unit of CPU times in /proc (100 on every
// mainstream Linux build).
const clockTicks = 100

// member is one process seen in the run's tree.
type member struct {
	start        uint64 // start time in ticks since boot, guards against pid reuse
	utime, stime uint64 // ticks, last seen
	rss          int64  // bytes, last seen
	alive        bool
	zombie       bool
}

// procStat holds the fields of /proc/<pid>/stat the tracker uses.
type procStat struct {
	pid, ppid, pgrp int
	state           byte
	utime, stime    uint64
	threads         int
	start           uint64
	rssPages        int64
}

// sandbox is the Linux side of one run: how it is started (limits behind
// prlimit(1), a pids cgroup, namespaces), how its tree is tracked and killed.
type sandbox struct {
	log     *slog.Logger
	limits  Limits
	prog    []string
	wrapped []string
	sys     *syscall.SysProcAttr

	netWanted bool
	netOK     bool
	netNote   string
	limNotes  []string

	cgroup      string // pids cgroup directory, "" when none
	cgroupDir   string // the cgroup directory to remove at close
	lateRlimits bool   // prlimit(1) missing: apply rlimits right after start
	nproc       uint64 // RLIMIT_NPROC to apply, 0 for none
	pid, pgid   int
	startTicks  uint64
	marker      []byte
	members     map[int]*member
	notOurs     map[int]uint64 // pid → start of processes checked and not in the tree
	pageSize    int64
	scans       int
	buf         [4096]byte // /proc/<pid>/stat reads

	// Namespaces (see ns_linux.go).
	nsWanted      bool   // try a PID+mount namespace
	nsNote        string // why there is none, when there is none
	userPID       bool   // the program runs in a user+PID namespace of its own
	userPIDTried  bool
	confineWanted bool        // Spec.Confine, until found impossible
	confined      bool        // the filesystem is confined
	confineNote   string      // how, or why not
	workdir       string      // the run's working directory (absolute)
	writable      []string    // workdir first, then Spec.Writable
	tmpSize       int64       // bytes of the private /tmp
	pool          *holderPool // holders kept for unconfined runs (nil: none)
	shared        *nsHolder   // this run's holder, taken from pool
	holder        *exec.Cmd
	holderDone    chan struct{}
	holderKilled  bool
	release       chan struct{} // closing it lets the start thread exit
}

func newSandbox(spec Spec, prog []string, id string, log *slog.Logger, pool *holderPool) (*sandbox, error) {
	sb := &sandbox{
		pool: pool,
		log:  log, limits: spec.Limits, prog: prog,
		// Pdeathsig: if the runner itself dies, the program does not
		// outlive it (its own children are the process group's).
		sys:      &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
		marker:   []byte(MarkerEnv + "=" + id),
		members:  map[int]*member{},
		notOurs:  map[int]uint64{},
		pageSize: int64(os.Getpagesize()),
	}
	wd := spec.Dir
	if wd == "" {
		wd, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(wd); err == nil {
		wd = abs
	}
	sb.workdir = wd
	sb.nsWanted = true
	sb.confineWanted = spec.Confine
	sb.writable = append([]string{wd}, spec.Writable...)
	sb.tmpSize = confinedTmpSize
	if spec.Limits.Memory > 0 {
		sb.tmpSize = min(sb.tmpSize, max(spec.Limits.Memory, 1<<20))
	}
	l := spec.Limits
	if l.CPUTime < 0 || l.Memory < 0 || l.Procs < 0 || l.FileSize < 0 {
		return nil, fmt.Errorf("run: negative limit in %+v", l)
	}
	argv := prog
	if l.Procs > 0 {
		if os.Geteuid() == 0 {
			// RLIMIT_NPROC does not bind root: use a pids cgroup when one
			// can be made, else only the watchdog counts.
			if dir, err := makePidsCgroup(id, l.Procs); err == nil {
				sb.cgroup, sb.cgroupDir = dir, dir
				// A confined program joins it through this file alone.
				sb.writable = append(sb.writable, filepath.Join(dir, "cgroup.procs"))
			} else {
				sb.limNotes = append(sb.limNotes, "procs: running as root without a usable pids cgroup ("+err.Error()+"); enforced by the sampling watchdog only")
			}
		} else {
			// RLIMIT_NPROC counts every task of the user, so allow what the
			// user already runs plus the tree's budget.
			sb.nproc = uint64(userTasks(os.Geteuid()) + l.Procs)
		}
	}
	if l.CPUTime > 0 || l.Memory > 0 || l.FileSize > 0 || sb.nproc > 0 {
		var args []string
		if l.CPUTime > 0 {
			secs := int64((l.CPUTime + time.Second - 1) / time.Second)
			args = append(args, fmt.Sprintf("--cpu=%d:%d", secs, secs+1))
		}
		if l.Memory > 0 {
			args = append(args, fmt.Sprintf("--data=%d", l.Memory))
		}
		if l.FileSize > 0 {
			args = append(args, fmt.Sprintf("--fsize=%d", l.FileSize))
		}
		if sb.nproc > 0 {
			args = append(args, fmt.Sprintf("--nproc=%d", sb.nproc))
		}
		if p, err := exec.LookPath("prlimit"); err == nil {
			argv = append(append(append([]string{p}, args...), "--"), argv...)
		} else {
			sb.lateRlimits = true
			sb.limNotes = append(sb.limNotes, "prlimit(1) not found: rlimits applied just after the program started")
		}
	}
	if sb.cgroup != "" {
		// The shell joins the cgroup itself before exec'ing the program, so
		// nothing it forks escapes the limit. The runner made the cgroup,
		// so joining it fails only if something is badly wrong; the run
		// then fails with a message rather than going unlimited.
		argv = append([]string{"/bin/sh", "-c", `echo $$ > "$0" || { echo "codeloom: cannot join the pids cgroup $0" >&2; exit 126; }; exec "$@"`, filepath.Join(sb.cgroup, "cgroup.procs")}, argv...)
	}
	sb.wrapped = argv
	if spec.NoNetwork {
		sb.netWanted = true
		sb.netOK = true
		uid, gid := os.Getuid(), os.Getgid()
		sb.sys.Cloneflags = unix.CLONE_NEWUSER | unix.CLONE_NEWNET
		sb.sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		sb.sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		sb.sys.GidMappingsEnableSetgroups = false
		sb.netNote = "new user+network namespace: no interfaces but a down loopback"
	}
	return sb, nil
}

func (sb *sandbox) argv() []string             { return sb.wrapped }
func (sb *sandbox) attr() *syscall.SysProcAttr { return sb.sys }
func (sb *sandbox) network() (bool, string)    { return sb.netOK, sb.netNote }
func (sb *sandbox) dir() string                { return sb.workdir }

// notes lists the limits and tracking that could not be had.
func (sb *sandbox) notes() []string {
	if sb.nsNote != "" {
		return append(sb.limNotes[:len(sb.limNotes):len(sb.limNotes)], sb.nsNote)
	}
	return sb.limNotes
}

// confinement says whether the filesystem was confined, and how or why not.
func (sb *sandbox) confinement() (bool, string) { return sb.confined, sb.confineNote }

// dropIsolation turns network isolation off after a failed start and reports
// whether a retry makes sense.
func (sb *sandbox) dropIsolation(err error) bool {
	var pe *os.PathError
	if errors.As(err, &pe) && errors.Is(err, os.ErrNotExist) {
		return false
	}
	if sb.userPID {
		sb.dropUserPID(err)
		return true
	}
	if !sb.netWanted || sb.sys.Cloneflags == 0 {
		return false
	}
	sb.sys.Cloneflags = 0
	sb.sys.UidMappings, sb.sys.GidMappings = nil, nil
	sb.netOK = false
	sb.netNote = "network NOT isolated: unprivileged user/network namespaces unavailable (" + err.Error() + ")"
	sb.log.Info("runtime: network isolation unavailable", "err", err)
	return true
}

func (sb *sandbox) started(pid int) {
	sb.pid, sb.pgid = pid, pid
	st, err := sb.readStat(pid)
	if err == nil {
		sb.startTicks = st.start
		sb.members[pid] = &member{start: st.start, alive: true}
	} else {
		sb.members[pid] = &member{alive: true}
	}
	if sb.lateRlimits {
		sb.applyRlimits(pid)
	}
}

func (sb *sandbox) applyRlimits(pid int) {
	set := func(res int, cur, max uint64) {
		lim := unix.Rlimit{Cur: cur, Max: max}
		if err := unix.Prlimit(pid, res, &lim, nil); err != nil {
			sb.limNotes = append(sb.limNotes, fmt.Sprintf("rlimit %d: %v", res, err))
		}
	}
	l := sb.limits
	if l.CPUTime > 0 {
		secs := uint64((l.CPUTime + time.Second - 1) / time.Second)
		set(unix.RLIMIT_CPU, secs, secs+1)
	}
	if l.Memory > 0 {
		set(unix.RLIMIT_DATA, uint64(l.Memory), uint64(l.Memory))
	}
	if l.FileSize > 0 {
		set(unix.RLIMIT_FSIZE, uint64(l.FileSize), uint64(l.FileSize))
	}
	if sb.nproc > 0 {
		set(unix.RLIMIT_NPROC, sb.nproc, sb.nproc)
	}
}

// fullScanEvery is how often (in scans) the sampler re-reads every process
// instead of only members and new pids; it bounds how long a recycled pid
// can hide.
const fullScanEvery = 10

// scan updates the tree's membership from /proc and returns its current
// totals. A process belongs to the tree when it is in the run's process
// group, its parent belongs, it is in the run's pids cgroup, or it started
// after the run and carries the run's environment marker (daemons that
// called setsid and lost their parent). Processes once found not to belong
// are remembered and skipped, except on every fullScanEvery-th scan.
func (sb *sandbox) scan() snapshot {
	sb.scans++
	return sb.scanProcs(sb.scans%fullScanEvery == 0)
}

// lastPid is the most recently allocated pid (0 when unknown).
func lastPid() int {
	fd, err := syscall.Open("/proc/sys/kernel/ns_last_pid", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	var b [32]byte
	n, err := syscall.Read(fd, b[:])
	syscall.Close(fd)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return p
}

// scanProcs scans /proc. Unless full, it reads only members, the cgroup's
// processes and pids allocated since the run started (the cyclic interval
// after the main pid up to ns_last_pid), skipping pids already found not
// to belong.
func (sb *sandbox) scanProcs(full bool) snapshot {
	d, err := os.Open("/proc")
	if err != nil {
		return sb.totals()
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	// Read after the listing, so every listed pid was allocated by then.
	last := 0
	if !full {
		last = lastPid()
	}
	recent := func(pid int) bool {
		switch {
		case last == 0:
			return true
		case last >= sb.pid:
			return pid > sb.pid && pid <= last
		default: // pid numbers wrapped during the run
			return pid > sb.pid || pid <= last
		}
	}
	for _, m := range sb.members {
		m.alive = false
	}
	inGroup := map[int]bool{}
	if sb.cgroup != "" {
		for _, pid := range cgroupPids(sb.cgroup) {
			inGroup[pid] = true
		}
	}
	present := make(map[int]bool, len(names))
	stats := make([]procStat, 0, 16)
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		present[pid] = true
		if !full && !inGroup[pid] {
			if _, member := sb.members[pid]; !member {
				if _, known := sb.notOurs[pid]; known || !recent(pid) {
					continue
				}
			}
		}
		st, err := sb.readStat(pid)
		if err != nil {
			continue
		}
		stats = append(stats, st)
	}
	for pid := range sb.notOurs {
		if !present[pid] {
			delete(sb.notOurs, pid)
		}
	}
	isMember := func(st procStat) bool {
		if m, ok := sb.members[st.pid]; ok && (m.start == st.start || m.start == 0) {
			return true
		}
		return st.pgrp == sb.pgid || inGroup[st.pid]
	}
	add := func(st procStat) {
		delete(sb.notOurs, st.pid)
		m := sb.members[st.pid]
		if m == nil || (m.start != st.start && m.start != 0) {
			m = &member{start: st.start}
			sb.members[st.pid] = m
		}
		m.start = st.start
		m.utime, m.stime = st.utime, st.stime
		m.zombie = st.state == 'Z' || st.state == 'X'
		m.alive = true
		if m.zombie {
			m.rss = 0
		} else {
			m.rss = st.rssPages * sb.pageSize
		}
	}
	pending := stats[:0:0]
	for _, st := range stats {
		switch {
		case isMember(st):
			add(st)
		case st.start >= sb.startTicks:
			pending = append(pending, st)
		default:
			sb.notOurs[st.pid] = st.start // older than the run: never ours
		}
	}
	// Children of members, to a fixed point (a parent may be listed after
	// its child).
	holder := sb.holderPid()
	for changed := true; changed; {
		changed = false
		rest := pending[:0]
		for _, st := range pending {
			// Orphans are re-parented to the PID namespace's holder.
			if m, ok := sb.members[st.ppid]; (ok && m.alive) || (holder != 0 && st.ppid == holder) {
				add(st)
				changed = true
			} else {
				rest = append(rest, st)
			}
		}
		pending = rest
	}
	for _, st := range pending {
		if start, ok := sb.notOurs[st.pid]; ok && start == st.start {
			continue
		}
		switch ours, sure := sb.hasMarker(st.pid); {
		case ours:
			add(st)
		case sure:
			sb.notOurs[st.pid] = st.start
		}
	}
	return sb.totals()
}

// readStat reads /proc/<pid>/stat with plain system calls into a reused
// buffer (os.Open would also try to register the file with the poller).
func (sb *sandbox) readStat(pid int) (procStat, error) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, err
	}
	n, err := syscall.Read(fd, sb.buf[:])
	syscall.Close(fd)
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(pid, sb.buf[:n])
}

func (sb *sandbox) totals() snapshot {
	var s snapshot
	var ut, stt uint64
	for _, m := range sb.members {
		ut += m.utime
		stt += m.stime
		if m.alive && !m.zombie {
			s.procs++
			s.rss += m.rss
		}
	}
	s.cpuUser = time.Duration(ut) * time.Second / clockTicks
	s.cpuSys = time.Duration(stt) * time.Second / clockTicks
	return s
}

// hasMarker reports whether pid's environment holds the run's marker, and
// whether the answer is definite (an unreadable or empty environment, as
// during exec or after exit, is not).
func (sb *sandbox) hasMarker(pid int) (ours, sure bool) {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || len(env) == 0 {
		return false, false
	}
	for len(env) > 0 {
		var kv []byte
		kv, env, _ = bytes.Cut(env, []byte{0})
		if bytes.Equal(kv, sb.marker) {
			return true, true
		}
	}
	return false, true
}

// limitHit reports the limit the tree has gone over, if any.
func (sb *sandbox) limitHit(s snapshot) string {
	l := sb.limits
	switch {
	case l.Procs > 0 && sb.cgroup != "" && sb.procsRefused():
		return LimitProcs
	case l.Procs > 0 && sb.cgroup == "" && s.procs >= l.Procs:
		return LimitProcs
	case l.Procs > 0 && sb.cgroup == "" && 2*s.procs >= l.Procs && sb.procsAtLimit(s):
		return LimitProcs
	case l.Memory > 0 && s.rss > l.Memory:
		return LimitMemory
	case l.CPUTime > 0 && s.cpuUser+s.cpuSys > l.CPUTime:
		return LimitCPU
	}
	return ""
}

// procsAtLimit reports whether RLIMIT_NPROC is holding the tree back: the
// tree is alive and the user's tasks have reached the limit the run was
// given (the user's other tasks, the runner's threads among them, count
// too, so the tree alone may stay below Limits.Procs while every fork is
// refused). It scans all of /proc: call it only when the tree is large.
func (sb *sandbox) procsAtLimit(s snapshot) bool {
	if sb.nproc == 0 || s.procs == 0 {
		return false
	}
	return uint64(userTasks(os.Geteuid())) >= sb.nproc
}

// signalTree sends sig to the process group and every live member.
func (sb *sandbox) signalTree(sig syscall.Signal) int {
	if sb.pgid > 0 {
		_ = syscall.Kill(-sb.pgid, sig)
	}
	n := 0
	for pid, m := range sb.members {
		if m.alive && !m.zombie {
			_ = syscall.Kill(pid, sig)
			n++
		}
	}
	if sb.cgroup != "" {
		for _, pid := range cgroupPids(sb.cgroup) {
			_ = syscall.Kill(pid, sig)
		}
	}
	return n
}

// terminate asks the whole tree to stop (SIGTERM).
func (sb *sandbox) terminate() {
	sb.scanProcs(true)
	sb.signalTree(syscall.SIGTERM)
}

// killAll SIGKILLs the tree until a scan finds no live member.
func (sb *sandbox) killAll() {
	// The kernel kills whatever is left in the PID namespace.
	sb.killHolder()
	for round := 0; round < 200; round++ {
		// The first round only looks at processes born during the run;
		// if anything is left, later rounds look everywhere.
		snap := sb.scanProcs(round > 0)
		if snap.procs == 0 {
			return
		}
		sb.signalTree(syscall.SIGKILL)
		time.Sleep(time.Duration(min(round+1, 10)) * time.Millisecond)
	}
	sb.log.Warn("runtime: processes survived SIGKILL", "pgid", sb.pgid)
}

func (sb *sandbox) final() snapshot { return sb.totals() }

func (sb *sandbox) close() {
	sb.killHolder()
	sb.releaseShared()
	sb.releaseThread()
	if sb.cgroupDir == "" {
		return
	}
	for i := 0; i < 50; i++ {
		if err := os.Remove(sb.cgroupDir); err == nil || os.IsNotExist(err) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	sb.log.Warn("runtime: could not remove cgroup", "dir", sb.cgroupDir)
}

// readProcStat parses /proc/<pid>/stat.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(pid, b)
}

func parseProcStat(pid int, b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, fmt.Errorf("proc stat %d: malformed", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("proc stat %d: %d fields", pid, len(f))
	}
	st := procStat{pid: pid, state: f[0][0]}
	st.ppid, _ = strconv.Atoi(f[1])
	st.pgrp, _ = strconv.Atoi(f[2])
	st.utime, _ = strconv.ParseUint(f[11], 10, 64)
	st.stime, _ = strconv.ParseUint(f[12], 10, 64)
	st.threads, _ = strconv.Atoi(f[17])
	st.start, _ = strconv.ParseUint(f[19], 10, 64)
	st.rssPages, _ = strconv.ParseInt(f[21], 10, 64)
	return st, nil
}

// userTasks counts the threads of every process owned by uid (what
// RLIMIT_NPROC counts).
func userTasks(uid int) int {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	n := 0
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		fi, err := os.Stat("/proc/" + name)
		if err != nil {
			continue
		}
		if sys, ok := fi.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != uid {
			continue
		}
		if st, err := readProcStat(pid); err == nil {
			n += max(st.threads, 1)
		}
	}
	return n
}

// exitStatus returns the exit code (-1 when signalled) and the signal name.
func exitStatus(state *os.ProcessState) (int, string) {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return -1, unix.SignalName(ws.Signal())
	}
	return state.ExitCode(), ""
}

// rusage returns CPU times and peak RSS (bytes) of the main process and the
// descendants it waited for. Go starts children with vfork semantics, so the
// kernel seeds a child's ru_maxrss with the runner's own high-water mark at
// exec: a value not above the runner's VmHWM may be the runner's, not the
// child's, and is dropped (the sampled peak stands instead).
func rusage(state *os.ProcessState) (user, sys time.Duration, maxRSS int64) {
	user, sys = state.UserTime(), state.SystemTime()
	if ru, ok := state.SysUsage().(*syscall.Rusage); ok {
		maxRSS = ru.Maxrss * 1024
		if maxRSS <= SelfPeakRSS() {
			maxRSS = 0
		}
	}
	return user, sys, maxRSS
}

// signalName names signal number n ("" when unknown).
func signalName(n int) string { return unix.SignalName(syscall.Signal(n)) }
