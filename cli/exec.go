package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"codeloom/app/memory"
	"codeloom/runtime"
)

// Exit statuses of `codeloom exec` when the program did not end on its own.
// Otherwise exec exits with the program's own status, or 128+N when a signal
// N killed it (the shell convention).
const (
	ExitExecFileSize = 122 // the file-size limit ended the program
	ExitExecCPU      = 123 // the CPU-time limit ended the program
	ExitExecTimeout  = 124 // the wall-clock timeout ended the program
	ExitExecMemory   = 125 // the memory limit ended the program
	ExitExecProcs    = 126 // the process limit ended the program
	ExitExecNotRun   = 127 // the program could not be started (not found, bad directory, …)
	ExitExecCanceled = 130 // codeloom was interrupted (Ctrl-C) and stopped the program
)

// execLimitExit maps Result.Limit to the exit status documented above.
var execLimitExit = map[string]int{
	runtime.LimitFileSize: ExitExecFileSize,
	runtime.LimitCPU:      ExitExecCPU,
	runtime.LimitTimeout:  ExitExecTimeout,
	runtime.LimitMemory:   ExitExecMemory,
	runtime.LimitProcs:    ExitExecProcs,
}

// execMulti is a repeatable string flag.
type execMulti []string

func (m *execMulti) String() string     { return strings.Join(*m, ",") }
func (m *execMulti) Set(v string) error { *m = append(*m, v); return nil }

// execSize is a byte-size flag accepting 512MB, 1G, 64k, 1.5GiB or bytes.
type execSize int64

func (s *execSize) String() string { return strconv.FormatInt(int64(*s), 10) }
func (s *execSize) Set(v string) error {
	n, err := execParseSize(v)
	if err != nil {
		return err
	}
	*s = execSize(n)
	return nil
}

// execParseSize parses a byte size with an optional K/M/G/T suffix (powers
// of 1024; "B", "iB" and case are ignored).
func execParseSize(v string) (int64, error) {
	s := strings.ToUpper(strings.TrimSpace(v))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), "I")
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	// !(f >= 0) also refuses NaN; the upper bound keeps the conversion
	// from overflowing into a negative (= unlimited) size.
	if err != nil || !(f >= 0) || f*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional K, M, G or T suffix", v)
	}
	return int64(f * float64(mult)), nil
}

// runExec implements `codeloom exec [flags] -- CMD ARGS...`: it runs the
// command with limits and metrics, streams its output, and prints a summary
// (or, with --json, one JSON object with every metric and the capped
// outputs). With --dir the run is recorded in that project's history.
func runExec(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	timeout := fs.Duration("timeout", 10*time.Second, "wall-clock limit (0 for none)")
	grace := fs.Duration("grace", runtime.DefaultGrace, "time between SIGTERM and SIGKILL")
	cpu := fs.Duration("cpu", 0, "CPU-time limit, e.g. 5s")
	var mem, fsize, outCap execSize
	fs.Var(&mem, "mem", "memory limit (data per process, RSS of the whole tree), e.g. 512MB")
	fs.Var(&fsize, "fsize", "largest file the program may write, e.g. 10MB")
	fs.Var(&outCap, "cap", "bytes of each output stream kept (default 4MB)")
	procs := fs.Int("procs", 0, "most processes in the tree")
	noNet := fs.Bool("no-net", false, "run without network access (reported when impossible)")
	confine := fs.Bool("confine", true, "filesystem read-only outside the working folder, private /tmp (reported when impossible); --confine=false to turn off")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the output and a summary")
	dir := fs.String("dir", "", "working directory; the run is recorded in its project history")
	noRecord := fs.Bool("no-record", false, "do not record the run in the project history")
	stdinPath := fs.String("stdin", "", "file to feed on standard input ('-' for this process's stdin)")
	dotenv := fs.String("dotenv", "", "a .env file to load (relative to --dir)")
	var envs, drops execMulti
	fs.Var(&envs, "env", "extra KEY=VALUE (repeatable)")
	fs.Var(&drops, "drop-env", "inherited variable not to pass on (repeatable)")
	sample := fs.Duration("sample", runtime.DefaultSampleEvery, "metrics sampling period")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: codeloom exec [flags] -- CMD ARGS...")
		fs.PrintDefaults()
		fmt.Fprintln(env.Stderr, "exit status: the program's own; 128+N if killed by signal N; 124 timeout, 125 memory,\n126 procs, 123 cpu, 122 file size, 127 not started, 130 interrupted")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	command := fs.Args()
	if len(command) == 0 {
		fmt.Fprintln(env.Stderr, "codeloom exec: no command given (usage: codeloom exec [flags] -- CMD ARGS...)")
		return ExitUsage
	}
	if *procs < 0 || *cpu < 0 {
		fmt.Fprintln(env.Stderr, "codeloom exec: --procs and --cpu must not be negative")
		return ExitUsage
	}
	if *dir != "" {
		if code := checkDir(env, "exec", *dir); code != ExitOK {
			return code
		}
	}
	spec := runtime.Spec{
		Command: command, Dir: *dir, Env: envs, DropEnv: drops, DotEnv: *dotenv,
		Timeout: *timeout, Grace: *grace, OutputCap: int64(outCap), NoNetwork: *noNet, Confine: *confine,
		SampleEvery: *sample, Origin: "exec",
		Limits: runtime.Limits{CPUTime: *cpu, Memory: int64(mem), Procs: *procs, FileSize: int64(fsize)},
	}
	if *timeout == 0 {
		spec.Timeout = -1
	}
	switch *stdinPath {
	case "":
	case "-":
		// Streamed, never read to the end first: a stdin that never
		// closes must not keep the run from its timeout or a signal.
		spec.StdinReader = env.Stdin
	default:
		b, err := os.ReadFile(*stdinPath)
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom exec: --stdin: %v\n", err)
			return ExitUsage
		}
		spec.Stdin = b
	}
	if !*asJSON {
		var mu sync.Mutex
		spec.OnOutput = func(s runtime.Stream, b []byte) {
			mu.Lock()
			defer mu.Unlock()
			if s == runtime.Stdout {
				env.Stdout.Write(b)
			} else {
				env.Stderr.Write(b)
			}
		}
	}
	var st *memory.Store
	if *dir != "" && !*noRecord {
		var err error
		if st, err = memory.OpenProject(*dir); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom exec: not recording (history unavailable: %v)\n", err)
		} else {
			defer st.Close()
		}
	}
	res, err := runtime.New().Run(ctx, spec)
	if st != nil {
		if rerr := st.RecordRun(runtime.NewRecord(spec, res, err)); rerr != nil {
			fmt.Fprintf(env.Stderr, "codeloom exec: not recorded: %v\n", rerr)
		}
	}
	if err != nil {
		if *asJSON {
			writeJSONValue(env.Stdout, map[string]string{"error": err.Error()})
		}
		fmt.Fprintf(env.Stderr, "codeloom exec: %v\n", err)
		if errors.Is(err, runtime.ErrNoCommand) {
			return ExitUsage
		}
		return ExitExecNotRun
	}
	if *asJSON {
		if err := writeJSONValue(env.Stdout, execJSON(res)); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom exec: %v\n", err)
			return ExitFailure
		}
	} else {
		fmt.Fprintln(env.Stderr, execSummary(res))
	}
	return execExitStatus(res)
}

// execExitStatus is the exit status of `codeloom exec` for a finished run.
func execExitStatus(res runtime.Result) int {
	if res.Canceled {
		return ExitExecCanceled
	}
	if code, ok := execLimitExit[res.Limit]; ok {
		return code
	}
	if res.Signal != "" {
		if n := execSignalNumber(res.Signal); n > 0 {
			return 128 + n
		}
		return ExitFailure
	}
	return res.ExitCode
}

// execSignalNumber maps the common signal names to their (Linux and macOS
// agree on these) numbers.
func execSignalNumber(name string) int {
	return map[string]int{"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGTRAP": 5, "SIGABRT": 6,
		"SIGFPE": 8, "SIGKILL": 9, "SIGSEGV": 11, "SIGPIPE": 13, "SIGALRM": 14, "SIGTERM": 15}[name]
}

// execHumanBytes formats a byte count.
func execHumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// execSummary is the one-line human summary of a run.
func execSummary(res runtime.Result) string {
	var b strings.Builder
	b.WriteString("codeloom: ")
	if res.Signal != "" {
		fmt.Fprintf(&b, "killed by %s", res.Signal)
	} else {
		fmt.Fprintf(&b, "exit %d", res.ExitCode)
	}
	if res.Limit != "" {
		fmt.Fprintf(&b, " (%s limit)", res.Limit)
	}
	if res.Canceled {
		b.WriteString(" (interrupted)")
	}
	fmt.Fprintf(&b, " · wall %s · cpu %s user + %s sys · peak RSS %s · stdout %s · stderr %s",
		res.Wall.Round(time.Millisecond), res.CPUUser.Round(time.Millisecond), res.CPUSys.Round(time.Millisecond),
		execHumanBytes(res.PeakRSS), execHumanBytes(res.StdoutBytes), execHumanBytes(res.StderrBytes))
	if res.Truncated {
		b.WriteString(" (output truncated)")
	}
	if res.Confined {
		b.WriteString(" · filesystem confined")
	} else if res.ConfineNote != "" {
		b.WriteString(" · " + res.ConfineNote)
	}
	if res.NetworkIsolated {
		b.WriteString(" · network isolated")
	} else if res.NetworkNote != "" {
		b.WriteString(" · " + res.NetworkNote)
	}
	for _, n := range res.LimitNotes {
		b.WriteString(" · " + n)
	}
	return b.String()
}

// execResultJSON is the --json shape: durations in milliseconds, outputs as
// text (base64 in *_base64 when not valid UTF-8).
type execResultJSON struct {
	Command         []string         `json:"command"`
	Dir             string           `json:"dir,omitempty"`
	ExitCode        int              `json:"exit_code"`
	Signal          string           `json:"signal,omitempty"`
	Limit           string           `json:"limit,omitempty"`
	TimedOut        bool             `json:"timed_out"`
	Canceled        bool             `json:"canceled"`
	Started         time.Time        `json:"started"`
	WallMS          float64          `json:"wall_ms"`
	CPUUserMS       float64          `json:"cpu_user_ms"`
	CPUSysMS        float64          `json:"cpu_sys_ms"`
	PeakRSS         int64            `json:"peak_rss_bytes"`
	StdoutBytes     int64            `json:"stdout_bytes"`
	StderrBytes     int64            `json:"stderr_bytes"`
	Truncated       bool             `json:"truncated"`
	Stdout          string           `json:"stdout"`
	Stderr          string           `json:"stderr"`
	StdoutBase64    []byte           `json:"stdout_base64,omitempty"`
	StderrBase64    []byte           `json:"stderr_base64,omitempty"`
	NetworkIsolated bool             `json:"network_isolated"`
	NetworkNote     string           `json:"network_note,omitempty"`
	Confined        bool             `json:"confined"`
	ConfineNote     string           `json:"confine_note,omitempty"`
	LimitNotes      []string         `json:"limit_notes,omitempty"`
	Samples         []execSampleJSON `json:"samples"`
}

type execSampleJSON struct {
	AtMS       float64 `json:"at_ms"`
	CPUPercent float64 `json:"cpu_percent"`
	RSS        int64   `json:"rss_bytes"`
	Procs      int     `json:"procs"`
}

func execMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func execJSON(res runtime.Result) execResultJSON {
	j := execResultJSON{
		Command: res.Command, Dir: res.Dir, ExitCode: res.ExitCode, Signal: res.Signal, Limit: res.Limit,
		TimedOut: res.TimedOut, Canceled: res.Canceled, Started: res.Started,
		WallMS: execMS(res.Wall), CPUUserMS: execMS(res.CPUUser), CPUSysMS: execMS(res.CPUSys),
		PeakRSS: res.PeakRSS, StdoutBytes: res.StdoutBytes, StderrBytes: res.StderrBytes, Truncated: res.Truncated,
		Stdout: strings.ToValidUTF8(string(res.Stdout), "\uFFFD"), Stderr: strings.ToValidUTF8(string(res.Stderr), "\uFFFD"),
		NetworkIsolated: res.NetworkIsolated, NetworkNote: res.NetworkNote, LimitNotes: res.LimitNotes,
		Confined: res.Confined, ConfineNote: res.ConfineNote,
		Samples: []execSampleJSON{},
	}
	if !utf8.Valid(res.Stdout) {
		j.StdoutBase64 = res.Stdout
	}
	if !utf8.Valid(res.Stderr) {
		j.StderrBase64 = res.Stderr
	}
	for _, s := range res.Samples {
		j.Samples = append(j.Samples, execSampleJSON{AtMS: execMS(s.At), CPUPercent: s.CPUPercent, RSS: s.RSS, Procs: s.Procs})
	}
	return j
}
