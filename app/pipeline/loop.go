package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"codeloom/app/memory"
	"codeloom/app/patch"
)

// verify asks to run the gates, runs them in order and stops at the first
// failure.
func (p *Pipeline) verify(ctx context.Context, changed []string) ([]GateResult, bool, error) {
	specs := p.planGates(ctx, changed)
	var detail strings.Builder
	runs := 0
	for _, s := range specs {
		if len(s.commands) == 0 {
			fmt.Fprintf(&detail, "  %-7s skipped: %s\n", s.name, s.note)
			continue
		}
		for _, cmd := range s.commands {
			runs++
			fmt.Fprintf(&detail, "  %-7s %s\n", s.name, displayCommand(cmd))
		}
		fmt.Fprintf(&detail, "          limits: timeout %s, memory %d MB, %d processes\n", s.timeout, p.policy.Limits.MemoryMB, p.policy.Limits.Procs)
	}
	if runs > 0 {
		yes, err := p.ask(ctx, Question{Kind: AskRun, Title: "Run these checks?", Detail: "In " + p.cfg.Root + ":\n" + detail.String()})
		if err != nil {
			return nil, false, err
		}
		if !yes {
			return nil, false, errDeclined
		}
	}
	var results []GateResult
	passed := true
	err := p.step("verify", func() (string, error) {
		for _, s := range specs {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			var g GateResult
			if !passed {
				g = GateResult{Name: s.name, Status: GateSkipped, Note: "an earlier gate failed"}
			} else {
				start := time.Now()
				g = p.runGate(ctx, s)
				p.activity("gate:"+s.name, g.Status, g.Line(), time.Since(start))
			}
			results = append(results, g)
			p.emit(Event{Type: EventGate, Gate: &g, OK: g.Status != GateFailed})
			if g.Status == GateFailed {
				passed = false
			}
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if passed {
			return "all gates passed", nil
		}
		return "a gate failed", nil
	})
	return results, passed, err
}

func firstFailed(gates []GateResult) *GateResult {
	for i := range gates {
		if gates[i].Status == GateFailed {
			g := gates[i]
			return &g
		}
	}
	return nil
}

// failureSummary condenses a failed gate for a lesson card.
func failureSummary(g *GateResult) string {
	if g == nil {
		return ""
	}
	var keep []string
	for _, l := range strings.Split(g.Output, "\n") {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if strings.Contains(t, "Error") || strings.HasPrefix(t, "FAIL") || strings.Contains(t, "assert") ||
			strings.HasPrefix(t, "E ") || strings.Contains(t, "panic") || strings.Contains(t, "not usable") {
			keep = append(keep, t)
		}
		if len(keep) >= 4 {
			break
		}
	}
	s := g.Name + " failed"
	if len(keep) > 0 {
		s += ": " + strings.Join(keep, " | ")
	} else if g.Output != "" {
		s += ": " + clipText(strings.TrimSpace(g.Output), 300)
	}
	return clipText(s, 800)
}

// loop is Act → Approve → Apply → Verify → Debug, then Confirm.
func (p *Pipeline) loop(ctx context.Context, st *cycleState) (*Cycle, error) {
	c := st.c
	failed := 0 // failed attempts since the last guidance
	for {
		if err := ctx.Err(); err != nil {
			c.Status = StatusError
			c.Note = err.Error()
			return c, err
		}
		st.guidance = append(st.guidance, p.takeInterjections()...)
		role, tmpl := RoleCoder, "coder"
		if st.failure != nil {
			role, tmpl = RoleDebugger, "debugger"
		}
		c.Attempts++
		var pt *patch.Patch
		var dry *patch.Changeset
		err := p.step("act", func() (string, error) {
			var err error
			pt, dry, err = p.propose(ctx, role, tmpl, st)
			if err != nil {
				return "role=" + role, err
			}
			return "role=" + role + ": " + strings.TrimSpace(dry.Summary()), nil
		})
		var unusable *unusableError
		switch {
		case errors.As(err, &unusable):
			st.failure = &GateResult{Name: "patch", Status: GateFailed, Output: unusable.Error()}
		case err != nil:
			c.Status = StatusError
			c.Note = err.Error()
			p.writeLesson(st, false)
			return c, err
		default:
			ok, err := p.applyPatch(ctx, st, pt, dry, role)
			var af *applyFailed
			if errors.As(err, &af) {
				// The files changed between the dry run and applying:
				// nothing was written; the model gets the reason.
				st.failure = &GateResult{Name: "patch", Status: GateFailed, Output: af.Error()}
				break
			}
			if err != nil {
				c.Status = StatusError
				c.Note = err.Error()
				return c, err
			}
			if !ok {
				c.Status = StatusRejected
				c.Note = "the user declined the patch; nothing was changed by it"
				return c, nil
			}
			if p.cfg.WriteTests && role == RoleCoder && failed == 0 && len(c.Changes) == 1 {
				if err := p.writeTests(ctx, st); err != nil {
					c.Status = StatusError
					c.Note = err.Error()
					return c, err
				}
			}
			gates, passed, err := p.verify(ctx, st.changed)
			if errors.Is(err, errDeclined) {
				c.Status = StatusNotRun
				c.Note = "the user declined to run the checks; the patch stays applied"
				return c, nil
			}
			if err != nil {
				c.Status = StatusError
				c.Note = err.Error()
				return c, err
			}
			c.Gates = gates
			if passed {
				var gl []string
				for _, g := range gates {
					gl = append(gl, g.Line())
				}
				yes, err := p.ask(ctx, Question{Kind: AskConfirm, Title: "Is this what you wanted?",
					Detail: p.overallSummary(st) + "\n" + strings.Join(gl, "\n")})
				if err != nil {
					c.Status = StatusError
					c.Note = err.Error()
					return c, err
				}
				if yes {
					c.Status = StatusPassed
					if err := p.step("update", func() (string, error) { return p.writeLesson(st, true), nil }); err != nil {
						return c, err
					}
					return c, nil
				}
				what, err := p.guide(ctx, Question{Kind: AskGuidance, Title: "What is wrong? (empty to stop)"})
				if err != nil {
					c.Status = StatusError
					c.Note = err.Error()
					return c, err
				}
				if what == "" {
					c.Status = StatusStopped
					c.Note = "the user said the result is not what they wanted"
					return c, nil
				}
				st.guidance = append(st.guidance, what)
				st.failure = &GateResult{Name: "user review", Status: GateFailed, Output: what}
				continue
			}
			st.failure = firstFailed(gates)
		}
		if st.firstFail == "" {
			st.firstFail = failureSummary(st.failure)
		}
		failed++
		if failed >= p.policy.MaxFixAttempts {
			g, err := p.guide(ctx, Question{Kind: AskGuidance,
				Title:  fmt.Sprintf("%d fix attempts did not pass the checks. Guidance for the next attempt? (empty to stop)", failed),
				Detail: failureSummary(st.failure)})
			if err != nil {
				c.Status = StatusError
				c.Note = err.Error()
				return c, err
			}
			if g == "" {
				c.Status = StatusFailed
				c.Note = fmt.Sprintf("stopped after %d attempts: %s", c.Attempts, failureSummary(st.failure))
				p.step("update", func() (string, error) { return p.writeLesson(st, false), nil })
				return c, nil
			}
			st.guidance = append(st.guidance, g)
			failed = 0
		}
	}
}

// overallSummary describes the cycle's net change per file.
func (p *Pipeline) overallSummary(st *cycleState) string {
	var b strings.Builder
	for _, f := range st.changed {
		abs, _, err := patch.Confine(p.cfg.Root, f)
		if err != nil {
			continue
		}
		data, rerr := patch.ReadRegular(abs, patch.MaxFileSize)
		exists := rerr == nil
		_, add, del := patch.UnifiedDiff(f, string(st.original[f]), string(data), st.origExists[f], exists)
		action := patch.ActionModify
		switch {
		case !st.origExists[f] && exists:
			action = patch.ActionCreate
		case st.origExists[f] && !exists:
			action = patch.ActionDelete
		}
		fmt.Fprintf(&b, "%s %s +%d -%d\n", action, f, add, del)
	}
	return b.String()
}

// compactDiff keeps the changed lines of a diff, at most n.
func compactDiff(d string, n int) string {
	var keep []string
	for _, l := range strings.Split(d, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
			keep = append(keep, l)
		} else if strings.HasPrefix(l, "+++ ") {
			keep = append(keep, strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")+":")
		}
		if len(keep) >= n {
			keep = append(keep, "…")
			break
		}
	}
	return strings.Join(keep, "\n")
}

// writeLesson stores the lesson card of the cycle and returns a detail line.
func (p *Pipeline) writeLesson(st *cycleState, passed bool) string {
	c := st.c
	if p.cfg.Memory == nil || len(c.Changes) == 0 && st.firstFail == "" {
		return "no lesson"
	}
	tags := []string{c.Kind}
	if !passed {
		tags = append(tags, "unresolved")
	}
	if st.firstFail != "" {
		tags = append(tags, strings.Fields(st.firstFail)[0])
	}
	tags = append(tags, st.changed...)
	sort.Strings(tags[1:])
	fix := ""
	if passed && len(c.Changes) > 0 {
		last := c.Changes[len(c.Changes)-1]
		fix = fmt.Sprintf("attempt %d passed all gates with:\n%s", c.Attempts, compactDiff(last.Diff(), 12))
	}
	l := memory.Lesson{Task: c.Request, Failure: st.firstFail, Fix: fix,
		DiffSummary: strings.TrimSpace(p.overallSummary(st)), Tags: tags}
	id, err := p.cfg.Memory.AddLesson(l)
	if err != nil {
		p.log.Warn("record lesson", "err", err)
		return "lesson not recorded: " + err.Error()
	}
	c.LessonID = id
	return "lesson " + id
}

// runProgram handles a "run" request: the probe command (policy or
// detected), after "Run this?".
func (p *Pipeline) runProgram(ctx context.Context, c *Cycle) (*Cycle, error) {
	specs := p.planGates(ctx, nil)
	var probe gateSpec
	for _, s := range specs {
		if s.name == GateProbe {
			probe = s
		}
	}
	if len(probe.commands) == 0 {
		c.Status = StatusFailed
		c.Note = "nothing to run: " + probe.note
		return c, nil
	}
	var detail strings.Builder
	for _, cmd := range probe.commands {
		fmt.Fprintf(&detail, "%s\n", strings.Join(cmd, " "))
	}
	fmt.Fprintf(&detail, "in %s, limits: timeout %s, memory %d MB, %d processes", p.cfg.Root, probe.timeout, p.policy.Limits.MemoryMB, p.policy.Limits.Procs)
	yes, err := p.ask(ctx, Question{Kind: AskRun, Title: "Run this?", Detail: detail.String()})
	if err != nil {
		c.Status = StatusError
		return c, err
	}
	if !yes {
		c.Status = StatusNotRun
		return c, nil
	}
	var g GateResult
	p.step("run", func() (string, error) {
		g = p.runGate(ctx, probe)
		return g.Line(), nil
	})
	p.emit(Event{Type: EventGate, Gate: &g, OK: g.Status == GatePassed})
	c.Gates = []GateResult{g}
	c.Answer = g.Output
	if g.Status == GatePassed {
		c.Status = StatusAnswered
	} else {
		c.Status = StatusFailed
	}
	return c, nil
}
