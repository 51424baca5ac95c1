package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"codeloom/app/patch"
	"codeloom/app/pipeline/vcs"
)

// commitLanded commits a landed patch to git when the policy (or --commit)
// asks for it: only the files the patch touched, on the current branch,
// with a message saying what changed and why. A failure is reported as a
// note; the patch stays applied either way.
func (p *Pipeline) commitLanded(ctx context.Context, st *cycleState, cs *patch.Changeset, l *Landed, role string) {
	if !p.policy.Git.Commit {
		return
	}
	var paths []string
	for _, ch := range cs.Changes {
		paths = append(paths, ch.Path)
	}
	var hash string
	err := p.step("commit", func() (string, error) {
		repo, err := vcs.Open(ctx, p.cfg.Root)
		if err != nil {
			return "", err
		}
		hash, err = repo.CommitPaths(ctx, paths, p.commitMessage(st, cs, role))
		if err != nil {
			return "", err
		}
		if hash == "" {
			return "nothing to commit", nil
		}
		return fmt.Sprintf("%.12s: %s", hash, strings.Join(paths, ", ")), nil
	})
	if err != nil {
		why := err.Error()
		if errors.Is(err, vcs.ErrNotRepo) {
			why = "the project is not in a git repository"
		}
		p.emit(Event{Type: EventInfo, Text: "not committed (" + why + "); the patch stays applied"})
		return
	}
	if hash != "" && l != nil {
		if j, ok := p.cfg.Memory.(Journal); ok {
			l.Commit = hash
			if err := putLanded(j, l); err != nil {
				p.log.Warn("record commit of landed patch", "err", err)
			}
		}
	}
}

// commitMessage says what a patch changed and why: the request, the plan
// step or the failure it answers, and the files.
func (p *Pipeline) commitMessage(st *cycleState, cs *patch.Changeset, role string) string {
	req := strings.TrimSpace(st.c.Request)
	subject, _, _ := strings.Cut(req, "\n")
	subject = clipText(strings.TrimSpace(subject), 60)
	if role == RoleDebugger {
		subject = "fix checks for: " + subject
	} else if role == RoleTester {
		subject = "tests for: " + subject
	}
	var b strings.Builder
	fmt.Fprintf(&b, "codeloom: %s\n\n", subject)
	fmt.Fprintf(&b, "Why: %s\n", req)
	if st.failure != nil && role == RoleDebugger {
		fmt.Fprintf(&b, "\nIt answers this failure:\n%s\n", failureSummary(st.failure))
	} else if st.c.Plan != nil && len(st.c.Plan.Steps) > 0 {
		fmt.Fprintf(&b, "\nPlan:\n%s", st.c.Plan.Text())
	}
	fmt.Fprintf(&b, "\nWhat changed (%s patch, attempt %d):\n%s", role, st.c.Attempts, cs.Summary())
	fmt.Fprintf(&b, "\nCodeLoom task %s; undo with `codeloom undo`.\n", p.session)
	return b.String()
}
