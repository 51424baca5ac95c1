package memory

import (
	"fmt"

	"codeloom/runtime"
)

// RunFromRuntime converts the runtime's record of a finished run into the
// stored form.
func RunFromRuntime(r runtime.RunRecord) RunRecord {
	rec := RunRecord{
		Start: r.Start, Origin: r.Origin, Command: r.Command, Dir: r.Dir,
		ExitCode: r.ExitCode, Signal: r.Signal, Limit: r.Limit, TimedOut: r.TimedOut, Err: r.Err,
		Wall: r.Wall, CPUUser: r.CPUUser, CPUSys: r.CPUSys, PeakRSS: r.PeakRSS,
		StdoutBytes: r.StdoutBytes, StderrBytes: r.StderrBytes, Stdout: r.Stdout, Stderr: r.Stderr,
		Truncated: r.Truncated,
	}
	for _, s := range r.Samples {
		rec.Samples = append(rec.Samples, Sample{At: s.At, CPUPercent: s.CPUPercent, RSS: s.RSS})
	}
	return rec
}

// RecordRun stores a run handed over by the runtime (it makes *Store a
// runtime.Recorder).
func (s *Store) RecordRun(r runtime.RunRecord) error {
	if _, err := s.AddRun(RunFromRuntime(r)); err != nil {
		return fmt.Errorf("record run: %w", err)
	}
	return nil
}
