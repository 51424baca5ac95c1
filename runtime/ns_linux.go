//go:build linux

package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A run is started in its own PID and mount namespaces whenever the runner
// may create them (CAP_SYS_ADMIN, i.e. root here):
//
//   - first a holder is started with CLONE_NEWPID|CLONE_NEWNS: pid 1 of the
//     new PID namespace, a sleep. Every orphan of the run is re-parented to it, whatever it did
//     to its session, group or environment, so the tree is tracked by
//     parentage; killing it makes the kernel kill everything left in the
//     namespace. It has Pdeathsig, so when the runner dies, even by
//     SIGKILL, the holder dies and the kernel kills the rest;
//   - a locked OS thread then joins the holder's namespaces with setns(2)
//     (which affects only that thread and what it starts next), sets the
//     mounts up (the namespace's own /proc among them) and starts the program: pid 2 or so, a direct child of the
//     runner, so its status and rusage are exact and it is not an init with
//     odd signal rules.
//
// The thread stays alive, parked, until the run is over (Pdeathsig fires
// when the thread that started a child exits), then exits with its
// goroutine, taking its namespaces along.
//
// For a confined run (Spec.Confine) the mount namespace is made read-only
// everywhere but the working directory and Spec.Writable, with fresh tmpfs
// on /tmp and /dev/shm.

// holderScript is the PID namespace's init: it sleeps. (The trap does not
// make it reap: dash does not pass an ignored SIGCHLD on to what it execs.
// The orphans it inherits stay zombies until it ends with the run, or, for
// a reused holder, make it not reused.)
const holderScript = `trap "" CHLD; exec sleep 2147483647`

// confinedTmpSize bounds a confined run's private /tmp (tmpfs counts as
// memory); a memory limit, when lower, bounds it instead.
const confinedTmpSize = 512 << 20

// errNoNamespace is returned when the namespaces could not be set up;
// nothing was started in them, and the start is retried without.
var errNoNamespace = errors.New("no namespace")

// userPIDNote says how a run without privileges is tracked in a PID
// namespace of its own.
const userPIDNote = "PID namespace in a user namespace (not root): the program is the namespace's pid 1, so its orphans stay in the run and die with it; signals it has no handler for (SIGTERM included) reach it only as the final SIGKILL"

// start starts cmd, in new namespaces when possible (see above). Without
// the privileges for the holder, the program itself is started in a new
// user and PID namespace (useUserPID) when unprivileged user namespaces
// are allowed.
func (sb *sandbox) start(cmd *exec.Cmd) error {
	for {
		if sb.nsWanted && os.Geteuid() != 0 && !hasSysAdmin() {
			// The holder needs CAP_SYS_ADMIN: don't pay a failed start.
			sb.noNamespace(errors.New("not root"))
			continue
		}
		if !sb.nsWanted {
			return cmd.Start() // cmd.SysProcAttr is sb.sys, useUserPID's flags included
		}
		if !sb.confineWanted && sb.pool != nil {
			err := sb.startShared(cmd)
			if errors.Is(err, errNoNamespace) {
				sb.noNamespace(err)
				continue
			}
			return err
		}
		sb.releaseThread()
		done := make(chan error, 1)
		release := make(chan struct{})
		go func() {
			// Never unlocked: the thread carries the namespaces and is the
			// parent whose exit triggers Pdeathsig, so it lives until the
			// run is over and then exits with this goroutine.
			goruntime.LockOSThread()
			done <- sb.startIsolated(cmd)
			<-release
		}()
		err := <-done
		sb.release = release
		if errors.Is(err, errNoNamespace) {
			sb.noNamespace(err)
			continue
		}
		return err
	}
}

// noNamespace records that the holder's namespaces cannot be had (err says
// why) and falls back to a user+PID namespace for the program itself.
func (sb *sandbox) noNamespace(err error) {
	sb.log.Debug("runtime: no namespaces", "err", err)
	if sb.confineWanted {
		sb.confineNote = "filesystem NOT confined: " + err.Error()
		sb.confineWanted = false
	}
	sb.nsWanted = false
	if sb.nsNote == "" {
		sb.nsNote = "no PID namespace (" + err.Error() + "): a daemon that leaves its session and environment may outlive the run"
	}
	sb.useUserPID()
}

// useUserPID starts the program in a new user and PID namespace (its own
// uid and gid mapped to themselves, so it keeps who it is and gains no
// privilege on the host): it is the namespace's pid 1, every orphan of
// the tree is re-parented to it, and when it ends or is killed (Pdeathsig,
// when the runner dies) the kernel kills everything left in the namespace.
// dropIsolation undoes it when the kernel refuses such namespaces.
func (sb *sandbox) useUserPID() {
	if sb.userPIDTried {
		return
	}
	sb.userPIDTried, sb.userPID = true, true
	if sb.sys.Cloneflags&unix.CLONE_NEWUSER == 0 {
		uid, gid := os.Getuid(), os.Getgid()
		sb.sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		sb.sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		sb.sys.GidMappingsEnableSetgroups = false
	}
	// Go's child compares its parent's pid with getppid(), which is 0 across
	// the namespace border, and signals itself: harmless, as a namespace's
	// init ignores SIGKILL from inside; the Pdeathsig stays set.
	sb.sys.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWPID
	sb.nsNote = userPIDNote
}

// dropUserPID undoes useUserPID after the kernel refused it (err).
func (sb *sandbox) dropUserPID(err error) {
	sb.userPID = false
	sb.sys.Cloneflags &^= unix.CLONE_NEWPID
	if !sb.netWanted {
		sb.sys.Cloneflags &^= unix.CLONE_NEWUSER
		sb.sys.UidMappings, sb.sys.GidMappings = nil, nil
	}
	sb.nsNote = "no PID namespace (not root, and no unprivileged user namespace: " + err.Error() + "): a daemon that leaves its session and environment may outlive the run"
	sb.log.Info("runtime: no user+PID namespace", "err", err)
}

// hasSysAdmin reports whether this process has CAP_SYS_ADMIN (the holder's
// namespaces need it).
func hasSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[0].Effective&(1<<unix.CAP_SYS_ADMIN) != 0
}

// startIsolated runs on the locked thread: it starts the holder in new PID
// and mount namespaces, joins them (only this thread, and only for what it
// starts next), sets the mounts up and starts cmd.
func (sb *sandbox) startIsolated(cmd *exec.Cmd) error {
	if err := sb.startHolder(); err != nil {
		return fmt.Errorf("%w: %v", errNoNamespace, err)
	}
	hp := strconv.Itoa(sb.holderPid())
	fail := func(what string, err error) error {
		sb.killHolder()
		sb.holder = nil
		return fmt.Errorf("%w: %s: %v", errNoNamespace, what, err)
	}
	pidNS, err := joinHolderMounts(hp, fail)
	if err != nil {
		return err
	}
	defer unix.Close(pidNS)
	if sb.confineWanted {
		if err := confineMounts(sb.writable, sb.tmpSize); err != nil {
			return fail("confine", err)
		}
		sb.confined = true
		sb.confineNote = "read-only outside " + sb.writable[0] + ", private /tmp"
	}
	// The namespace's own /proc, so that /proc/<getpid()> is the program
	// (the pidns= option needs Linux 6.15; without it /proc stays the
	// host's, which /proc/self still reads right).
	pidNSPath := "/proc/" + hp + "/ns/pid"
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "pidns="+pidNSPath); err != nil {
		sb.nsNote = "PID namespace with the host's /proc (" + err.Error() + ")"
	} else if sb.confined {
		// The kernel's tunables stay read-only.
		if err := unix.Mount("/proc/sys", "/proc/sys", "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fail("read-only /proc/sys", err)
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, "/proc/sys", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fail("read-only /proc/sys", err)
		}
	}
	if err := unix.Setns(pidNS, unix.CLONE_NEWPID); err != nil {
		return fail("join PID namespace", err)
	}
	sb.nsAttr(cmd)
	if err := cmd.Start(); err != nil {
		sb.killHolder()
		return err
	}
	return nil
}

// startShared starts cmd in a reused holder's namespaces (holder_linux.go),
// or a new one's.
func (sb *sandbox) startShared(cmd *exec.Cmd) error {
	h := sb.pool.get()
	if h == nil {
		var err error
		if h, err = newNSHolder(); err != nil {
			return err
		}
	}
	if h.note != "" && sb.nsNote == "" {
		sb.nsNote = h.note
	}
	sb.nsAttr(cmd)
	if err := h.start(cmd); err != nil {
		sb.pool.put(h) // nothing started in it
		return err
	}
	sb.shared = h
	return nil
}

// releaseShared gives the reused holder back once its namespace is empty
// (the run's kill took everything), or ends it.
func (sb *sandbox) releaseShared() {
	h := sb.shared
	if h == nil {
		return
	}
	sb.shared = nil
	// The holder does not reap (dash keeps SIGCHLD's default even under
	// trap "" CHLD): any process that was re-parented to it is left as a
	// zombie, so only a holder that never received one is reused.
	hp := strconv.Itoa(h.pid())
	if b, err := os.ReadFile("/proc/" + hp + "/task/" + hp + "/children"); err == nil && len(strings.TrimSpace(string(b))) == 0 {
		sb.pool.put(h)
		return
	}
	h.stop() // the kernel kills whatever is left
}

// nsAttr adapts cmd's attributes to a start inside the holder's namespaces.
func (sb *sandbox) nsAttr(cmd *exec.Cmd) {
	if cmd.SysProcAttr != nil {
		attr := *cmd.SysProcAttr
		// Go's child sees a parent pid of 0 across the namespace border,
		// takes the parent for dead and sends itself the signal. The
		// holder's Pdeathsig covers the program: its death kills the
		// namespace.
		attr.Pdeathsig = 0
		if attr.Cloneflags&unix.CLONE_NEWUSER != 0 {
			// Privileged enough for these namespaces, so a network
			// namespace needs no user namespace, whose id maps Go would
			// write through this thread's /proc (the namespace's own, where
			// the child's host pid does not exist).
			attr.Cloneflags &^= unix.CLONE_NEWUSER
			attr.UidMappings, attr.GidMappings = nil, nil
			sb.netNote = "new network namespace: no interfaces but a down loopback"
		}
		cmd.SysProcAttr = &attr
	}
}

// startHolder starts the PID namespace's init in new PID and mount
// namespaces.
func (sb *sandbox) startHolder() error {
	h := exec.Command("/bin/sh", "-c", holderScript)
	h.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL,
		Cloneflags: unix.CLONE_NEWPID | unix.CLONE_NEWNS}
	if err := h.Start(); err != nil {
		return err
	}
	sb.holder, sb.holderKilled = h, false
	sb.holderDone = make(chan struct{})
	done := sb.holderDone
	go func() { _ = h.Wait(); close(done) }()
	return nil
}

// killHolder kills the PID namespace (the kernel kills every process left
// in it) and waits, bounded, until it is gone.
func (sb *sandbox) killHolder() {
	if sb.holder == nil || sb.holderKilled {
		return
	}
	sb.holderKilled = true
	_ = sb.holder.Process.Kill()
	select {
	case <-sb.holderDone:
	case <-time.After(5 * time.Second):
		sb.log.Warn("runtime: PID namespace holder did not exit", "pid", sb.holder.Process.Pid)
	}
}

func (sb *sandbox) holderPid() int {
	if sb.shared != nil {
		return sb.shared.pid()
	}
	if sb.holder == nil || sb.holder.Process == nil {
		return 0
	}
	return sb.holder.Process.Pid
}

// releaseThread lets the parked start thread exit.
func (sb *sandbox) releaseThread() {
	if sb.release != nil {
		close(sb.release)
		sb.release = nil
	}
}

// confineMounts makes the calling thread's (new, private) mount namespace
// read-only except dirs (kept writable) and puts fresh tmpfs on /tmp and
// /dev/shm.
func confineMounts(dirs []string, tmpSize int64) error {
	type keep struct {
		path string
		fd   int
	}
	var keeps []keep
	defer func() {
		for _, k := range keeps {
			unix.Close(k.fd)
		}
	}()
	for _, d := range dirs {
		p, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue // missing: nothing to keep writable
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		keeps = append(keeps, keep{p, fd})
	}
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, ro); err != nil {
		return fmt.Errorf("read-only /: %w", err)
	}
	opts := fmt.Sprintf("mode=1777,size=%d", tmpSize)
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("private /tmp: %w", err)
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("private /dev/shm: %w", err)
		}
	}
	// Parents first, so a writable directory inside another stays visible.
	sort.Slice(keeps, func(i, j int) bool { return len(keeps[i].path) < len(keeps[j].path) })
	rw := &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	var skeletons []string
	for _, k := range keeps {
		if k.path == "/" {
			return errors.New("the working directory is /")
		}
		// Under the fresh /tmp the path is gone: it is made again on a
		// small tmpfs of its own (its first component), made read-only
		// once the folders are bound, so that ../x is refused there too
		// instead of landing in the private /tmp.
		if top := skeletonTop(k.path); top != "" && !inside(top, skeletons) {
			if err := os.MkdirAll(top, 0o755); err != nil {
				return fmt.Errorf("keep %s writable: %w", k.path, err)
			}
			if err := unix.Mount("tmpfs", top, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=755,size=1m"); err != nil {
				return fmt.Errorf("keep %s writable: %w", k.path, err)
			}
			skeletons = append(skeletons, top)
		}
		var st unix.Stat_t
		if err := unix.Fstat(k.fd, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			// A single file (a cgroup's cgroup.procs): bound where it is.
		} else if err := os.MkdirAll(k.path, 0o755); err != nil {
			return fmt.Errorf("keep %s writable: %w", k.path, err)
		}
		src := fmt.Sprintf("/proc/self/fd/%d", k.fd)
		if err := unix.Mount(src, k.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("keep %s writable: %w", k.path, err)
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, k.path, unix.AT_RECURSIVE, rw); err != nil {
			return fmt.Errorf("keep %s writable: %w", k.path, err)
		}
	}
	for _, top := range skeletons {
		if err := unix.MountSetattr(unix.AT_FDCWD, top, 0, ro); err != nil {
			return fmt.Errorf("read-only %s: %w", top, err)
		}
	}
	return nil
}

// skeletonTop is the first path component of p below /tmp or /dev/shm (the
// folders replaced by a fresh tmpfs), or "" when p is elsewhere.
func skeletonTop(p string) string {
	for _, t := range []string{"/tmp", "/dev/shm"} {
		if rest, ok := strings.CutPrefix(p, t+"/"); ok && rest != "" {
			first, _, _ := strings.Cut(rest, "/")
			return t + "/" + first
		}
	}
	return ""
}

// inside reports whether p is one of dirs or below one.
func inside(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// joinHolderMounts makes the calling (locked) thread join the mount
// namespace of the holder process hp, with its mounts made private so that
// nothing done next reaches the runner's own, and returns an open handle
// of the holder's PID namespace for the caller to join once its mounts are
// set (the caller closes it). A failure is reported through fail, which
// also ends the holder.
func joinHolderMounts(hp string, fail func(what string, err error) error) (pidNS int, err error) {
	mntNS, err := unix.Open("/proc/"+hp+"/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fail("open mount namespace", err)
	}
	defer unix.Close(mntNS)
	pidNS, err = unix.Open("/proc/"+hp+"/ns/pid", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fail("open PID namespace", err)
	}
	// Joining a mount namespace needs a thread of its own filesystem
	// context (root, cwd), which Go threads share.
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		unix.Close(pidNS)
		return -1, fail("unshare fs", err)
	}
	if err := unix.Setns(mntNS, unix.CLONE_NEWNS); err != nil {
		unix.Close(pidNS)
		return -1, fail("join mount namespace", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		unix.Close(pidNS)
		return -1, fail("private mounts", err)
	}
	return pidNS, nil
}
