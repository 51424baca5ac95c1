//go:build linux

package runtime

import (
	"errors"
	"fmt"
	"os/exec"
	goruntime "runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A holder (see ns_linux.go) costs a process start and the creation and
// teardown of two namespaces: about as much again as the run of a short
// program. An unconfined run needs nothing of its holder but the PID
// namespace and its /proc, which are the same for every run, so holders are
// kept and reused by the next unconfined run of the same LocalRunner, one
// run at a time. Every process of a run, orphans re-parented to the holder
// included, is killed by the run's own kill (killAll); since the holder
// does not reap, a holder that ever received an orphan (a daemon, a
// background job whose parent left) still has its zombie and is not
// reused: only runs whose tree stayed a tree share a holder. An idle holder ends after holderIdle; each one still dies with
// the runner (Pdeathsig), and with it its namespace.

// holderIdle is how long an unused holder is kept.
const holderIdle = 30 * time.Second

// maxIdleHolders bounds the holders kept for reuse.
const maxIdleHolders = 2

// holderPool keeps idle holders for unconfined runs; safe for concurrent
// use. The zero value is ready (and a nil pool keeps nothing).
type holderPool struct {
	mu   sync.Mutex
	idle []*nsHolder
}

// nsHolder is a PID+mount namespace's init and the locked thread that
// started it, joined its namespaces and starts the programs of its runs.
type nsHolder struct {
	cmd   *exec.Cmd
	done  chan struct{} // closed when the holder has exited
	reqs  chan *exec.Cmd
	errs  chan error
	quit  chan struct{} // closing it kills the holder and ends the thread
	note  string        // a limitation of the namespace ("" when none)
	once  sync.Once
	timer *time.Timer // the idle timer while in the pool
}

// get returns an idle live holder, or nil.
func (p *holderPool) get() *nsHolder {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.idle) > 0 {
		h := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if h.timer.Stop() && h.alive() {
			return h
		}
		h.stop()
	}
	return nil
}

// put keeps h for the next run, or ends it when the pool is full.
func (p *holderPool) put(h *nsHolder) {
	if p == nil || !h.alive() {
		h.stop()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) >= maxIdleHolders {
		h.stop()
		return
	}
	h.timer = time.AfterFunc(holderIdle, func() {
		p.mu.Lock()
		for i, x := range p.idle {
			if x == h {
				p.idle = append(p.idle[:i], p.idle[i+1:]...)
				break
			}
		}
		p.mu.Unlock()
		h.stop()
	})
	p.idle = append(p.idle, h)
}

func (h *nsHolder) alive() bool {
	select {
	case <-h.done:
		return false
	default:
		return true
	}
}

func (h *nsHolder) pid() int { return h.cmd.Process.Pid }

// stop kills the holder (the kernel kills whatever is left in its
// namespace), lets its thread end and waits, bounded, until it is gone.
func (h *nsHolder) stop() {
	h.once.Do(func() { close(h.quit) })
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
	}
}

// start starts cmd in the holder's namespaces, from its thread.
func (h *nsHolder) start(cmd *exec.Cmd) error {
	select {
	case h.reqs <- cmd:
		return <-h.errs
	case <-h.done:
		return errors.New("namespace holder gone")
	}
}

// newNSHolder starts a holder and its thread; the error wraps
// errNoNamespace when the namespaces cannot be had.
func newNSHolder() (*nsHolder, error) {
	h := &nsHolder{done: make(chan struct{}), reqs: make(chan *exec.Cmd), errs: make(chan error), quit: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		// Never unlocked: the thread is in the namespaces and is the
		// parent whose exit triggers the holder's Pdeathsig.
		goruntime.LockOSThread()
		if err := h.setup(); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for {
			select {
			case cmd := <-h.reqs:
				h.errs <- cmd.Start()
			case <-h.quit:
				_ = h.cmd.Process.Kill()
				<-h.done
				return
			case <-h.done:
				<-h.quit
				return
			}
		}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return h, nil
}

// setup runs on the holder's locked thread: it starts the holder in new PID
// and mount namespaces and joins them with a private mount of the
// namespace's own /proc.
func (h *nsHolder) setup() error {
	c := exec.Command("/bin/sh", "-c", holderScript)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL,
		Cloneflags: unix.CLONE_NEWPID | unix.CLONE_NEWNS}
	if err := c.Start(); err != nil {
		close(h.done)
		return fmt.Errorf("%w: %v", errNoNamespace, err)
	}
	h.cmd = c
	go func() { _ = c.Wait(); close(h.done) }()
	fail := func(what string, err error) error {
		_ = c.Process.Kill()
		<-h.done
		return fmt.Errorf("%w: %s: %v", errNoNamespace, what, err)
	}
	hp := strconv.Itoa(c.Process.Pid)
	pidNS, err := joinHolderMounts(hp, fail)
	if err != nil {
		return err
	}
	defer unix.Close(pidNS)
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "pidns=/proc/"+hp+"/ns/pid"); err != nil {
		h.note = "PID namespace with the host's /proc (" + err.Error() + ")"
	}
	if err := unix.Setns(pidNS, unix.CLONE_NEWPID); err != nil {
		return fail("join PID namespace", err)
	}
	return nil
}
