// Package runtime runs code and tests as measured subprocesses: a whole
// process tree per run, killed as a unit on timeout or cancellation (politely
// first, then with SIGKILL after a grace period), with captured and capped
// output, resource limits (CPU time, memory, processes, file size),
// optional network isolation, and metrics of the whole tree (wall, CPU
// user/sys, peak RSS) sampled live for plotting.
//
// The package name shadows the standard library's runtime; import the latter
// as goruntime where both are needed.
//
// Linux is the fully supported platform: rlimits are applied with prlimit(1)
// before the program starts, a pids cgroup bounds the tree when the runner may
// create one (root), a network namespace isolates the network, and the tree
// runs in its own PID namespace when the runner may create one (root), which
// no child can leave: daemons are found and killed, and the tree dies with
// the runner even when the runner is SIGKILLed. A mount namespace confines
// the filesystem on request (Spec.Confine). Without privileges the program
// runs as pid 1 of a user+PID namespace of its own when the kernel allows
// unprivileged user namespaces (the same guarantees, no confinement);
// otherwise the tree is tracked by process group, parentage and an
// environment marker. Result.LimitNotes and ConfineNote say what could not
// be had. Other platforms
// build and run programs with timeouts and metrics, and report that limits and
// network isolation are unavailable.
package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Defaults applied to zero fields of a Spec.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultGrace       = 2 * time.Second
	DefaultOutputCap   = 4 << 20 // bytes kept per stream
	DefaultSampleEvery = 100 * time.Millisecond
)

// Names of the limits a Result can report in Result.Limit.
const (
	LimitTimeout  = "timeout"
	LimitCPU      = "cpu"
	LimitMemory   = "memory"
	LimitProcs    = "procs"
	LimitFileSize = "filesize"
)

// MarkerEnv is the environment variable set to a unique run ID in every
// child's environment; the runner uses it to find descendants that left the
// process group and the parent chain (daemons).
const MarkerEnv = "CODELOOM_RUN_ID"

// Stream names one output stream of a run.
type Stream string

// The two output streams.
const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// Limits bounds a run's resources. Zero fields mean "no limit".
type Limits struct {
	CPUTime time.Duration // CPU time of any process (rlimit) and of the whole tree (watchdog)
	// Memory is bytes of data (heap and private writable mappings) per
	// process (RLIMIT_DATA) and of RSS summed over the tree (watchdog).
	// RLIMIT_AS is not used: Go and V8 reserve far more address space than
	// they use and would not even start under a realistic cap.
	Memory   int64
	Procs    int   // processes in the tree (pids cgroup or rlimit, plus watchdog)
	FileSize int64 // bytes of any file written
}

// Spec describes one run.
type Spec struct {
	// Command is the program and its arguments. Either Command or Code is set.
	Command []string
	// Code is a snippet to run with the toolchain of Language
	// ("python", "go", "javascript"/"node", "sh"/"bash").
	Code     string
	Language string
	// Dir is the working directory (and the project whose toolchain is used).
	Dir string
	// Env holds extra KEY=VALUE entries; they override the inherited
	// environment and DotEnv.
	Env []string
	// DotEnv is the path of a .env file to load (optional; relative to Dir).
	DotEnv string
	// DropEnv names inherited variables (secrets) not passed to the program.
	DropEnv []string
	// Stdin is written to the program's standard input; nil means /dev/null.
	Stdin []byte
	// StdinReader, when set (and Stdin is nil), is the program's standard
	// input, streamed as it is read. An *os.File is handed to the program
	// as is; any other reader is copied by a goroutine that the run never
	// waits for, so a reader that never ends cannot hold the run past its
	// timeout.
	StdinReader io.Reader
	// Timeout ends the run (DefaultTimeout when zero; negative means none).
	Timeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL (DefaultGrace when zero).
	Grace time.Duration
	// OutputCap is how many bytes of each stream are kept (DefaultOutputCap
	// when zero); the rest is counted and dropped.
	OutputCap int64
	// Limits bounds resources.
	Limits Limits
	// NoNetwork asks for a run without network access.
	NoNetwork bool
	// Confine asks for a confined filesystem: everything read-only but the
	// working directory (Dir, or the current one) and Writable, with a
	// private, empty /tmp (and /dev/shm). Result.Confined and ConfineNote
	// say whether it was possible (a mount namespace needs root here).
	Confine bool
	// Writable lists extra directories a confined run may write (a build
	// cache, for instance). Missing ones are skipped.
	Writable []string
	// SampleEvery is the metrics sampling period (DefaultSampleEvery when
	// zero; negative disables live samples, final metrics are still taken).
	SampleEvery time.Duration
	// Origin labels the run in history ("exec", "test", "gate:tests", …).
	Origin string

	// OnSample, when set, is called from the sampler goroutine with every
	// sample as it is taken (the UI plots these live). It must not block long.
	OnSample func(Sample)
	// Samples, when set, receives every sample with a non-blocking send
	// (samples are dropped when the channel is full). It is not closed.
	Samples chan<- Sample
	// OnOutput, when set, receives every chunk of output as it arrives,
	// including what falls beyond OutputCap; the consumer bounds what it keeps.
	// Calls for one stream are sequential; the two streams call concurrently.
	OnOutput func(stream Stream, chunk []byte)
}

// Sample is one point of the live metrics of a run's process tree.
type Sample struct {
	At         time.Duration `json:"at"`          // since the start
	CPUPercent float64       `json:"cpu_percent"` // of one core, whole tree, since the previous sample
	RSS        int64         `json:"rss"`         // bytes, sum over the tree
	Procs      int           `json:"procs"`       // processes alive in the tree
}

// Result is the outcome and the metrics of a run.
type Result struct {
	Command  []string `json:"command"` // as executed (after toolchain resolution)
	Dir      string   `json:"dir"`
	ExitCode int      `json:"exit_code"`        // -1 when ended by a signal
	Signal   string   `json:"signal,omitempty"` // terminating signal of the main process
	// Limit names the limit that ended the run: LimitTimeout, LimitCPU,
	// LimitMemory, LimitProcs, LimitFileSize, or "".
	Limit    string `json:"limit,omitempty"`
	TimedOut bool   `json:"timed_out"`
	Canceled bool   `json:"canceled"`

	Wall    time.Duration `json:"wall"`
	CPUUser time.Duration `json:"cpu_user"` // whole tree
	CPUSys  time.Duration `json:"cpu_sys"`  // whole tree
	PeakRSS int64         `json:"peak_rss"` // bytes, whole tree

	Stdout      []byte `json:"stdout"`
	Stderr      []byte `json:"stderr"`
	StdoutBytes int64  `json:"stdout_bytes"` // produced, including dropped bytes
	StderrBytes int64  `json:"stderr_bytes"`
	Truncated   bool   `json:"truncated"` // some output was dropped at OutputCap

	NetworkIsolated bool `json:"network_isolated"`
	// Confined says the filesystem was confined as Spec.Confine asked;
	// ConfineNote says how, or why not.
	Confined    bool   `json:"confined"`
	ConfineNote string `json:"confine_note,omitempty"`
	NetworkNote string `json:"network_note,omitempty"`
	// LimitNotes says which requested limits could not be enforced and why.
	LimitNotes []string `json:"limit_notes,omitempty"`

	Samples []Sample  `json:"samples,omitempty"`
	Started time.Time `json:"started"`
}

// OK reports whether the program exited with status 0 and no limit ended it.
func (r Result) OK() bool {
	return r.ExitCode == 0 && r.Signal == "" && r.Limit == "" && !r.Canceled
}

// Runner runs a Spec. *LocalRunner implements it; tests and the pipeline may
// substitute their own.
type Runner interface {
	Run(ctx context.Context, spec Spec) (Result, error)
}

// Option configures a LocalRunner.
type Option func(*LocalRunner)

// WithRecorder records every finished run through rec.
func WithRecorder(rec Recorder) Option { return func(r *LocalRunner) { r.rec = rec } }

// WithSamples sends every sample of every run to ch (non-blocking: samples
// are dropped when ch is full), in addition to any per-run Spec.Samples.
// The channel is never closed.
func WithSamples(ch chan<- Sample) Option { return func(r *LocalRunner) { r.samples = ch } }

// WithLogger sets the logger (slog.Default() otherwise).
func WithLogger(l *slog.Logger) Option { return func(r *LocalRunner) { r.log = l } }

// LocalRunner runs programs as local subprocesses. It holds no per-run state
// (only idle PID-namespace holders reused between runs, see
// holder_linux.go) and is safe for concurrent use.
type LocalRunner struct {
	rec     Recorder
	log     *slog.Logger
	samples chan<- Sample
	holders *holderPool
}

// New returns a LocalRunner.
func New(opts ...Option) *LocalRunner {
	r := &LocalRunner{log: slog.Default(), holders: &holderPool{}}
	for _, o := range opts {
		o(r)
	}
	return r
}

// ErrNoCommand is returned for a Spec with neither Command nor Code.
var ErrNoCommand = errors.New("runtime: spec has no command and no code")

// Run runs spec and returns its Result. The error is non-nil only when the
// program could not be started (missing interpreter, bad directory, …); a
// program that fails, crashes or hits a limit is a Result, not an error.
// Cancelling ctx ends the run like a timeout (Result.Canceled is set).
func (r *LocalRunner) Run(ctx context.Context, spec Spec) (Result, error) {
	res, err := r.run(ctx, spec)
	if err != nil {
		r.log.Debug("runtime: run not started", "command", spec.Command, "err", err)
	}
	if r.rec != nil {
		if rerr := r.rec.RecordRun(NewRecord(spec, res, err)); rerr != nil {
			r.log.Warn("runtime: could not record run", "err", rerr)
		}
	}
	return res, err
}

func (r *LocalRunner) run(ctx context.Context, spec Spec) (Result, error) {
	spec = withDefaults(spec)
	res := Result{Dir: spec.Dir}
	if spec.Dir != "" {
		st, err := os.Stat(spec.Dir)
		if err != nil {
			return res, fmt.Errorf("run: working directory: %w", err)
		}
		if !st.IsDir() {
			return res, fmt.Errorf("run: working directory %s is not a directory", spec.Dir)
		}
	}
	argv := spec.Command
	if spec.Code != "" {
		tmp, err := os.MkdirTemp("", "codeloom-snippet-")
		if err != nil {
			return res, fmt.Errorf("run snippet: %w", err)
		}
		defer os.RemoveAll(tmp)
		spec.Writable = append(spec.Writable[:len(spec.Writable):len(spec.Writable)], tmp)
		argv, err = snippetCommand(spec, tmp)
		if err != nil {
			return res, err
		}
	}
	if len(argv) == 0 {
		return res, ErrNoCommand
	}
	path, err := lookPath(argv[0], spec.Dir)
	if err != nil {
		return res, err
	}
	res.Command = append([]string{path}, argv[1:]...)
	env, err := buildEnv(os.Environ(), spec)
	if err != nil {
		return res, err
	}
	id, err := newRunID()
	if err != nil {
		return res, err
	}
	env = append(env, MarkerEnv+"="+id)
	if spec.Confine {
		// The confined run's only writable temporary folder.
		env = append(env, "TMPDIR=/tmp")
	}
	if r.samples != nil {
		user := spec.OnSample
		ch := r.samples
		spec.OnSample = func(s Sample) {
			if user != nil {
				user(s)
			}
			select {
			case ch <- s:
			default:
			}
		}
	}
	return execute(ctx, spec, res, env, id, r.log, r.holders)
}

// lookPath resolves a program name the way a shell would, relative paths
// against dir, and names what it looked for when it fails.
func lookPath(name, dir string) (string, error) {
	if filepath.Base(name) != name { // contains a separator
		p := name
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("run: program %s: %w", name, err)
		}
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("run: program %q not found in PATH: %w", name, err)
	}
	return p, nil
}

func withDefaults(s Spec) Spec {
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Grace <= 0 {
		s.Grace = DefaultGrace
	}
	if s.OutputCap <= 0 {
		s.OutputCap = DefaultOutputCap
	}
	if s.SampleEvery == 0 {
		s.SampleEvery = DefaultSampleEvery
	}
	if s.Origin == "" {
		s.Origin = "run"
	}
	return s
}

func newRunID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
