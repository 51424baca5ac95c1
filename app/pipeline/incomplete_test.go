package pipeline

import (
	"context"
	"strings"
	"testing"

	"codeloom/models"
)

// cuttingEngine answers like its Scripted engine, but reports the answers
// whose index is in cut as cut off at their token limit (as a server's
// finish_reason "length" or llama.cpp's MaxTokens do).
type cuttingEngine struct {
	*models.Scripted
	cut map[int]bool
	n   int
}

func (c *cuttingEngine) Generate(ctx context.Context, msgs []models.Message, o models.GenOptions, on func(string)) (string, error) {
	i := c.n
	c.n++
	ans, err := c.Scripted.Generate(ctx, msgs, o, on)
	if err == nil && c.cut[i] {
		err = &models.IncompleteError{Reason: models.IncompleteLength, Limit: o.MaxTokens}
	}
	return ans, err
}

// TestCutOffPatchIsReaskedNotApplied (issue 14): a patch answer that is
// complete as text (it parses) but was cut at the token limit is never
// applied; the re-ask gets the whole answer, which lands.
func TestCutOffPatchIsReaskedNotApplied(t *testing.T) {
	f := newFixture(t)
	eng := &cuttingEngine{Scripted: models.NewScripted("edit", planAnswer, directFix, directFix), cut: map[int]bool{2: true}}
	ap := &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}}
	_, out, events := run(t, f.config(eng, ap), "fix the bulk discount boundary")
	if c := out.Last(); c.Status != StatusPassed || len(c.Changes) != 1 {
		t.Fatalf("cycle = %+v", c)
	}
	calls := eng.Calls()
	if len(calls) != 4 || !strings.Contains(calls[3].Messages[len(calls[3].Messages)-1].Content, "cut off") {
		t.Fatalf("the cut answer was not re-asked with the reason: %d calls", len(calls))
	}
	applied := 0
	for _, e := range events {
		if e.Type == EventApplied {
			applied++
		}
	}
	if applied != 1 {
		t.Fatalf("%d patches applied, want only the whole one", applied)
	}

	// always cut: the attempt fails and nothing changes
	g := newFixture(t)
	before := tree(t, g.root)
	answers := []string{"edit", planAnswer}
	cut := map[int]bool{}
	for i := 0; i < 12; i++ {
		cut[len(answers)] = true
		answers = append(answers, directFix)
	}
	eng = &cuttingEngine{Scripted: models.NewScripted(answers...), cut: cut}
	cfg := g.config(eng, &ScriptedApprover{Default: true, Answers: map[string][]bool{AskNext: {false}}})
	cfg.MaxFixAttempts = 1
	cfg.Guidance = nil // no one to ask: the failed attempt ends the cycle
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out2, err := p.Run(context.Background(), "fix the bulk discount boundary")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if c := out2.Last(); c.Status == StatusPassed || len(c.Changes) != 0 {
		t.Fatalf("a cut-off patch landed: %+v", c)
	}
	sameFiles(t, before, tree(t, g.root))
}
