package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"
)

// snapshot is one scan of the run's process tree.
type snapshot struct {
	procs   int           // alive (non-zombie) processes in the tree
	rss     int64         // bytes, sum over alive processes
	cpuUser time.Duration // cumulative over every process ever seen in the tree
	cpuSys  time.Duration
}

// capBuffer keeps the first max bytes written and counts the rest.
type capBuffer struct {
	max   int64
	buf   bytes.Buffer
	total int64
}

func (c *capBuffer) write(p []byte) {
	c.total += int64(len(p))
	if room := c.max - int64(c.buf.Len()); room > 0 {
		if int64(len(p)) > room {
			p = p[:room]
		}
		c.buf.Write(p)
	}
}

func (c *capBuffer) truncated() bool { return c.total > int64(c.buf.Len()) }

// pump copies r into c (and to onOutput) until EOF or a read error (such as
// the deadline set once the tree is gone).
func pump(r *os.File, c *capBuffer, s Stream, onOutput func(Stream, []byte), wg *sync.WaitGroup) {
	defer wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.write(buf[:n])
			if onOutput != nil {
				onOutput(s, buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

// drainTimeout bounds how long output is read after the tree was killed; a
// holder of the pipe that escaped every tracking method cannot hang a run.
const drainTimeout = time.Second

// earlyScan is when the first, unplotted scan of a run's tree happens.
const earlyScan = 5 * time.Millisecond

// execute starts the prepared command in a sandbox, watches it and builds the
// Result.
func execute(ctx context.Context, spec Spec, res Result, env []string, id string, log *slog.Logger, pool *holderPool) (Result, error) {
	sb, err := newSandbox(spec, res.Command, id, log, pool)
	if err != nil {
		return res, err
	}
	defer sb.close()

	outR, outW, err := os.Pipe()
	if err != nil {
		return res, fmt.Errorf("run: stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return res, fmt.Errorf("run: stderr pipe: %w", err)
	}
	var inR, inW *os.File
	var inFile *os.File // handed to the program as is
	if spec.Stdin == nil && spec.StdinReader != nil {
		inFile, _ = spec.StdinReader.(*os.File)
	}
	if spec.Stdin != nil || (spec.StdinReader != nil && inFile == nil) {
		if inR, inW, err = os.Pipe(); err != nil {
			outR.Close()
			outW.Close()
			errR.Close()
			errW.Close()
			return res, fmt.Errorf("run: stdin pipe: %w", err)
		}
	}
	newCmd := func() *exec.Cmd {
		argv := sb.argv()
		cmd := &exec.Cmd{Path: argv[0], Args: argv, Dir: sb.dir(), Env: env, Stdout: outW, Stderr: errW, SysProcAttr: sb.attr()}
		if inR != nil {
			cmd.Stdin = inR
		} else if inFile != nil {
			cmd.Stdin = inFile
		}
		return cmd
	}
	cmd := newCmd()
	res.Started = time.Now()
	err = sb.start(cmd)
	if err != nil && sb.dropIsolation(err) {
		cmd = newCmd()
		res.Started = time.Now()
		err = sb.start(cmd)
	}
	outW.Close()
	errW.Close()
	if inR != nil {
		inR.Close()
	}
	if err != nil {
		outR.Close()
		errR.Close()
		if inW != nil {
			inW.Close()
		}
		return res, fmt.Errorf("run %s: start: %w", res.Command[0], err)
	}
	sb.started(cmd.Process.Pid)

	outBuf := &capBuffer{max: spec.OutputCap}
	errBuf := &capBuffer{max: spec.OutputCap}
	var readers sync.WaitGroup
	readers.Add(2)
	go pump(outR, outBuf, Stdout, spec.OnOutput, &readers)
	go pump(errR, errBuf, Stderr, spec.OnOutput, &readers)
	if inW != nil && spec.Stdin != nil {
		go func() {
			// A program that exits or closes stdin early makes this fail
			// with EPIPE; that is the program's choice, not an error.
			_, _ = inW.Write(spec.Stdin)
			inW.Close()
		}()
	} else if inW != nil {
		// Not waited for: a reader that never ends (a terminal, a pipe
		// nobody closes) must not hold the run. Once the run is over the
		// pipe is closed, and the copy stops at its next write.
		go func() {
			_, _ = io.Copy(inW, spec.StdinReader)
			inW.Close()
		}()
	}
	waitCh := make(chan error, 1)
	go func() { waitCh <- cmd.Wait() }()

	period := spec.SampleEvery
	emit := period > 0
	if !emit {
		period = DefaultSampleEvery // the limit watchdog still needs scans
	}
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	// One early scan catches short programs that end before the first
	// tick (their peak RSS is otherwise unknown, see rusage).
	early := time.NewTimer(min(earlyScan, period))
	defer early.Stop()
	var timeoutC <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	done := ctx.Done()
	var graceC <-chan time.Time
	stopping := false
	stop := func() {
		if stopping {
			return
		}
		stopping = true
		sb.terminate()
		graceC = time.After(spec.Grace)
	}
	var peakRSS int64
	var last snapshot
	lastAt := time.Duration(0)
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-waitCh:
			break loop
		case <-done:
			done = nil
			res.Canceled = true
			stop()
		case <-timeoutC:
			timeoutC = nil
			res.TimedOut = true
			if res.Limit == "" {
				res.Limit = LimitTimeout
				// A tree held at its process limit until the timeout
				// (a fork bomb) was ended by that limit.
				if spec.Limits.Procs > 0 && (sb.procsRefused() || sb.procsAtLimit(sb.scan())) {
					res.Limit = LimitProcs
				}
			}
			stop()
		case <-graceC:
			graceC = nil
			sb.killAll()
		case <-early.C:
			snap := sb.scan()
			peakRSS = max(peakRSS, snap.rss)
			last, lastAt = snap, time.Since(res.Started)
		case <-ticker.C:
			snap := sb.scan()
			at := time.Since(res.Started)
			peakRSS = max(peakRSS, snap.rss)
			if emit {
				s := Sample{At: at, RSS: snap.rss, Procs: snap.procs}
				if dt := at - lastAt; dt > 0 {
					s.CPUPercent = 100 * float64((snap.cpuUser+snap.cpuSys)-(last.cpuUser+last.cpuSys)) / float64(dt)
				}
				res.Samples = append(res.Samples, s)
				if spec.OnSample != nil {
					spec.OnSample(s)
				}
				if spec.Samples != nil {
					select {
					case spec.Samples <- s:
					default:
					}
				}
			}
			last, lastAt = snap, at
			if limit := sb.limitHit(snap); limit != "" && res.Limit == "" {
				res.Limit = limit
				log.Debug("runtime: limit hit, killing tree", "limit", limit, "pid", cmd.Process.Pid)
				stopping = true
				sb.killAll()
			}
		}
	}
	res.Wall = time.Since(res.Started)
	// Whatever is left of the tree (daemons, ignored SIGTERM) goes now.
	sb.killAll()
	_ = outR.SetReadDeadline(time.Now().Add(drainTimeout))
	_ = errR.SetReadDeadline(time.Now().Add(drainTimeout))
	readers.Wait()
	outR.Close()
	errR.Close()
	if inW != nil {
		// Unblocks the stdin writer when an escaped process holds the
		// pipe without reading it; a second Close is harmless.
		inW.Close()
	}

	final := sb.final()
	state := cmd.ProcessState
	if state == nil {
		return res, fmt.Errorf("run %s: wait: %w", res.Command[0], waitErr)
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		log.Warn("runtime: wait", "err", waitErr)
	}
	res.ExitCode, res.Signal = exitStatus(state)
	user, sys, maxRSS := rusage(state)
	res.CPUUser = max(user, final.cpuUser)
	res.CPUSys = max(sys, final.cpuSys)
	res.PeakRSS = max(peakRSS, maxRSS)
	res.Stdout, res.Stderr = outBuf.buf.Bytes(), errBuf.buf.Bytes()
	res.StdoutBytes, res.StderrBytes = outBuf.total, errBuf.total
	res.Truncated = outBuf.truncated() || errBuf.truncated()
	if res.Limit == "" {
		res.Limit = classifyLimit(spec.Limits, res, sb)
	}
	res.NetworkIsolated, res.NetworkNote = sb.network()
	res.LimitNotes = sb.notes()
	res.Confined, res.ConfineNote = sb.confinement()
	return res, nil
}

// memoryMarkers are what common runtimes print when an allocation fails.
var memoryMarkers = [][]byte{
	[]byte("MemoryError"),
	[]byte("Cannot allocate memory"),
	[]byte("std::bad_alloc"),
	[]byte("out of memory"),
	[]byte("Out of memory"),
	[]byte("JavaScript heap out of memory"),
	[]byte("process out of memory"),
	[]byte("Fatal process OOM"),
	[]byte("failed to reserve page summary memory"),
}

// forkMarkers are what shells and runtimes print when a fork is refused.
var forkMarkers = [][]byte{
	[]byte("Cannot fork"),
	[]byte("can't fork"),
	[]byte("fork: retry"),
	[]byte("fork: Resource temporarily unavailable"),
	[]byte("BlockingIOError: [Errno 11]"),
	[]byte("pthread_create failed"),
}

// classifyLimit names the limit that explains how a finished run ended, from
// its terminating signal (or a shell's 128+N report of a child's signal), a
// refused fork, and, for interpreters that turn a refused allocation or
// write into an error, from what they printed.
func classifyLimit(l Limits, res Result, sb *sandbox) string {
	if l.Procs > 0 && sb.procsRefused() {
		return LimitProcs
	}
	if res.ExitCode == 0 && res.Signal == "" {
		return ""
	}
	sig := res.Signal
	if sig == "" && res.ExitCode > 128 && res.ExitCode < 160 {
		sig = signalName(res.ExitCode - 128)
	}
	switch {
	case l.CPUTime > 0 && (sig == "SIGXCPU" || (sig == "SIGKILL" && res.CPUUser+res.CPUSys >= l.CPUTime)):
		return LimitCPU
	case l.FileSize > 0 && (sig == "SIGXFSZ" || bytes.Contains(res.Stderr, []byte("File too large")) ||
		bytes.Contains(res.Stderr, []byte("File size limit exceeded"))):
		return LimitFileSize
	case l.Procs > 0 && containsAny(res.Stderr, forkMarkers):
		return LimitProcs
	case l.Memory > 0 && containsAny(res.Stderr, memoryMarkers):
		return LimitMemory
	}
	return ""
}

// containsAny reports whether b contains any of subs.
func containsAny(b []byte, subs [][]byte) bool {
	for _, s := range subs {
		if bytes.Contains(b, s) {
			return true
		}
	}
	return false
}
