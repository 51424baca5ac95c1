package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"codeloom/cli"
)

// The headless binary links none of the desktop app's packages: one import
// of the UI (or of the toolkit or the layout engine) from cli or below would
// bring back their start-up cost and their shared libraries.
func TestLinksNoDesktopPackages(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go") // go test's own toolchain
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 || !strings.Contains(string(out), "codeloom/cli\n") {
		t.Fatalf("go list -deps listed %d packages, without codeloom/cli:\n%s", len(deps), out)
	}
	for _, d := range deps {
		for _, bad := range []string{"fyne.io/", "github.com/goccy/go-graphviz", "codeloom/ui", "codeloom/graphview", "github.com/go-gl/"} {
			if strings.HasPrefix(d, bad) {
				t.Errorf("codeloom-cli links %s", d)
			}
		}
	}
}

func runHeadless(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, args)
	return out.String(), errb.String(), code
}

// Commands run as in the app binary; what would open the app says where
// the app is instead.
func TestRunDispatchesCommandsOnly(t *testing.T) {
	out, errOut, code := runHeadless("--version")
	if code != cli.ExitOK || !strings.HasPrefix(out, "codeloom "+cli.AppVersion) || errOut != "" {
		t.Fatalf("--version: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	dir := t.TempDir()
	out, errOut, code = runHeadless("index", dir, "--no-cache")
	if code != cli.ExitOK || !strings.Contains(out, "indexed ") {
		t.Fatalf("index of an empty folder: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, args := range [][]string{nil, {dir}, {"open", dir}} {
		out, errOut, code := runHeadless(args...)
		if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, "the desktop app is codeloom") || !strings.Contains(errOut, "commands:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
