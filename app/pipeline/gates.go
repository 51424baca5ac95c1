package pipeline

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"codeloom/runtime"
)

// Gate statuses.
const (
	GatePassed  = "passed"
	GateFailed  = "failed"
	GateSkipped = "skipped"
)

// GateResult is the outcome of one verification gate, with the metrics of
// the run(s) behind it.
type GateResult struct {
	Name     string        `json:"name"`
	Status   string        `json:"status"`
	Note     string        `json:"note,omitempty"` // why skipped, what was not found
	Command  []string      `json:"command,omitempty"`
	ExitCode int           `json:"exit_code"`
	Limit    string        `json:"limit,omitempty"`
	Output   string        `json:"output,omitempty"` // stdout+stderr, tail-trimmed
	Wall     time.Duration `json:"wall"`
	CPU      time.Duration `json:"cpu"`
	PeakRSS  int64         `json:"peak_rss"`
	Tests    *TestCounts   `json:"tests,omitempty"`
}

// TestCounts are the counts a test gate read from the test runner's output.
type TestCounts struct {
	Passed, Failed, Skipped, Errors int
}

// Line renders a one-line summary of the gate.
func (g GateResult) Line() string {
	s := fmt.Sprintf("%-7s %-7s", g.Name, g.Status)
	if len(g.Command) > 0 {
		s += " " + displayCommand(g.Command)
	}
	if g.Status != GateSkipped {
		s += fmt.Sprintf(" (exit %d, %.2fs wall, %.2fs cpu, %.1f MB peak)", g.ExitCode, g.Wall.Seconds(), g.CPU.Seconds(), float64(g.PeakRSS)/(1<<20))
	}
	if g.Tests != nil {
		s += fmt.Sprintf(" tests: %d passed, %d failed, %d errors, %d skipped", g.Tests.Passed, g.Tests.Failed, g.Tests.Errors, g.Tests.Skipped)
	}
	if g.Limit != "" {
		s += " limit: " + g.Limit
	}
	if g.Note != "" {
		s += " — " + g.Note
	}
	return s
}

// gateSpec is a planned gate run.
type gateSpec struct {
	name     string
	commands [][]string // run in order; the gate fails at the first failing command
	timeout  time.Duration
	note     string // when there is nothing to run: why
	// framework, for the tests gate without a policy command: run through
	// runtime.RunTests, which counts the results as the output streams.
	framework string
}

// projectLang guesses the project's main toolchain from its marker files.
func projectLang(root string) string {
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(root, name))
		return err == nil
	}
	switch {
	case has("go.mod"):
		return "go"
	case has("pyproject.toml") || has("setup.py") || has("requirements.txt"):
		return "python"
	case has("package.json"):
		return "javascript"
	}
	py, _ := filepath.Glob(filepath.Join(root, "*.py"))
	pkg, _ := filepath.Glob(filepath.Join(root, "*", "*.py"))
	if len(py)+len(pkg) > 0 {
		return "python"
	}
	return ""
}

// planGates decides the commands of every gate for a project and the files a
// patch changed (slash paths relative to root).
func (p *Pipeline) planGates(ctx context.Context, changed []string) []gateSpec {
	root := p.cfg.Root
	lang := projectLang(root)
	var specs []gateSpec
	filesWith := func(ext string) []string {
		var out []string
		for _, f := range changed {
			if strings.HasSuffix(f, ext) {
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(f))); err == nil {
					out = append(out, f)
				}
			}
		}
		return out
	}
	python := func() (string, string) {
		py, err := runtime.FindPython(root)
		if err != nil {
			return "", err.Error()
		}
		return py, ""
	}
	for _, name := range GateOrder {
		gp := p.policy.Gate(name)
		def := map[string]time.Duration{GateSyntax: time.Minute, GateStatic: 2 * time.Minute, GateTests: 5 * time.Minute, GateProbe: 30 * time.Second}[name]
		timeout, err := p.policy.TimeoutOf(name, def)
		if err != nil {
			timeout = def
		}
		s := gateSpec{name: name, timeout: timeout}
		switch {
		case !gp.On():
			s.note = "disabled in " + PolicyFile
		case len(gp.Command) > 0:
			s.commands = [][]string{gp.Command}
		default:
			switch name {
			case GateSyntax:
				if files := filesWith(".py"); len(files) > 0 {
					if py, why := python(); py != "" {
						s.commands = append(s.commands, pySyntaxCommand(py, files))
					} else {
						s.note = why
					}
				}
				if files := filesWith(".go"); len(files) > 0 {
					if gobin, err := runtime.FindGo(); err == nil {
						s.commands = append(s.commands, []string{gobin, "vet", "./..."})
					} else {
						s.note = err.Error()
					}
				}
				if len(s.commands) == 0 && s.note == "" {
					s.note = "no changed Python or Go files"
				}
			case GateStatic:
				var missing []string
				tool := func(name string, args ...string) {
					if path, err := exec.LookPath(name); err == nil {
						s.commands = append(s.commands, append([]string{path}, args...))
					} else {
						missing = append(missing, name)
					}
				}
				if files := filesWith(".py"); len(files) > 0 {
					tool("ruff", append([]string{"check"}, files...)...)
					tool("mypy", append([]string{"--ignore-missing-imports"}, files...)...)
				}
				if files := filesWith(".go"); len(files) > 0 {
					tool("staticcheck", "./...")
				}
				if len(missing) > 0 {
					s.note = strings.Join(missing, ", ") + " not on PATH: not run"
				}
				if len(s.commands) == 0 && s.note == "" {
					s.note = "no changed files a static checker covers"
				}
			case GateTests:
				fw, argv, err := runtime.DetectFramework(ctx, root)
				if err != nil {
					s.note = err.Error()
				} else {
					s.commands = [][]string{argv}
					s.framework = fw
				}
			case GateProbe:
				s.commands, s.note = p.defaultProbe(lang, python)
			}
		}
		specs = append(specs, s)
	}
	return specs
}

// defaultProbe picks a harmless run of the project's entry point.
func (p *Pipeline) defaultProbe(lang string, python func() (string, string)) ([][]string, string) {
	root := p.cfg.Root
	switch lang {
	case "python":
		py, why := python()
		if py == "" {
			return nil, why
		}
		for _, f := range []string{"main.py", "app.py", "__main__.py"} {
			if _, err := os.Stat(filepath.Join(root, f)); err == nil {
				return [][]string{{py, f}}, ""
			}
		}
		// Import every top-level package: proves the code loads without
		// guessing the arguments an entry point needs.
		inits, _ := filepath.Glob(filepath.Join(root, "*", "__init__.py"))
		var pkgs []string
		for _, f := range inits {
			name := filepath.Base(filepath.Dir(f))
			if name != "tests" && name != "test" && isIdent(name) {
				pkgs = append(pkgs, name)
			}
		}
		if len(pkgs) == 0 {
			return nil, "no entry point found; set gates.probe.command in " + PolicyFile
		}
		return [][]string{{py, "-c", "import " + strings.Join(pkgs, ", ")}}, "imports the packages; set gates.probe.command in " + PolicyFile + " to run the entry point"
	case "go":
		if gobin, err := runtime.FindGo(); err == nil {
			return [][]string{{gobin, "build", "-o", os.DevNull, "./..."}}, ""
		}
		return nil, "go not found"
	}
	return nil, "no entry point found; set gates.probe.command in " + PolicyFile
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isIdent(s string) bool { return identRe.MatchString(s) }

// pySyntaxScript parses each file named in argv with compile() and prints
// the errors as py_compile does. Unlike py_compile it writes no bytecode
// into the project (py_compile always writes __pycache__/*.pyc).
const pySyntaxScript = `import sys, traceback
bad = 0
for f in sys.argv[1:]:
    try:
        compile(open(f, "rb").read(), f, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        bad = 1
        sys.stderr.write("".join(traceback.format_exception_only(type(e), e)))
sys.exit(bad)`

// pySyntaxCommand is the syntax check of Python files: python -B (no
// bytecode) running pySyntaxScript.
func pySyntaxCommand(py string, files []string) []string {
	return append([]string{py, "-B", "-c", pySyntaxScript}, files...)
}

// displayCommand renders argv on one line, naming the built-in syntax
// script instead of printing it.
func displayCommand(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == pySyntaxScript {
			a = "'<syntax check: compile() each file, write no bytecode>'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// runGate runs one planned gate.
func (p *Pipeline) runGate(ctx context.Context, s gateSpec) GateResult {
	g := GateResult{Name: s.name, Status: GatePassed, Note: s.note}
	if len(s.commands) == 0 {
		g.Status = GateSkipped
		return g
	}
	limits := runtime.Limits{
		Memory: int64(p.policy.Limits.MemoryMB) << 20,
		Procs:  p.policy.Limits.Procs,
	}
	if s.framework != "" {
		rep, err := runtime.RunTests(ctx, p.runner, p.cfg.Root, runtime.TestOptions{
			Framework: s.framework, Timeout: s.timeout, Limits: limits, Origin: "gate:" + s.name})
		res := rep.Result
		g.Command = rep.Command
		g.Wall, g.CPU, g.PeakRSS = res.Wall, res.CPUUser+res.CPUSys, res.PeakRSS
		g.ExitCode, g.Limit = res.ExitCode, res.Limit
		if rep.Parsed {
			g.Tests = &TestCounts{Passed: rep.Passed, Failed: rep.Failed, Skipped: rep.Skipped, Errors: rep.Errors}
		}
		out := string(res.Stdout)
		if len(res.Stdout) > 0 && len(res.Stderr) > 0 {
			out += "\n"
		}
		out += string(res.Stderr)
		switch {
		case err != nil:
			g.Status = GateFailed
			out += "\n" + err.Error()
		case !rep.OK():
			g.Status = GateFailed
			if res.Limit != "" {
				out += fmt.Sprintf("\n[ended by the %s limit]", res.Limit)
			} else if !rep.Parsed {
				out += "\n[no test results could be read from the output]"
			}
		}
		g.Output = tail(out, 6000)
		return g
	}
	var out strings.Builder
	for _, cmd := range s.commands {
		g.Command = cmd
		res, err := p.runner.Run(ctx, runtime.Spec{
			Command:   cmd,
			Dir:       p.cfg.Root,
			Timeout:   s.timeout,
			Limits:    limits,
			OutputCap: 256 << 10,
			Origin:    "gate:" + s.name,
			Env:       []string{"PYTHONDONTWRITEBYTECODE=1"},
		})
		g.Wall += res.Wall
		g.CPU += res.CPUUser + res.CPUSys
		g.PeakRSS = max(g.PeakRSS, res.PeakRSS)
		g.ExitCode = res.ExitCode
		g.Limit = res.Limit
		out.Write(res.Stdout)
		if len(res.Stdout) > 0 && len(res.Stderr) > 0 {
			out.WriteString("\n")
		}
		out.Write(res.Stderr)
		if s.name == GateTests {
			g.Tests = parseTestCounts(string(res.Stdout) + "\n" + string(res.Stderr))
		}
		if err != nil {
			g.Status = GateFailed
			out.WriteString("\n" + err.Error())
			break
		}
		if !res.OK() {
			g.Status = GateFailed
			if res.Limit != "" {
				fmt.Fprintf(&out, "\n[ended by the %s limit]", res.Limit)
			}
			break
		}
	}
	g.Output = tail(out.String(), 6000)
	return g
}

// tail keeps the last n bytes of s (on a line boundary when possible).
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	return "…\n" + s
}

var (
	reUnittestRan  = regexp.MustCompile(`(?m)^Ran (\d+) tests? in`)
	reUnittestFail = regexp.MustCompile(`(?m)^FAILED \(([^)]*)\)`)
	reUnittestSkip = regexp.MustCompile(`skipped=(\d+)`)
	rePytestCounts = regexp.MustCompile(`(\d+) (passed|failed|skipped|errors?|error)\b`)
	reGoTest       = regexp.MustCompile(`(?m)^(ok|FAIL|---\s+FAIL|---\s+PASS|---\s+SKIP)`)
)

// parseTestCounts reads unittest, pytest or go test summaries.
func parseTestCounts(out string) *TestCounts {
	if m := reUnittestRan.FindStringSubmatch(out); m != nil {
		total, _ := strconv.Atoi(m[1])
		c := &TestCounts{}
		if f := reUnittestFail.FindStringSubmatch(out); f != nil {
			for _, part := range strings.Split(f[1], ",") {
				k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
				n, _ := strconv.Atoi(v)
				switch k {
				case "failures":
					c.Failed = n
				case "errors":
					c.Errors = n
				case "skipped":
					c.Skipped = n
				}
			}
		} else if m := reUnittestSkip.FindStringSubmatch(out); m != nil {
			c.Skipped, _ = strconv.Atoi(m[1])
		}
		c.Passed = total - c.Failed - c.Errors - c.Skipped
		return c
	}
	if ms := rePytestCounts.FindAllStringSubmatch(out, -1); ms != nil {
		c := &TestCounts{}
		for _, m := range ms {
			n, _ := strconv.Atoi(m[1])
			switch m[2] {
			case "passed":
				c.Passed = n
			case "failed":
				c.Failed = n
			case "skipped":
				c.Skipped = n
			default:
				c.Errors = n
			}
		}
		return c
	}
	if ms := reGoTest.FindAllStringSubmatch(out, -1); ms != nil {
		c := &TestCounts{}
		for _, m := range ms {
			switch {
			case strings.Contains(m[1], "PASS"):
				c.Passed++
			case strings.Contains(m[1], "SKIP"):
				c.Skipped++
			case strings.HasPrefix(m[1], "---"):
				c.Failed++
			}
		}
		return c
	}
	return nil
}
