package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"codeloom/app/codegraph"
	"codeloom/app/patch"
	"codeloom/models"
	"codeloom/runtime"
)

// unusableError is a model answer that never became a clean patch.
type unusableError struct{ err error }

func (e *unusableError) Error() string { return "no usable patch: " + e.err.Error() }

func (e *unusableError) Unwrap() error { return e.err }

// applyFailed is a patch that passed its dry run but could not be applied
// (the files changed in between); nothing was written.
type applyFailed struct{ err error }

func (e *applyFailed) Error() string { return "the patch no longer applies: " + e.err.Error() }

func (e *applyFailed) Unwrap() error { return e.err }

// errDeclined is returned when the user declines to run something.
var errDeclined = errors.New("the user declined to run it")

// propose asks role for a patch, re-asking with the parse or dry-run error
// (bounded by max_reasks), and returns the parsed patch and its dry run.
func (p *Pipeline) propose(ctx context.Context, role, tmpl string, st *cycleState) (*patch.Patch, *patch.Changeset, error) {
	data := promptData{
		Request:       st.c.Request,
		Plan:          st.c.Plan.Text(),
		Context:       st.contextText,
		Lessons:       st.lessons,
		Files:         p.filesInPlay(st),
		Guidance:      st.guidance,
		PreviousPatch: clipText(st.lastDiff, 6000),
	}
	if st.failure != nil {
		data.Failure = failureView{Gate: st.failure.Name, Command: strings.Join(st.failure.Command, " "), Output: clipText(st.failure.Output, 6000)}
		frames := ParseFrames(p.cfg.Root, st.failure.Output, 8)
		if p.cfg.Graph != nil {
			frames = MapFrames(p.cfg.Graph.Graph(), frames, 3000)
		}
		data.Frames = frames
		if len(frames) > 0 {
			var names []string
			for _, f := range frames {
				if f.NodeName != "" {
					names = append(names, fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.NodeName))
				}
			}
			if len(names) > 0 {
				p.emit(Event{Type: EventInfo, Text: "traceback frames: " + strings.Join(names, ", ")})
			}
		}
	}
	msgs, err := p.messages(role, tmpl, data)
	if err != nil {
		return nil, nil, err
	}
	for try := 0; ; try++ {
		ans, err := p.generate(ctx, role, msgs, models.GenOptions{MaxTokens: p.maxTokens()})
		var perr error
		if models.IsIncomplete(err) {
			// a cut-off answer is never applied: it is re-asked like any
			// unusable answer, and fails the attempt when re-asks run out
			perr, err = fmt.Errorf("%w: answer again with only the edit blocks, shorter", err), nil
		}
		if err != nil {
			return nil, nil, err
		}
		var pt *patch.Patch
		if perr == nil {
			pt, perr = patch.Parse(ans)
		}
		var cs *patch.Changeset
		if perr == nil {
			cs, perr = p.dryRun(ctx, pt)
		}
		if perr == nil {
			return pt, cs, nil
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		p.emit(Event{Type: EventInfo, Role: role, Text: "patch not usable: " + perr.Error()})
		p.activity("patch", "rejected", fmt.Sprintf("role=%s try=%d: %s", role, try+1, clipText(perr.Error(), 1000)), 0)
		if try >= p.policy.MaxReasks {
			return nil, cs, &unusableError{perr}
		}
		reask, err := p.prompts.render("reask", promptData{Error: perr.Error()})
		if err != nil {
			return nil, nil, err
		}
		msgs = append(msgs, models.Message{Role: models.RoleAssistant, Content: ans}, models.Message{Role: models.RoleUser, Content: reask})
	}
}

// applyPatch shows a clean dry run, asks, then records first, writes, and
// reports: the previous version of every file it will change and the
// Landed record are committed (fsynced) to the store before any file is
// written, and the step is recorded before it is printed, so a kill at any
// moment leaves each file either unchanged or changed with its previous
// version in history. Then it commits to git (when enabled) and
// re-indexes. It returns ok=false when the user declined.
func (p *Pipeline) applyPatch(ctx context.Context, st *cycleState, pt *patch.Patch, dry *patch.Changeset, role string) (bool, error) {
	p.emit(Event{Type: EventPatch, Role: role, Changes: dry})
	yes, err := p.ask(ctx, Question{Kind: AskApply, Title: "Apply this patch?", Detail: dry.Summary() + "\n" + dry.Diff()})
	if err != nil || !yes {
		return false, err
	}
	var before *codegraph.Graph
	if p.cfg.Graph != nil {
		before = p.cfg.Graph.Graph()
	}
	var applied *patch.Changeset
	var landed *Landed
	var recordErr error
	err = p.step("apply", func() (string, error) {
		var err error
		applied, err = patch.Prepare(p.cfg.Root, pt, patch.Options{AllowOverwrite: p.policy.AllowOverwrite})
		if err != nil {
			return "", err
		}
		if p.cfg.Memory != nil {
			if landed, err = p.recordLanded(applied, role); err != nil {
				recordErr = err
				return "", err
			}
		}
		p.hook("apply:recorded")
		if err := patch.Write(ctx, applied); err != nil {
			return "", err
		}
		p.hook("apply:written")
		return strings.TrimSpace(applied.Summary()), nil
	})
	if recordErr != nil {
		return true, recordErr // nothing was written: the store failed
	}
	if err != nil {
		if ctx.Err() != nil {
			return true, err
		}
		return true, &applyFailed{err}
	}
	st.c.Changes = append(st.c.Changes, applied)
	st.noteChanges(applied)
	st.lastDiff = applied.Diff()
	p.emit(Event{Type: EventApplied, Role: role, Changes: applied})
	p.commitLanded(ctx, st, applied, landed, role)
	if p.cfg.Graph != nil {
		var paths []string
		for _, ch := range applied.Changes {
			paths = append(paths, ch.Path)
		}
		if err := p.step("reindex", func() (string, error) {
			g, err := p.cfg.Graph.UpdateFiles(ctx, paths)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d files, graph has %d nodes", len(paths), len(g.Nodes())), nil
		}); err != nil {
			p.log.Warn("re-index after patch", "err", err)
		} else if p.cfg.Memory != nil && before != nil {
			reason := fmt.Sprintf("%sbefore %s patch in session %s", NodeVersionPrefix, role, p.session)
			for _, ch := range applied.Changes {
				for _, v := range nodeVersions(before, p.cfg.Graph.Graph(), ch, reason) {
					if _, err := p.cfg.Memory.AddVersion(v); err != nil {
						return true, fmt.Errorf("record previous version of %s: %w", v.NodeName, err)
					}
				}
			}
		}
	}
	return true, nil
}

// writeTests asks the tester role for tests of the first patch and applies
// them after approval. An unusable answer is noted, not fatal.
func (p *Pipeline) writeTests(ctx context.Context, st *cycleState) error {
	var pt *patch.Patch
	var dry *patch.Changeset
	err := p.step("tests", func() (string, error) {
		var err error
		pt, dry, err = p.propose(ctx, RoleTester, "tester", st)
		return "", err
	})
	var unusable *unusableError
	if errors.As(err, &unusable) {
		p.emit(Event{Type: EventInfo, Role: RoleTester, Text: "no tests added: " + unusable.Error()})
		return nil
	}
	if err != nil {
		return err
	}
	_, err = p.applyPatch(ctx, st, pt, dry, RoleTester)
	return err
}

// dryRun applies the patch to a scratch copy of the files it touches and
// compiles the Python files it produces there (compile() only parses;
// nothing is executed and no bytecode is written), so only a patch that applies and
// compiles is offered for approval.
func (p *Pipeline) dryRun(ctx context.Context, pt *patch.Patch) (*patch.Changeset, error) {
	scratch, err := patch.NewDryRunDir()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	for _, rel := range pt.Paths() {
		abs, clean, err := patch.Confine(p.cfg.Root, rel)
		if err != nil {
			continue // Prepare reports it
		}
		// Only regular files, never blocking: Prepare reports the others.
		if data, err := patch.ReadRegular(abs, patch.MaxFileSize); err == nil {
			if err := patch.WriteFile(scratch, clean, data, permOf(abs)); err != nil {
				return nil, fmt.Errorf("dry run: copy %s: %w", clean, err)
			}
		}
	}
	cs, err := patch.DryRun(ctx, p.cfg.Root, scratch, pt, patch.Options{AllowOverwrite: p.policy.AllowOverwrite})
	if err != nil {
		return cs, err
	}
	var pyFiles []string
	for _, ch := range cs.Changes {
		if ch.NewExists && strings.HasSuffix(ch.Path, ".py") {
			pyFiles = append(pyFiles, ch.Path)
		}
	}
	if len(pyFiles) == 0 {
		return cs, nil
	}
	py, err := runtime.FindPython(p.cfg.Root)
	if err != nil {
		return cs, nil // the syntax gate will say so after applying
	}
	timeout := time.Minute
	res, err := p.runner.Run(ctx, runtime.Spec{
		Command: pySyntaxCommand(py, pyFiles), Dir: scratch,
		Timeout: timeout, OutputCap: 64 << 10, Origin: "dry-run:syntax", SampleEvery: -1,
		Env:     []string{"PYTHONDONTWRITEBYTECODE=1"},
		Confine: true, // generated code is only parsed, but nothing outside the scratch copy needs writing
	})
	if err != nil {
		return cs, fmt.Errorf("dry run: compile check: %w", err)
	}
	if res.Limit != "" {
		what := "was ended by the " + res.Limit + " limit"
		if res.Limit == runtime.LimitTimeout {
			what = fmt.Sprintf("timed out after %s", timeout)
		}
		return cs, fmt.Errorf("the compile check of the patched code %s, so it could not be judged (the machine may be busy, or a file is very large)", what)
	}
	if !res.OK() {
		out := strings.ReplaceAll(string(res.Stderr)+string(res.Stdout), scratch+string(filepath.Separator), "")
		return cs, fmt.Errorf("the patched code does not compile:\n%s", clipText(strings.TrimSpace(out), 2000))
	}
	return cs, nil
}
