package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"codeloom/app/memory"
	"codeloom/app/patch"
	"codeloom/app/pipeline/vcs"
)

// File states in an UndoPlan.
const (
	UndoLanded    = "landed"    // holds what the patch wrote: will be restored
	UndoUnchanged = "unchanged" // already holds its previous content: nothing to do
	UndoConflict  = "conflict"  // changed since (by hand?): restored only with Force
)

// UndoFile is one file of an UndoPlan.
type UndoFile struct {
	Path         string
	State        string // one of the Undo* states
	TargetExists bool   // false: restoring deletes the file (the patch created it)
	Target       []byte // the content before the first reverted patch
}

// UndoPlan is what RollbackTask or UndoLast would do: the landed patches to
// revert (newest first) and each file they touched.
type UndoPlan struct {
	Root    string
	Entries []Landed
	Files   []UndoFile
	What    string // "rollback of task …" or "undo of …", for records and messages
}

// Pending is the number of patches the plan reverts.
func (u *UndoPlan) Pending() int {
	if u == nil {
		return 0
	}
	return len(u.Entries)
}

// Conflicts lists the files changed since their patch landed.
func (u *UndoPlan) Conflicts() []string {
	var out []string
	for _, f := range u.Files {
		if f.State == UndoConflict {
			out = append(out, f.Path)
		}
	}
	return out
}

// Describe lists the patches and files, for a yes/no question.
func (u *UndoPlan) Describe() string {
	var b strings.Builder
	for _, e := range u.Entries {
		fmt.Fprintf(&b, "%s %s patch, task %s", e.Time.Local().Format("2006-01-02 15:04:05"), e.Role, e.Session)
		if e.Commit != "" {
			fmt.Fprintf(&b, ", commit %.12s", e.Commit)
		}
		b.WriteByte('\n')
		for _, l := range strings.Split(e.Summary, "\n") {
			if l != "" {
				b.WriteString("  " + l + "\n")
			}
		}
	}
	for _, f := range u.Files {
		action := "restore"
		if !f.TargetExists {
			action = "delete (the task created it)"
		}
		switch f.State {
		case UndoUnchanged:
			action = "already as before: left alone"
		case UndoConflict:
			action += " — CHANGED since the patch landed: only with --force"
		}
		fmt.Fprintf(&b, "%s: %s\n", f.Path, action)
	}
	return b.String()
}

// PlanRollback plans putting back every file the task (pipeline session)
// changed, as it was before the task's first patch. A plan with no entries
// means there is nothing left to roll back.
func PlanRollback(root string, st ChangeStore, session string) (*UndoPlan, error) {
	if session == "" {
		return nil, errors.New("rollback: no task id")
	}
	all, err := LandedChanges(st, session)
	if err != nil {
		return nil, err
	}
	var live []Landed
	for _, l := range all {
		if l.Undone == "" {
			live = append(live, l)
		}
	}
	u, err := planUndo(root, st, live)
	if err != nil {
		return nil, fmt.Errorf("rollback task %s: %w", session, err)
	}
	u.What = "rollback of task " + session
	return u, nil
}

// LastSession returns the session of the newest landed patch that is not
// undone, or "" when there is none.
func LastSession(j Journal) (string, error) {
	all, err := LandedChanges(j, "")
	if err != nil {
		return "", err
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Undone == "" {
			return all[i].Session, nil
		}
	}
	return "", nil
}

// PlanUndo plans reverting the newest landed patch that is still in place
// (a record whose files never changed, because the process died before
// writing them, is passed over).
func PlanUndo(root string, st ChangeStore) (*UndoPlan, error) {
	all, err := LandedChanges(st, "")
	if err != nil {
		return nil, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Undone != "" {
			continue
		}
		u, err := planUndo(root, st, all[i:i+1])
		if err != nil {
			return nil, fmt.Errorf("undo: %w", err)
		}
		if u.Pending() > 0 {
			u.What = "undo of the " + all[i].Role + " patch of task " + all[i].Session
			return u, nil
		}
	}
	return &UndoPlan{Root: root, What: "undo"}, nil
}

// planUndo judges the files of entries (oldest first): each goes back to
// the content before the first entry that touched it, and must now hold
// what one of the entries wrote — normally the last; an earlier one when
// the process died after recording a later patch and before writing it
// (records are stored before their files are written).
func planUndo(root string, st ChangeStore, entries []Landed) (*UndoPlan, error) {
	u := &UndoPlan{Root: root}
	first := map[string]LandedFile{}
	written := map[string][]LandedFile{}
	var order []string
	for _, e := range entries {
		for _, f := range e.Files {
			if _, ok := first[f.Path]; !ok {
				first[f.Path] = f
				order = append(order, f.Path)
			}
			written[f.Path] = append(written[f.Path], f)
		}
	}
	work := false
	for _, path := range order {
		f := UndoFile{Path: path, TargetExists: first[path].OldExists}
		if f.TargetExists {
			v, err := st.Version(first[path].OldVersion)
			if err != nil {
				return nil, fmt.Errorf("%s: the kept previous version is missing: %w", path, err)
			}
			f.Target = v.Content
		}
		cur, exists, err := readCurrent(root, path)
		if err != nil {
			return nil, err
		}
		switch {
		case holdsAny(written[path], cur, exists):
			f.State = UndoLanded
			work = true
		case exists == f.TargetExists && (!exists || bytes.Equal(cur, f.Target)):
			f.State = UndoUnchanged
		default:
			f.State = UndoConflict
			work = true
		}
		u.Files = append(u.Files, f)
	}
	if work {
		for i := len(entries) - 1; i >= 0; i-- {
			u.Entries = append(u.Entries, entries[i])
		}
	}
	return u, nil
}

// holdsAny reports whether a file's current content (cur, or its absence)
// is what one of the landed patches ws wrote.
func holdsAny(ws []LandedFile, cur []byte, exists bool) bool {
	sum := ""
	if exists {
		sum = sha(cur)
	}
	for _, w := range ws {
		if exists == w.NewExists && (!exists || sum == w.NewSHA256) {
			return true
		}
	}
	return false
}

// readCurrent reads a project file as it is now (never blocking).
func readCurrent(root, path string) ([]byte, bool, error) {
	abs, _, err := patch.Confine(root, path)
	if err != nil {
		return nil, false, err
	}
	cur, err := patch.ReadRegular(abs, patch.MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if errors.Is(err, patch.ErrTooLarge) {
		return nil, true, nil // not what a patch wrote: a conflict
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	return cur, true, nil
}

// UndoOptions tune ApplyUndo.
type UndoOptions struct {
	// Force restores files changed since their patch landed (their current
	// content is kept as a version first).
	Force bool
	// NoCommit skips the revert commit that is otherwise made when a
	// reverted patch had been committed to git.
	NoCommit bool
}

// UndoResult is what ApplyUndo did.
type UndoResult struct {
	Restored []string // files put back or deleted
	Commit   string   // the git commit of the revert, if one was made
	Note     string   // e.g. why no commit was made
}

// ApplyUndo carries out a plan: every file's current content is kept as a
// version first (so the undo itself can be undone from history), then the
// previous content is written (or the created file deleted), then the
// patches are marked undone. With a conflict and no Force nothing is
// written. When a reverted patch was committed to git, the restored files
// are committed as a revert (only those files; see vcs.CommitPaths).
func ApplyUndo(ctx context.Context, st ChangeStore, u *UndoPlan, opts UndoOptions) (*UndoResult, error) {
	res := &UndoResult{}
	if u == nil || u.Pending() == 0 {
		return res, nil
	}
	if c := u.Conflicts(); len(c) > 0 && !opts.Force {
		return res, fmt.Errorf("%s: %s changed since the patch landed; nothing was restored (use force to overwrite)", u.What, strings.Join(c, ", "))
	}
	for _, f := range u.Files {
		if f.State == UndoUnchanged {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("%s: %w", u.What, err)
		}
		cur, exists, err := readCurrent(u.Root, f.Path)
		if err != nil {
			return res, fmt.Errorf("%s: %w", u.What, err)
		}
		reason := "before " + u.What
		if !exists {
			reason += " " + createdMarker
		}
		if _, err := st.AddVersion(memory.Version{Path: f.Path, Content: cur, Reason: reason}); err != nil {
			return res, fmt.Errorf("%s: keep the current content of %s: %w", u.What, f.Path, err)
		}
		if f.TargetExists {
			abs, _, _ := patch.Confine(u.Root, f.Path)
			err = patch.WriteFile(u.Root, f.Path, f.Target, permOf(abs))
		} else {
			err = patch.RemoveFile(u.Root, f.Path)
		}
		if err != nil {
			return res, fmt.Errorf("%s: %w", u.What, err)
		}
		res.Restored = append(res.Restored, f.Path)
	}
	var commits []string
	for i := range u.Entries {
		u.Entries[i].Undone = u.What
		if u.Entries[i].Commit != "" {
			commits = append(commits, u.Entries[i].Commit)
		}
		if err := putLanded(st, &u.Entries[i]); err != nil {
			return res, fmt.Errorf("%s: %w", u.What, err)
		}
	}
	if len(commits) == 0 || len(res.Restored) == 0 {
		return res, nil
	}
	if opts.NoCommit {
		res.Note = "the reverted patches were committed; the revert is left uncommitted"
		return res, nil
	}
	repo, err := vcs.Open(ctx, u.Root)
	if err != nil {
		res.Note = "the reverted patches were committed, but no revert commit was made: " + err.Error()
		return res, nil
	}
	var short []string
	for _, c := range commits {
		short = append(short, c[:min(12, len(c))])
	}
	msg := fmt.Sprintf("codeloom: %s\n\nThis reverts commit %s.\nFiles restored: %s\n", u.What, strings.Join(short, ", "), strings.Join(res.Restored, ", "))
	hash, err := repo.CommitPaths(ctx, res.Restored, msg)
	if err != nil {
		return res, fmt.Errorf("%s: files restored, but the revert commit failed: %w", u.What, err)
	}
	res.Commit = hash
	for i := range u.Entries {
		u.Entries[i].Revert = hash
		if err := putLanded(st, &u.Entries[i]); err != nil {
			return res, fmt.Errorf("%s: %w", u.What, err)
		}
	}
	return res, nil
}

// RollbackTask puts back every file a task (pipeline session) changed, as
// it was before the task — the one-step rollback the GUI and CLI offer
// after a failed task. It returns what was done; with nothing left to roll
// back it does nothing.
func RollbackTask(ctx context.Context, root string, st ChangeStore, session string, opts UndoOptions) (*UndoResult, error) {
	u, err := PlanRollback(root, st, session)
	if err != nil {
		return nil, err
	}
	return ApplyUndo(ctx, st, u, opts)
}

// UndoLast reverts the newest landed patch still in place.
func UndoLast(ctx context.Context, root string, st ChangeStore, opts UndoOptions) (*UndoResult, error) {
	u, err := PlanUndo(root, st)
	if err != nil {
		return nil, err
	}
	return ApplyUndo(ctx, st, u, opts)
}

// NeedsRollbackOffer reports whether a finished Run should offer to roll
// the task back: it did not reach its goal, its last cycle failed, stopped,
// errored or was rejected (a user who declined to run the checks keeps the
// patches they approved), and it changed files.
func NeedsRollbackOffer(out *Outcome) bool {
	c := out.Last()
	if c == nil || out.OK() {
		return false
	}
	switch c.Status {
	case StatusFailed, StatusStopped, StatusError, StatusRejected:
	default:
		return false
	}
	for _, cy := range out.Cycles {
		if len(cy.Changes) > 0 {
			return true
		}
	}
	return false
}

// OfferRollback asks the Approver "Roll back the N changes this task
// made?" after a failed Run and, on yes, puts every file the session
// changed back as it was (see RollbackTask). It returns nil when there was
// nothing to offer or the answer was no. Under an AutoApprover (--yes) the
// answer is yes: an unattended task that failed leaves the project as it
// found it.
func (p *Pipeline) OfferRollback(ctx context.Context, out *Outcome) (*UndoResult, error) {
	if !NeedsRollbackOffer(out) {
		return nil, nil
	}
	st, ok := p.cfg.Memory.(ChangeStore)
	if !ok {
		return nil, nil
	}
	u, err := PlanRollback(p.cfg.Root, st, p.session)
	if err != nil {
		return nil, err
	}
	if u.Pending() == 0 {
		return nil, nil
	}
	title := fmt.Sprintf("Roll back the %d changes this task made?", u.Pending())
	if u.Pending() == 1 {
		title = "Roll back the 1 change this task made?"
	}
	yes, err := p.ask(ctx, Question{Kind: AskRollback, Title: title, Detail: u.Describe()})
	if err != nil || !yes {
		return nil, err
	}
	var res *UndoResult
	err = p.step("rollback", func() (string, error) {
		var err error
		res, err = ApplyUndo(ctx, st, u, UndoOptions{})
		if err != nil {
			return "", err
		}
		d := fmt.Sprintf("%d files restored", len(res.Restored))
		if res.Commit != "" {
			d += fmt.Sprintf(", revert commit %.12s", res.Commit)
		}
		return d, nil
	})
	return res, err
}
