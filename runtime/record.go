package runtime

import "time"

// RunRecord is the storable account of a finished run: what ran, how it
// ended, its metrics and its (clipped) output. The runtime builds it
// (NewRecord); callers persist it wherever they keep history.
type RunRecord struct {
	Start       time.Time
	Origin      string // "exec", "test", "gate:tests", …
	Command     []string
	Dir         string
	ExitCode    int
	Signal      string
	Limit       string // which limit ended it, if any
	TimedOut    bool
	Err         string // why the run could not start, if it did not
	Wall        time.Duration
	CPUUser     time.Duration
	CPUSys      time.Duration
	PeakRSS     int64
	StdoutBytes int64
	StderrBytes int64
	Stdout      string // at most recordedOutputCap bytes
	Stderr      string
	Truncated   bool
	Samples     []Sample // thinned to at most recordedSamples
	// Confined says whether the filesystem was confined (see Spec.Confine).
	Confined bool
}

// Recorder stores finished runs. The runtime knows nothing of the store
// behind it: it hands over a RunRecord and logs a failure to keep it.
type Recorder interface {
	RecordRun(RunRecord) error
}

// recordedOutputCap bounds the output kept in a record per stream, and
// recordedSamples the number of samples.
const (
	recordedOutputCap = 256 << 10
	recordedSamples   = 600
)

// NewRecord builds the record of a run of spec that produced res, or failed
// to start with err.
func NewRecord(spec Spec, res Result, err error) RunRecord {
	cmd := res.Command
	if len(cmd) == 0 {
		cmd = spec.Command
	}
	rec := RunRecord{
		Start: res.Started, Origin: spec.Origin, Command: cmd, Dir: spec.Dir,
		ExitCode: res.ExitCode, Signal: res.Signal, Limit: res.Limit, TimedOut: res.TimedOut,
		Wall: res.Wall, CPUUser: res.CPUUser, CPUSys: res.CPUSys, PeakRSS: res.PeakRSS,
		StdoutBytes: res.StdoutBytes, StderrBytes: res.StderrBytes, Truncated: res.Truncated,
		Confined: res.Confined,
	}
	if rec.Origin == "" {
		rec.Origin = "run"
	}
	if rec.Start.IsZero() {
		rec.Start = time.Now()
	}
	if err != nil {
		rec.Err = err.Error()
		rec.ExitCode = -1
	}
	out, tr1 := clip(res.Stdout, recordedOutputCap)
	errOut, tr2 := clip(res.Stderr, recordedOutputCap)
	rec.Stdout, rec.Stderr = string(out), string(errOut)
	rec.Truncated = rec.Truncated || tr1 || tr2
	// Long runs are thinned evenly to bound the record's size.
	step := max(1, (len(res.Samples)+recordedSamples-1)/recordedSamples)
	for i := 0; i < len(res.Samples); i += step {
		rec.Samples = append(rec.Samples, res.Samples[i])
	}
	return rec
}

func clip(b []byte, n int) ([]byte, bool) {
	if len(b) <= n {
		return b, false
	}
	return b[:n], true
}
