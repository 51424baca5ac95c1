package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

// AppVersion is the app version, FyneApp.toml's [Details] Version, for a
// binary that does not embed that file (cmd/codeloom-cli); a test keeps
// the two equal.
const AppVersion = "0.1.0"

// Version describes this build: the app version from FyneApp.toml (given as
// its contents; AppVersion when nil) and the source revision Go stamped into
// the binary (vcs.revision, "+dirty" when the tree had uncommitted changes).
func Version(fyneAppTOML []byte) string {
	v := AppVersion
	if fyneAppTOML != nil {
		v = appVersion(fyneAppTOML)
	}
	if v == "" {
		v = "unknown"
	}
	out := "codeloom " + v
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	var rev, when, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		out += " (" + rev + dirty
		if when != "" {
			out += ", " + when
		}
		out += ")"
	}
	return out + ", " + info.GoVersion
}

// appVersion reads Version under [Details] of FyneApp.toml.
func appVersion(toml []byte) string {
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(toml))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[]")
			continue
		}
		k, val, ok := strings.Cut(line, "=")
		if ok && section == "Details" && strings.TrimSpace(k) == "Version" {
			return strings.Trim(strings.TrimSpace(val), `"`)
		}
	}
	return ""
}

// runVersion implements `codeloom version` (and --version).
func runVersion(_ context.Context, env Env, args []string) int {
	if len(args) != 0 {
		fmt.Fprintln(env.Stderr, "usage: codeloom version")
		return ExitUsage
	}
	fmt.Fprintln(env.Stdout, Version(env.AppTOML))
	return ExitOK
}

// runHelp implements `codeloom help [COMMAND]` (and --help, -h): the usage,
// or a command's flags, on standard output.
func runHelp(ctx context.Context, env Env, args []string) int {
	if len(args) == 0 {
		Usage(env.Stdout)
		return ExitOK
	}
	cmd, ok := commands()[args[0]]
	if !ok || args[0] == "help" {
		fmt.Fprintf(env.Stderr, "codeloom help: unknown command %q\n", args[0])
		Usage(env.Stderr)
		return ExitUsage
	}
	// A command prints its flags on its error output; here they are the answer.
	env.Stderr = env.Stdout
	cmd.run(ctx, env, []string{"-h"})
	return ExitOK
}

// dashWriter turns the single-dash flag names Go's flag package prints
// ("  -json", "-limit int") into the double-dash form users type; both
// forms are accepted.
type dashWriter struct {
	w   interface{ Write([]byte) (int, error) }
	buf []byte
}

func (d *dashWriter) Write(p []byte) (int, error) {
	d.buf = append(d.buf, p...)
	for {
		i := bytes.IndexByte(d.buf, '\n')
		if i < 0 {
			break
		}
		line := d.buf[:i+1]
		if t := bytes.TrimLeft(line, " "); len(t) > 1 && t[0] == '-' && t[1] != '-' && len(line)-len(t) == 2 {
			line = append(append(append([]byte{}, line[:2]...), '-'), t...)
		}
		if _, err := d.w.Write(line); err != nil {
			return len(p), err
		}
		d.buf = d.buf[i+1:]
	}
	return len(p), nil
}

// flush writes a last unterminated line.
func (d *dashWriter) flush() {
	if len(d.buf) > 0 {
		d.w.Write(d.buf)
		d.buf = nil
	}
}
