package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"codeloom/app/memory"
	"codeloom/assets"
)

func execCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), Env{Stdin: strings.NewReader("piped input"), Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestExecExitStatuses(t *testing.T) {
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"exec", "--", "sh", "-c", "exit 3"}, 3},
		{[]string{"exec", "--timeout", "200ms", "--grace", "100ms", "--", "sleep", "10"}, ExitExecTimeout},
		{[]string{"exec", "--", "sh", "-c", "kill -SEGV $$"}, 128 + 11},
		{[]string{"exec", "--", "no-such-program-codeloom"}, ExitExecNotRun},
		{[]string{"exec"}, ExitUsage},
		{[]string{"exec", "-h"}, ExitOK},
		{[]string{"test", "-h"}, ExitOK},
		{[]string{"exec", "--mem", "lots", "--", "true"}, ExitUsage},
		{[]string{"exec", "--mem", "inf", "--", "true"}, ExitUsage},
		{[]string{"exec", "--fsize", "NaN", "--", "true"}, ExitUsage},
		{[]string{"exec", "--cap", "99999999T", "--", "true"}, ExitUsage},
		{[]string{"exec", "--dir", "/no/such/dir", "--", "true"}, ExitUsage},
	}
	if _, err := exec.LookPath("python3"); err == nil {
		cases = append(cases, struct {
			args []string
			want int
		}{[]string{"exec", "--mem", "128MB", "--", "python3", "-c", "b = bytearray(1 << 30)"}, ExitExecMemory})
	}
	for _, c := range cases {
		if code, _, stderr := execCLI(t, c.args...); code != c.want {
			t.Errorf("%v: exit %d, want %d\n%s", c.args, code, c.want, stderr)
		}
	}
}

func TestExecStreamsAndSummarises(t *testing.T) {
	code, out, errOut := execCLI(t, "exec", "--stdin", "-", "--", "sh", "-c", "cat; echo; echo warn >&2")
	if code != 0 || out != "piped input\n" || !strings.Contains(errOut, "warn\n") || !strings.Contains(errOut, "codeloom: exit 0") {
		t.Fatalf("code %d out %q err %q", code, out, errOut)
	}
}

func TestExecJSONAndHistory(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := execCLI(t, "exec", "--json", "--dir", dir, "--no-net", "--", "printf", `\377ok`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var j map[string]any
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"exit_code", "wall_ms", "cpu_user_ms", "cpu_sys_ms", "peak_rss_bytes", "stdout_bytes", "stdout", "stdout_base64", "network_isolated", "samples"} {
		if _, ok := j[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if j["stdout_base64"] != "/29r" {
		t.Errorf("stdout_base64 %v", j["stdout_base64"])
	}
	st, err := memory.OpenProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(5)
	if err != nil || len(runs) != 1 || runs[0].Origin != "exec" {
		t.Fatalf("history %+v %v", runs, err)
	}
}

func TestTestCommandOnSample(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	dir, err := assets.ExtractSample(filepath.Join(t.TempDir(), "sample"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := execCLI(t, "test", dir, "--json")
	if code != ExitFailure {
		t.Fatalf("exit %d (the sample has a failing test)\n%s\n%s", code, out, errOut)
	}
	var rep struct {
		Framework      string
		Passed, Failed int
		Parsed         bool
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !rep.Parsed || rep.Failed < 1 || rep.Passed < 1 {
		t.Fatalf("report %+v", rep)
	}
	code, out, _ = execCLI(t, "test", "--quiet", dir)
	if code != ExitFailure || !strings.Contains(out, "failed") {
		t.Fatalf("human: exit %d %q", code, out)
	}
	if code, _, _ := execCLI(t, "test", filepath.Join(dir, "missing")); code != ExitUsage {
		t.Fatalf("missing folder: exit %d", code)
	}
	if code, _, _ := execCLI(t, "test"); code != ExitUsage {
		t.Fatalf("no folder: exit %d", code)
	}
}
