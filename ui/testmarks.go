package ui

import (
	"regexp"
	"strings"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/graphview"
)

var (
	// unittest -v: "test_x (pkg.mod.Class.test_x) ... ok|FAIL|ERROR|skipped …"
	unittestLine = regexp.MustCompile(`(?m)^(test\w*) \(([\w.]+)\)(?:\n.*)?\s\.\.\.\s(ok|FAIL|ERROR|skipped|expected failure|unexpected success)`)
	// pytest -v: "tests/test_x.py::Class::test_y PASSED|FAILED|ERROR|SKIPPED"
	pytestLine = regexp.MustCompile(`(?m)^([\w./-]+\.py)::([\w:]+?)(?:\[[^\]]*\])?\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)`)
)

// TestOutcomes reads per-test outcomes from test runner output (unittest -v
// or pytest -v): qualified test name (dotted, as in the code graph) → passed.
// Skipped tests are left out.
func TestOutcomes(output string) map[string]bool {
	out := map[string]bool{}
	for _, m := range unittestLine.FindAllStringSubmatch(output, -1) {
		switch m[3] {
		case "ok", "expected failure":
			out[m[2]] = true
		case "FAIL", "ERROR", "unexpected success":
			out[m[2]] = false
		}
	}
	for _, m := range pytestLine.FindAllStringSubmatch(output, -1) {
		mod := strings.ReplaceAll(strings.TrimSuffix(m[1], ".py"), "/", ".")
		q := mod + "." + strings.ReplaceAll(m[2], "::", ".")
		switch m[3] {
		case "PASSED", "XFAIL":
			out[q] = true
		case "FAILED", "ERROR", "XPASS":
			out[q] = false
		}
	}
	return out
}

// runMarks colours the graph by a test run: each test function or method
// found in the graph (by qualified name) passes or fails, and so do the
// classes and files that contain it (failing if any of their tests failed).
func runMarks(g Graph, r memory.RunRecord) (map[string]graphview.Mark, int, int) {
	outcomes := TestOutcomes(r.Stdout + "\n" + r.Stderr)
	if len(outcomes) == 0 || g == nil {
		return nil, 0, 0
	}
	byQual := map[string]*codegraph.Node{}
	for _, n := range g.Nodes() {
		if n.Kind == codegraph.KindFunction || n.Kind == codegraph.KindMethod {
			byQual[n.QualName] = n
		}
	}
	marks := map[string]graphview.Mark{}
	passed, failed := 0, 0
	set := func(id string, ok bool) {
		if m, seen := marks[id]; seen && m == graphview.MarkFail {
			return
		}
		if ok {
			marks[id] = graphview.MarkPass
		} else {
			marks[id] = graphview.MarkFail
		}
	}
	for q, ok := range outcomes {
		if ok {
			passed++
		} else {
			failed++
		}
		n := byQual[q]
		if n == nil {
			continue
		}
		for cur, i := n, 0; cur != nil && i < 16; i++ {
			set(cur.ID, ok)
			if cur.Parent == "" {
				break
			}
			cur, _ = g.Node(cur.Parent)
		}
	}
	return marks, passed, failed
}
