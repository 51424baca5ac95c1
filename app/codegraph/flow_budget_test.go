package codegraph

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestFlowParameterChainIsNotExponential: a parameter handed on through a
// long chain of functions, each calling the next from several places, is
// deeper than the flow's depth bound. Results cut short by that bound used
// not to be memoised, and each level multiplied the work by its number of
// call sites (pyenv's corpus did not finish indexing in 10 minutes). The
// bound here only catches a hang, not a speed.
func TestFlowParameterChainIsNotExponential(t *testing.T) {
	var b strings.Builder
	const levels, fanout = 30, 8
	b.WriteString("def leaf():\n    pass\n\n")
	for i := 0; i < levels; i++ {
		fmt.Fprintf(&b, "def f%d(cb):\n", i)
		if i == levels-1 {
			b.WriteString("    cb()\n\n")
			continue
		}
		for j := 0; j < fanout; j++ {
			fmt.Fprintf(&b, "    f%d(cb)\n", i+1)
		}
		b.WriteString("\n")
	}
	b.WriteString("def main():\n    f0(leaf)\n")
	indexWithin(t, map[string]string{"chain.py": b.String()}, "a 30-level parameter chain")
}

// indexWithin indexes files and fails when that does not finish in 2
// minutes (a hang, not a speed: the chains above take well under a second).
func indexWithin(t *testing.T, files map[string]string, what string) {
	t.Helper()
	root := writeTree(t, files)
	done := make(chan error, 1)
	go func() {
		p, err := Open(context.Background(), root, Options{NoCache: true})
		if err == nil {
			p.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("indexing %s did not finish in 2 minutes", what)
	}
}
