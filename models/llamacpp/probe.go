package llamacpp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// llama.cpp stops the whole process (abort) on some malformed model files
// instead of returning an error. A probe loads the model once in a child
// process first, so such a file costs a failed child, not the app.

// probeArg is the first argument of a probe child. Programs without the
// MaybeProbe hook treat it as an unknown command or folder and exit quickly.
const probeArg = "__codeloom_llamacpp_probe__"

// Markers a probe child prints: before loading, and after success.
const (
	probeStart = "codeloom-probe-start"
	probeOK    = "codeloom-probe-ok"
)

// ErrProbeUnsupported is returned by Probe when the executable has no
// MaybeProbe hook.
var ErrProbeUnsupported = errors.New("executable does not support model probes")

// MaybeProbe turns this process into a model probe when it was started as
// one by Probe, and then exits; otherwise it returns at once. Call it first
// thing in main (and in TestMain of tests that probe).
func MaybeProbe() {
	if len(os.Args) < 3 || os.Args[1] != probeArg {
		return
	}
	fmt.Println(probeStart)
	os.Stdout.Sync()
	if err := probeLoad(os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Println(probeOK)
	os.Exit(0)
}

// Probe loads the model at path in a child process running exe (this
// executable when ""), which must call MaybeProbe. It returns nil when the
// model loads, an error with the child's exit status or signal and the end
// of its log when it does not, or ErrProbeUnsupported.
func Probe(ctx context.Context, exe, path string) error {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("probe %s: %w", path, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, probeArg, path)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "CODELOOM_PROBE=1")
	err := cmd.Run()
	if err == nil && strings.Contains(out.String(), probeOK) {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("probe %s: %w", path, ctx.Err())
	}
	if !strings.Contains(out.String(), probeStart) {
		return fmt.Errorf("probe %s with %s: %w", path, exe, ErrProbeUnsupported)
	}
	if err == nil {
		err = errors.New("no success marker")
	}
	return fmt.Errorf("llama.cpp cannot load %s (%v): %s", path, err, probeReason(errb.String()))
}

// probeReason picks the telling line of a failed probe's log: llama.cpp's
// assertion or error message, and whether the process was killed by a signal.
func probeReason(log string) string {
	var reason, signal string
	for _, l := range strings.Split(log, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
		case strings.HasPrefix(l, "SIG") && signal == "":
			signal = strings.TrimSuffix(strings.Fields(l)[0], ":")
		case reason == "" && (strings.Contains(l, "GGML_ASSERT") || strings.Contains(strings.ToLower(l), "error") || strings.Contains(l, "failed")):
			reason = l
		}
	}
	if reason == "" {
		reason = "no message"
	}
	if signal != "" {
		reason += " (process killed by " + signal + ")"
	}
	return reason
}
