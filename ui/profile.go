package ui

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Profiling the launch path: CODELOOM_CPUPROFILE=FILE writes a CPU profile
// of the first CODELOOM_CPUPROFILE_SECONDS seconds (default 20) after the
// window opens; read it with `go tool pprof BIN FILE`.
const (
	envCPUProfile        = "CODELOOM_CPUPROFILE"
	envCPUProfileSeconds = "CODELOOM_CPUPROFILE_SECONDS"
)

// startProfileFromEnv starts the CPU profile the environment asks for, if
// any; it stops by itself after the configured time or when the returned
// function is called (the window closes).
func startProfileFromEnv() (stop func()) {
	stop = func() {}
	file := os.Getenv(envCPUProfile)
	if file == "" {
		return stop
	}
	secs := 20.0
	if s := os.Getenv(envCPUProfileSeconds); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 {
			slog.Warn("ignoring "+envCPUProfileSeconds, "value", s)
		} else {
			secs = v
		}
	}
	ch := make(chan struct{})
	done := make(chan struct{})
	if err := startCPUProfile(file, time.Duration(secs*float64(time.Second)), ch, done); err != nil {
		slog.Warn("CPU profile not written", "err", err)
		return stop
	}
	var once sync.Once
	return func() {
		once.Do(func() { close(ch) })
		<-done
	}
}

func startCPUProfile(file string, d time.Duration, stop <-chan struct{}, done chan<- struct{}) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("cpu profile %s: %w", file, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("cpu profile %s: %w", file, err)
	}
	slog.Info("CPU profile started", "file", file, "for", d)
	// The app is usually ended by a signal (the benchmark's terminate):
	// write the profile then too.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer close(done)
		defer signal.Stop(sig)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-stop:
		case <-sig:
		}
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			slog.Warn("cpu profile", "file", file, "err", err)
			return
		}
		slog.Info("CPU profile written", "file", file)
	}()
	return nil
}
