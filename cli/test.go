package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	"codeloom/app/memory"
	"codeloom/runtime"
)

// testReportJSON is the --json shape of `codeloom test`.
type testReportJSON struct {
	Dir       string         `json:"dir"`
	Framework string         `json:"framework"`
	Command   []string       `json:"command"`
	Passed    int            `json:"passed"`
	Failed    int            `json:"failed"`
	Skipped   int            `json:"skipped"`
	Errors    int            `json:"errors"`
	Parsed    bool           `json:"parsed"`
	OK        bool           `json:"ok"`
	Result    execResultJSON `json:"result"`
}

// runTest implements `codeloom test DIR [--json]`: it runs the project's
// tests with its own toolchain (pytest or unittest, go test, npm test),
// streams the runner's output to stderr, and prints the pass/fail counts.
// Exit status: 0 when every test passed, 1 when tests failed or could not
// run, 2 for a missing folder or bad flags. The run is recorded in the
// project's history unless --no-record.
func runTest(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "print one JSON object with the counts and the run's metrics")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit for the whole test run")
	framework := fs.String("framework", "", "force pytest, unittest, go or npm instead of detecting")
	noNet := fs.Bool("no-net", false, "run the tests without network access")
	confine := fs.Bool("confine", true, "filesystem read-only outside the project (and the toolchain's caches), private /tmp; --confine=false to turn off")
	quiet := fs.Bool("quiet", false, "do not stream the test runner's output")
	noRecord := fs.Bool("no-record", false, "do not record the run in the project history")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: codeloom test DIR [flags]")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.Stderr, "codeloom test: need exactly one project folder (usage: codeloom test DIR [--json])")
		return ExitUsage
	}
	dir := fs.Arg(0)
	if code := checkDir(env, "test", dir); code != ExitOK {
		return code
	}
	opts := runtime.TestOptions{Framework: *framework, Timeout: *timeout, NoNetwork: *noNet, Unconfined: !*confine}
	if !*asJSON && !*quiet {
		var mu sync.Mutex
		opts.OnOutput = func(_ runtime.Stream, b []byte) {
			mu.Lock()
			defer mu.Unlock()
			env.Stderr.Write(b)
		}
	}
	var st *memory.Store
	if !*noRecord {
		var err error
		if st, err = memory.OpenProject(dir); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom test: not recording (history unavailable: %v)\n", err)
		} else {
			defer st.Close()
		}
	}
	rep, err := runtime.RunTests(ctx, runtime.New(), dir, opts)
	if st != nil && rep.Record != nil {
		if rerr := st.RecordRun(*rep.Record); rerr != nil {
			fmt.Fprintf(env.Stderr, "codeloom test: not recorded: %v\n", rerr)
		}
	}
	if err != nil {
		if *asJSON {
			writeJSONValue(env.Stdout, map[string]string{"dir": dir, "error": err.Error()})
		}
		fmt.Fprintf(env.Stderr, "codeloom test: %v\n", err)
		return ExitFailure
	}
	if *asJSON {
		j := testReportJSON{Dir: dir, Framework: rep.Framework, Command: rep.Command, Passed: rep.Passed,
			Failed: rep.Failed, Skipped: rep.Skipped, Errors: rep.Errors, Parsed: rep.Parsed, OK: rep.OK(),
			Result: execJSON(rep.Result)}
		if err := writeJSONValue(env.Stdout, j); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom test: %v\n", err)
			return ExitFailure
		}
	} else {
		fmt.Fprintln(env.Stdout, testSummary(rep))
	}
	if !rep.OK() {
		return ExitFailure
	}
	return ExitOK
}

// testSummary is the human summary line of a test run.
func testSummary(rep runtime.TestReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", rep.Framework)
	if rep.Parsed {
		fmt.Fprintf(&b, "%d passed, %d failed, %d skipped, %d errors", rep.Passed, rep.Failed, rep.Skipped, rep.Errors)
	} else {
		b.WriteString("no test counts found in the output")
	}
	res := rep.Result
	fmt.Fprintf(&b, " · exit %d", res.ExitCode)
	if res.Signal != "" {
		fmt.Fprintf(&b, " (%s)", res.Signal)
	}
	if res.Limit != "" {
		fmt.Fprintf(&b, " (%s limit)", res.Limit)
	}
	fmt.Fprintf(&b, " · wall %s · peak RSS %s", res.Wall.Round(time.Millisecond), execHumanBytes(res.PeakRSS))
	if rep.OK() {
		b.WriteString(" · OK")
	} else {
		b.WriteString(" · FAILED")
	}
	return b.String()
}
