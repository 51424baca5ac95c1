package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"codeloom/assets"
)

func countLines(fw string, lines ...string) [5]int {
	c := newTestCounter(fw)
	for _, l := range lines {
		c.feed(Stdout, []byte(l+"\n"))
	}
	c.finish()
	p, f, s, e, ok := c.counts()
	parsed := 0
	if ok {
		parsed = 1
	}
	return [5]int{p, f, s, e, parsed}
}

func TestParseCounts(t *testing.T) {
	cases := []struct {
		name, fw string
		lines    []string
		want     [5]int
	}{
		{"pytest -q", FrameworkPytest, []string{"..F.s", "1 failed, 3 passed, 1 skipped in 0.12s"}, [5]int{3, 1, 1, 0, 1}},
		{"pytest framed", FrameworkPytest, []string{"==== 2 passed, 1 error, 1 xfailed in 1.01s ===="}, [5]int{2, 0, 1, 1, 1}},
		{"pytest no summary", FrameworkPytest, []string{"ImportError: boom"}, [5]int{0, 0, 0, 0, 0}},
		{"unittest ok", FrameworkUnittest, []string{"Ran 5 tests in 0.003s", "", "OK (skipped=1)"}, [5]int{4, 0, 1, 0, 1}},
		{"unittest failed", FrameworkUnittest, []string{"Ran 7 tests in 0.1s", "FAILED (failures=2, errors=1)"}, [5]int{4, 2, 0, 1, 1}},
		{"jest", FrameworkNpm, []string{"Tests:       1 failed, 1 skipped, 3 passed, 5 total"}, [5]int{3, 1, 1, 0, 1}},
		{"mocha", FrameworkNpm, []string{"  3 passing (12ms)", "  1 pending", "  2 failing"}, [5]int{3, 2, 1, 0, 1}},
		{"node test", FrameworkNpm, []string{"# tests 4", "# pass 3", "# fail 1", "# skipped 0"}, [5]int{3, 1, 0, 0, 1}},
		{"vitest", FrameworkNpm, []string{"      Tests  1 failed | 4 passed (5)"}, [5]int{4, 1, 0, 0, 1}},
		{"go json", FrameworkGo, []string{
			`{"Action":"run","Package":"p","Test":"TestA"}`,
			`{"Action":"pass","Package":"p","Test":"TestA"}`,
			`{"Action":"fail","Package":"p","Test":"TestB"}`,
			`{"Action":"skip","Package":"p","Test":"TestC"}`,
			`{"Action":"fail","Package":"p"}`,
			`{"Action":"fail","Package":"q"}`,
			"not json at all",
		}, [5]int{1, 1, 1, 1, 1}},
	}
	for _, c := range cases {
		if got := countLines(c.fw, c.lines...); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestCounterHandlesSplitChunks(t *testing.T) {
	c := newTestCounter(FrameworkUnittest)
	text := "Ran 3 tests in 0.01s\n\nFAILED (failures=1)\n"
	for i := 0; i < len(text); i++ {
		c.feed(Stderr, []byte{text[i]})
	}
	c.finish()
	if p, f, _, _, ok := c.counts(); p != 2 || f != 1 || !ok {
		t.Fatalf("got %d passed %d failed parsed %v", p, f, ok)
	}
}

func TestRunTestsOnSampleProject(t *testing.T) {
	if _, err := FindPython(""); err != nil {
		t.Skip(err)
	}
	dir, err := assets.ExtractSample(filepath.Join(t.TempDir(), "sample"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunTests(context.Background(), New(), dir, TestOptions{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Framework != FrameworkUnittest && rep.Framework != FrameworkPytest {
		t.Fatalf("framework %q", rep.Framework)
	}
	if !rep.Parsed || rep.Failed+rep.Errors < 1 || rep.Passed < 1 || rep.OK() {
		t.Fatalf("report %+v\nstderr:\n%s", rep, rep.Result.Stderr)
	}
	// The run wrote nothing into the project.
	if m, _ := filepath.Glob(filepath.Join(dir, "*", "__pycache__")); len(m) > 0 {
		t.Fatalf("bytecode caches written: %v", m)
	}
}

func TestRunTestsGo(t *testing.T) {
	if _, err := FindGo(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.21\n",
		"m.go":          "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"m_test.go":     "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) { if Add(1, 2) != 3 { t.Fatal() } }\nfunc TestBad(t *testing.T) { if Add(1, 1) != 3 { t.Fatal(\"1+1\") } }\nfunc TestSkip(t *testing.T) { t.Skip() }\n",
		"sub/s.go":      "package sub\n\nfunc Broken() int { return \"x\" }\n",
		"sub/s_test.go": "package sub\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := RunTests(context.Background(), New(), dir, TestOptions{Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Framework != FrameworkGo || rep.Passed != 1 || rep.Failed != 1 || rep.Skipped != 1 || rep.Errors != 1 {
		t.Fatalf("report %d/%d/%d/%d parsed %v\n%s\n%s", rep.Passed, rep.Failed, rep.Skipped, rep.Errors, rep.Parsed, rep.Result.Stdout, rep.Result.Stderr)
	}
}

func TestRunTestsBadInput(t *testing.T) {
	if _, err := RunTests(context.Background(), New(), "/no/such/dir", TestOptions{}); err == nil {
		t.Fatal("missing dir accepted")
	}
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("hi"), 0o644)
	if _, err := RunTests(context.Background(), New(), empty, TestOptions{}); err == nil || !strings.Contains(err.Error(), "no tests found") {
		t.Fatalf("empty dir: %v", err)
	}
	if _, err := RunTests(context.Background(), New(), empty, TestOptions{Framework: "cobol"}); err == nil {
		t.Fatal("unknown framework accepted")
	}
}

func TestWorkspace(t *testing.T) {
	src := t.TempDir()
	write := func(root, rel, body string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(src, "a.py", "x = 1\ny = 2\n")
	write(src, "pkg/b.py", "def f():\n    return 1\n")
	write(src, "gone.txt", "bye\n")
	write(src, "skip.log", "not copied\n")
	write(src, ".git/HEAD", "ref\n")
	write(src, ".venv/bin/python", "#!/bin/sh\n")
	write(src, "pkg/__pycache__/b.pyc", "\x00\x01")
	write(src, "img.bin", "\x00\x01\x02")
	os.Symlink("a.py", filepath.Join(src, "link.py"))

	ws, err := NewWorkspace(src, func(rel string) bool { return !strings.HasSuffix(rel, ".log") })
	if err != nil {
		t.Fatal(err)
	}
	dir := ws.Dir()
	for _, rel := range []string{".git", "pkg/__pycache__", "skip.log"} {
		if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
			t.Errorf("%s copied", rel)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, ".venv")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf(".venv not linked: %v", err)
	}
	if l, err := os.Readlink(filepath.Join(dir, "link.py")); err != nil || l != "a.py" {
		t.Errorf("symlink %q %v", l, err)
	}
	if d, err := ws.Diff(); err != nil || len(d) != 0 {
		t.Fatalf("fresh workspace diff %v %v", d, err)
	}

	write(dir, "a.py", "x = 1\ny = 3\n")
	write(dir, "new.py", "print('new')\n")
	write(dir, "img.bin", "\x00\x09")
	os.Remove(filepath.Join(dir, "gone.txt"))
	write(dir, "pkg/__pycache__/c.pyc", "cache")

	changes, err := ws.Diff()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]FileChange{}
	for _, c := range changes {
		got[c.Path] = c
	}
	if len(changes) != 4 || got["a.py"].Status != "modified" || got["new.py"].Status != "added" ||
		got["gone.txt"].Status != "deleted" || !got["img.bin"].Binary {
		t.Fatalf("changes %+v", changes)
	}
	if d := got["a.py"].Diff; !strings.Contains(d, "--- a/a.py") || !strings.Contains(d, "-y = 2") || !strings.Contains(d, "+y = 3") {
		t.Fatalf("diff:\n%s", d)
	}
	if !strings.Contains(UnifiedDiff(changes), "+print('new')") {
		t.Fatal("added file missing from the patch")
	}
	if b, _ := os.ReadFile(filepath.Join(src, "a.py")); string(b) != "x = 1\ny = 2\n" {
		t.Fatal("project file changed")
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("workspace not removed")
	}
	if _, err := NewWorkspace(filepath.Join(src, "a.py"), nil); err == nil {
		t.Fatal("file accepted as project")
	}
}

type fakeRecorder struct{ recs []RunRecord }

func (f *fakeRecorder) RecordRun(r RunRecord) error {
	f.recs = append(f.recs, r)
	return nil
}

func TestRunsAreRecorded(t *testing.T) {
	rec := &fakeRecorder{}
	r := New(WithRecorder(rec))
	r.Run(context.Background(), Spec{Command: []string{"sh", "-c", "echo hi; exit 4"}, Origin: "exec", SampleEvery: 20 * time.Millisecond})
	r.Run(context.Background(), Spec{Command: []string{"no-such-program-codeloom"}})
	if len(rec.recs) != 2 {
		t.Fatalf("%d records", len(rec.recs))
	}
	a, b := rec.recs[0], rec.recs[1]
	if a.Origin != "exec" || a.ExitCode != 4 || a.Stdout != "hi\n" || a.Wall <= 0 || a.Start.IsZero() {
		t.Fatalf("record %+v", a)
	}
	if b.Err == "" || b.ExitCode != -1 {
		t.Fatalf("failed start record %+v", b)
	}
}

func TestParseDotEnv(t *testing.T) {
	kv, err := ParseDotEnv([]byte("# x\n\nA=1\nexport B='two words'\nC=\"line\\nnext\"\nD=val # comment\nE=\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"A", "1"}, {"B", "two words"}, {"C", "line\nnext"}, {"D", "val"}, {"E", ""}}
	if len(kv) != len(want) {
		t.Fatalf("got %v", kv)
	}
	for i := range want {
		if kv[i] != want[i] {
			t.Fatalf("entry %d: %v want %v", i, kv[i], want[i])
		}
	}
	for _, bad := range []string{"JUSTAWORD\n", "A=1\nB C=2\n", "Q=\"open\n"} {
		if _, err := ParseDotEnv([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := ParseDotEnv([]byte("A=1\nB C=2\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("error does not name the line: %v", err)
	}
}

func TestWithSamples(t *testing.T) {
	ch := make(chan Sample, 64)
	res, err := New(WithSamples(ch)).Run(context.Background(), Spec{Command: []string{"sleep", "0.3"}, SampleEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) == 0 || len(ch) != len(res.Samples) {
		t.Fatalf("channel got %d samples, result has %d", len(ch), len(res.Samples))
	}
}

func TestRunTestsPytest(t *testing.T) {
	const sysPy = "/usr/bin/python3"
	if !canImport(context.Background(), sysPy, "", "pytest") {
		t.Skip("pytest not importable by " + sysPy + " (Debian package python3-pytest)")
	}
	dir := t.TempDir()
	// The project's own interpreter: a .venv whose python has pytest.
	os.MkdirAll(filepath.Join(dir, ".venv", "bin"), 0o755)
	if err := os.Symlink(sysPy, filepath.Join(dir, ".venv", "bin", "python")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "calc.py"), []byte("def add(a, b):\n    return a + b\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "test_calc.py"), []byte(`import pytest
from calc import add

def test_ok():
    assert add(1, 2) == 3

def test_bad():
    assert add(1, 1) == 3

@pytest.mark.skip(reason="later")
def test_later():
    pass

@pytest.fixture
def broken():
    raise RuntimeError("fixture")

def test_error(broken):
    pass
`), 0o644)
	rep, err := RunTests(context.Background(), New(), dir, TestOptions{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Framework != FrameworkPytest || rep.Passed != 1 || rep.Failed != 1 || rep.Skipped != 1 || rep.Errors != 1 {
		t.Fatalf("report %s %d/%d/%d/%d\n%s", rep.Framework, rep.Passed, rep.Failed, rep.Skipped, rep.Errors, rep.Result.Stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, ".pytest_cache")); err == nil {
		t.Fatal("pytest cache written into the project")
	}
}

func TestRecordThinsSamples(t *testing.T) {
	res := Result{Samples: make([]Sample, 5000), Stdout: make([]byte, 1<<20)}
	rec := NewRecord(Spec{}, res, nil)
	if len(rec.Samples) > recordedSamples || len(rec.Samples) < recordedSamples/2 {
		t.Fatalf("%d samples recorded", len(rec.Samples))
	}
	if len(rec.Stdout) != recordedOutputCap || !rec.Truncated {
		t.Fatalf("stdout %d truncated %v", len(rec.Stdout), rec.Truncated)
	}
}
