package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Test frameworks RunTests knows.
const (
	FrameworkPytest   = "pytest"
	FrameworkUnittest = "unittest"
	FrameworkGo       = "go"
	FrameworkNpm      = "npm"
)

// ErrNoTests is returned when a folder has no test setup RunTests recognises.
var ErrNoTests = errors.New("no tests found")

// TestOptions tunes RunTests. The zero value is usable.
type TestOptions struct {
	// Framework forces one of the Framework* names instead of detection.
	Framework string
	// Timeout of the whole test run (10 minutes when zero).
	Timeout time.Duration
	// Limits bound the test processes.
	Limits Limits
	// NoNetwork runs the tests without network access.
	NoNetwork bool
	// Unconfined turns off the filesystem confinement test runs get by
	// default (see Spec.Confine): tests are generated or changed code.
	// The toolchain's caches (Go's build and module caches, npm's) stay
	// writable.
	Unconfined bool
	// Origin labels the run in history ("test" when empty).
	Origin string
	// OnOutput and OnSample stream the run live, as in Spec.
	OnOutput func(Stream, []byte)
	OnSample func(Sample)
}

// TestReport is the outcome of a project's test run.
type TestReport struct {
	Framework string   `json:"framework"`
	Command   []string `json:"command"`
	Passed    int      `json:"passed"`
	Failed    int      `json:"failed"`
	Skipped   int      `json:"skipped"`
	Errors    int      `json:"errors"`
	// Parsed is false when no counts could be read from the output (the
	// runner crashed before reporting, or printed an unknown format).
	Parsed bool   `json:"parsed"`
	Result Result `json:"result"`
	// Record is the run's record for history, nil when nothing ran.
	Record *RunRecord `json:"-"`
}

// OK reports whether the tests ran and none failed.
func (t TestReport) OK() bool {
	return t.Parsed && t.Failed == 0 && t.Errors == 0 && t.Result.OK()
}

// DetectFramework names the test framework of projectDir and the command
// that runs it: go test for go.mod, npm test for a package.json with a test
// script, pytest when the project's Python can import it, else unittest.
func DetectFramework(ctx context.Context, projectDir string) (string, []string, error) {
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(projectDir, rel))
		return err == nil
	}
	if exists("go.mod") {
		return commandFor(ctx, FrameworkGo, projectDir)
	}
	if exists("package.json") && hasNpmTestScript(filepath.Join(projectDir, "package.json")) {
		return commandFor(ctx, FrameworkNpm, projectDir)
	}
	if isPythonProject(projectDir) {
		return commandFor(ctx, FrameworkPytest, projectDir)
	}
	return "", nil, fmt.Errorf("%s: %w (looked for go.mod, package.json with a test script, Python files or manifests)", projectDir, ErrNoTests)
}

func hasNpmTestScript(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(b, &pkg) != nil {
		return false
	}
	s := pkg.Scripts["test"]
	return s != "" && !strings.Contains(s, "no test specified")
}

func isPythonProject(dir string) bool {
	for _, m := range []string{"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "pytest.ini", "tox.ini"} {
		if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
			return true
		}
	}
	for _, pat := range []string{"*.py", "*/*.py", "*/*/*.py"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) > 0 {
			return true
		}
	}
	return false
}

// commandFor returns the framework actually used (pytest falls back to
// unittest when not importable) and its command.
func commandFor(ctx context.Context, fw, dir string) (string, []string, error) {
	switch fw {
	case FrameworkGo:
		g, err := FindGo()
		if err != nil {
			return "", nil, err
		}
		return fw, []string{g, "test", "-json", "./..."}, nil
	case FrameworkNpm:
		n, err := FindNpm()
		if err != nil {
			return "", nil, err
		}
		return fw, []string{n, "test"}, nil
	case FrameworkPytest, FrameworkUnittest:
		py, err := FindPython(dir)
		if err != nil {
			return "", nil, err
		}
		if fw == FrameworkPytest && canImport(ctx, py, dir, "pytest") {
			// No cache directory: running tests must not write into the project.
			return FrameworkPytest, []string{py, "-m", "pytest", "-q", "-p", "no:cacheprovider"}, nil
		}
		args := []string{py, "-m", "unittest", "discover", "-v"}
		for _, d := range []string{"tests", "test"} {
			fi, err := os.Stat(filepath.Join(dir, d))
			if err != nil || !fi.IsDir() {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, d, "__init__.py")); err != nil {
				args = append(args, "-s", d) // not a package: discover from inside it
			}
			break
		}
		return FrameworkUnittest, args, nil
	}
	return "", nil, fmt.Errorf("unknown test framework %q (pytest, unittest, go, npm)", fw)
}

func canImport(ctx context.Context, py, dir, module string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", "import "+module)
	cmd.Dir = dir
	return cmd.Run() == nil
}

// RunTests runs the tests of projectDir with its own toolchain through r and
// counts passed, failed, skipped and errored tests from the runner's output
// (parsed as it streams, so the output cap does not lose counts). A test
// failure is a report, not an error; the error is for a folder without tests
// or a missing toolchain.
func RunTests(ctx context.Context, r Runner, projectDir string, opts TestOptions) (TestReport, error) {
	fi, err := os.Stat(projectDir)
	if err != nil {
		return TestReport{}, fmt.Errorf("run tests: %w", err)
	}
	if !fi.IsDir() {
		return TestReport{}, fmt.Errorf("run tests: %s is not a directory", projectDir)
	}
	var fw string
	var argv []string
	if opts.Framework != "" {
		fw, argv, err = commandFor(ctx, opts.Framework, projectDir)
	} else {
		fw, argv, err = DetectFramework(ctx, projectDir)
	}
	if err != nil {
		return TestReport{}, fmt.Errorf("run tests: %w", err)
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	origin := opts.Origin
	if origin == "" {
		origin = "test"
	}
	counter := newTestCounter(fw)
	spec := Spec{
		Command: argv, Dir: projectDir, Timeout: timeout, Limits: opts.Limits,
		NoNetwork: opts.NoNetwork, Origin: origin, OnSample: opts.OnSample,
		Confine: !opts.Unconfined, Writable: toolCaches(ctx, fw),
		// Keep the project clean: no bytecode caches written by the run.
		Env: []string{"PYTHONDONTWRITEBYTECODE=1"},
		OnOutput: func(s Stream, b []byte) {
			counter.feed(s, b)
			if opts.OnOutput != nil {
				opts.OnOutput(s, b)
			}
		},
	}
	res, err := r.Run(ctx, spec)
	rec := NewRecord(spec, res, err)
	rep := TestReport{Framework: fw, Command: argv, Result: res, Record: &rec}
	if err != nil {
		return rep, fmt.Errorf("run tests: %w", err)
	}
	counter.finish()
	rep.Passed, rep.Failed, rep.Skipped, rep.Errors, rep.Parsed = counter.counts()
	return rep, nil
}

// toolCaches lists the caches a framework's toolchain writes outside the
// project, which a confined run keeps writable.
func toolCaches(ctx context.Context, fw string) []string {
	var dirs []string
	switch fw {
	case FrameworkGo:
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "env", "GOCACHE", "GOMODCACHE").Output()
		if err == nil {
			dirs = append(dirs, strings.Fields(string(out))...)
		}
	case FrameworkNpm:
		if home, err := os.UserHomeDir(); err == nil {
			dirs = append(dirs, filepath.Join(home, ".npm"))
		}
	}
	return dirs
}

// testCounter parses a test runner's output line by line as it streams.
type testCounter struct {
	mu       sync.Mutex
	fw       string
	partial  map[Stream][]byte
	c        [4]int // passed, failed, skipped, errors
	parsed   bool
	goFailed map[string]bool // packages with a failed test
	goBuild  map[string]bool // packages that failed to build
}

func newTestCounter(fw string) *testCounter {
	return &testCounter{fw: fw, partial: map[Stream][]byte{}, goFailed: map[string]bool{}, goBuild: map[string]bool{}}
}

func (t *testCounter) feed(s Stream, b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := append(t.partial[s], b...)
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		t.line(string(bytes.TrimRight(buf[:i], "\r")))
		buf = buf[i+1:]
	}
	if len(buf) > 64<<10 { // a line this long is not a summary line
		buf = nil
	}
	t.partial[s] = append([]byte(nil), buf...)
}

func (t *testCounter) finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for s, b := range t.partial {
		if len(b) > 0 {
			t.line(string(b))
		}
		delete(t.partial, s)
	}
}

func (t *testCounter) counts() (p, f, s, e int, parsed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.c[0], t.c[1], t.c[2], t.c[3], t.parsed
}

var (
	pytestSummary = regexp.MustCompile(`(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)`)
	unittestRan   = regexp.MustCompile(`^Ran (\d+) tests? in `)
	unittestEnd   = regexp.MustCompile(`^(OK|FAILED)(?: \((.*)\))?\s*$`)
	jestTests     = regexp.MustCompile(`^Tests:\s+(.*\d+ total)`)
	vitestTests   = regexp.MustCompile(`^\s*Tests\s+(.*)\(\d+\)\s*$`)
	countWord     = regexp.MustCompile(`(\d+) (passed|failed|skipped|todo|pending)`)
	mochaLine     = regexp.MustCompile(`^\s*(\d+) (passing|failing|pending)\b`)
	tapCount      = regexp.MustCompile(`^(?:#|ℹ) (pass|fail|skipped|cancelled) (\d+)\s*$`)
)

func (t *testCounter) line(l string) {
	switch t.fw {
	case FrameworkGo:
		t.goLine(l)
	case FrameworkPytest:
		// The final summary: "1 failed, 3 passed in 0.12s" (with or
		// without a ==== frame). Later summaries replace earlier ones.
		if !strings.Contains(l, " in ") || !pytestSummary.MatchString(l) {
			return
		}
		var c [4]int
		for _, m := range pytestSummary.FindAllStringSubmatch(l, -1) {
			n, _ := strconv.Atoi(m[1])
			switch m[2] {
			case "passed", "xpassed":
				c[0] += n
			case "failed":
				c[1] += n
			case "skipped", "xfailed":
				c[2] += n
			case "error", "errors":
				c[3] += n
			}
		}
		t.c, t.parsed = c, true
	case FrameworkUnittest:
		if m := unittestRan.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			t.c = [4]int{n, 0, 0, 0}
			return
		}
		if m := unittestEnd.FindStringSubmatch(l); m != nil {
			ran := t.c[0]
			var f, s, e int
			for _, kv := range strings.Split(m[2], ",") {
				k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
				if !ok {
					continue
				}
				n, _ := strconv.Atoi(v)
				switch k {
				case "failures", "unexpected successes":
					f += n
				case "errors":
					e += n
				case "skipped":
					s += n
				}
			}
			t.c = [4]int{max(ran-f-s-e, 0), f, s, e}
			t.parsed = true
		}
	case FrameworkNpm:
		t.npmLine(l)
	}
}

func (t *testCounter) goLine(l string) {
	var ev struct {
		Action      string
		Package     string
		Test        string
		ImportPath  string
		FailedBuild string
	}
	if !strings.HasPrefix(l, "{") || json.Unmarshal([]byte(l), &ev) != nil {
		return
	}
	switch {
	case ev.Action == "build-fail":
		if !t.goBuild[ev.ImportPath] {
			t.goBuild[ev.ImportPath] = true
			t.c[3]++
		}
		t.parsed = true
	case ev.Test != "" && ev.Action == "pass":
		t.c[0]++
		t.parsed = true
	case ev.Test != "" && ev.Action == "fail":
		t.c[1]++
		t.goFailed[ev.Package] = true
		t.parsed = true
	case ev.Test != "" && ev.Action == "skip":
		t.c[2]++
		t.parsed = true
	case ev.Test == "" && ev.Action == "fail":
		// A package that failed without a failing test did not build or
		// crashed outside a test.
		if !t.goFailed[ev.Package] && (ev.FailedBuild == "" || !t.goBuild[ev.FailedBuild]) {
			t.c[3]++
		}
		t.parsed = true
	case ev.Test == "" && (ev.Action == "pass" || ev.Action == "skip"):
		t.parsed = true
	}
}

func (t *testCounter) npmLine(l string) {
	l = strings.TrimSpace(l)
	idx := func(word string) int {
		switch word {
		case "passed", "passing", "pass":
			return 0
		case "failed", "failing", "fail":
			return 1
		case "skipped", "pending", "todo":
			return 2
		}
		return 3 // cancelled
	}
	set := func(word string, n int) { t.c[idx(word)] = n; t.parsed = true }
	add := func(word string, n int) { t.c[idx(word)] += n; t.parsed = true }
	if m := jestTests.FindStringSubmatch(l); m != nil {
		t.c = [4]int{}
		for _, w := range countWord.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(w[1])
			add(w[2], n)
		}
		return
	}
	if m := vitestTests.FindStringSubmatch(l); m != nil && countWord.MatchString(m[1]) {
		t.c = [4]int{}
		for _, w := range countWord.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(w[1])
			add(w[2], n)
		}
		return
	}
	if m := mochaLine.FindStringSubmatch(l); m != nil {
		n, _ := strconv.Atoi(m[1])
		set(m[2], n)
		return
	}
	if m := tapCount.FindStringSubmatch(l); m != nil {
		n, _ := strconv.Atoi(m[2])
		set(m[1], n)
	}
}
