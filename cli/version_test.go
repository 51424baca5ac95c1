package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	toml, err := os.ReadFile("../FyneApp.toml")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Run(context.Background(), Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, AppTOML: toml}, args)
	return out.String(), errb.String(), code
}

// The headless binary's version (AppVersion) is FyneApp.toml's.
func TestAppVersionIsFyneApps(t *testing.T) {
	toml, err := os.ReadFile("../FyneApp.toml")
	if err != nil {
		t.Fatal(err)
	}
	if v := appVersion(toml); v != AppVersion {
		t.Fatalf("FyneApp.toml says version %q, cli.AppVersion %q: change both", v, AppVersion)
	}
	if got, want := Version(nil), Version(toml); got != want {
		t.Fatalf("Version(nil) = %q, Version(FyneApp.toml) = %q", got, want)
	}
}

func TestVersionExitsZeroOnStdout(t *testing.T) {
	for _, arg := range []string{"--version", "version", "-version"} {
		if !IsCommand(arg) {
			t.Fatalf("%s is not dispatched to the CLI", arg)
		}
		out, errOut, code := runCLI(t, arg)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "codeloom 0.") || !strings.Contains(out, "go1.") {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", arg, code, out, errOut)
		}
	}
}

func TestHelpExitsZeroOnStdoutWithDoubleDashes(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "help", "-help"} {
		if !IsCommand(arg) {
			t.Fatalf("%s is not dispatched to the CLI", arg)
		}
		out, errOut, code := runCLI(t, arg)
		if code != 0 || errOut != "" || !strings.Contains(out, "usage: codeloom") || !strings.Contains(out, "version") {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", arg, code, out, errOut)
		}
	}
	out, _, code := runCLI(t, "help", "history")
	if code != 0 || !strings.Contains(out, "  --json") || strings.Contains(out, "\n  -json") {
		t.Fatalf("help history: exit %d\n%s", code, out)
	}
	_, errOut, code := runCLI(t, "history", "--help")
	if code != 0 || !strings.Contains(errOut, "  --limit int") {
		t.Fatalf("history --help: exit %d\n%s", code, errOut)
	}
	if _, _, code := runCLI(t, "help", "nosuch"); code != ExitUsage {
		t.Fatalf("help nosuch: exit %d", code)
	}
	// Both spellings still parse.
	dir := t.TempDir()
	for _, f := range []string{"--json", "-json"} {
		if _, errOut, code := runCLI(t, "history", dir, f); code != 0 {
			t.Fatalf("history %s: exit %d: %s", f, code, errOut)
		}
	}
}

func TestAppVersionReadsDetails(t *testing.T) {
	toml := []byte("Website = \"x\"\n[Other]\nVersion = \"9\"\n[Details]\nName = \"CodeLoom\"\nVersion = \"1.2.3\"\nBuild = 4\n")
	if v := appVersion(toml); v != "1.2.3" {
		t.Fatalf("appVersion = %q", v)
	}
	if v := Version([]byte("[Details]\nName = \"CodeLoom\"\n")); !strings.HasPrefix(v, "codeloom unknown") {
		t.Fatalf("Version of a FyneApp.toml without a version = %q", v)
	}
}

func TestDashWriter(t *testing.T) {
	var b bytes.Buffer
	d := &dashWriter{w: &b}
	d.Write([]byte("usage: x\n  -json\n    \tas JSON\n  -lim"))
	d.Write([]byte("it int\n  --already\n"))
	d.flush()
	want := "usage: x\n  --json\n    \tas JSON\n  --limit int\n  --already\n"
	if b.String() != want {
		t.Fatalf("got %q", b.String())
	}
}

// The AppStream metainfo's newest release is the app's version.
func TestMetainfoReleaseMatchesAppVersion(t *testing.T) {
	toml, err := os.ReadFile("../FyneApp.toml")
	if err != nil {
		t.Fatal(err)
	}
	xml, err := os.ReadFile("../packaging/dev.codeloom.app.metainfo.xml")
	if err != nil {
		t.Fatal(err)
	}
	want := `<release version="` + appVersion(toml) + `"`
	if !strings.Contains(string(xml), want) {
		t.Fatalf("metainfo has no %s", want)
	}
	if !strings.Contains(string(xml), "<id>dev.codeloom.app</id>") || !strings.Contains(string(toml), `ID = "dev.codeloom.app"`) {
		t.Fatal("metainfo id and FyneApp.toml ID differ")
	}
}

// The metainfo is valid AppStream (checked when appstreamcli is installed).
func TestMetainfoValidates(t *testing.T) {
	tool, err := exec.LookPath("appstreamcli")
	if err != nil {
		t.Skip("appstreamcli not installed (Debian: apt-get install appstream)")
	}
	out, err := exec.Command(tool, "validate", "--no-net", "../packaging/dev.codeloom.app.metainfo.xml").CombinedOutput()
	if err != nil {
		t.Fatalf("appstreamcli validate: %v\n%s", err, out)
	}
}
