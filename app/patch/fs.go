package patch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MaxFileSize is the largest file a patch may edit.
const MaxFileSize = 8 << 20

// Actions a patch performs on a file.
const (
	ActionCreate = "create"
	ActionModify = "modify"
	ActionDelete = "delete"
)

// Change is the effect of a patch on one file: enough to apply it, show it
// and revert it.
type Change struct {
	Path      string      `json:"path"` // slash-separated, relative to the root
	Action    string      `json:"action"`
	Old       []byte      `json:"old,omitempty"`
	OldExists bool        `json:"old_exists"`
	Mode      fs.FileMode `json:"mode"`
	New       []byte      `json:"new,omitempty"`
	NewExists bool        `json:"new_exists"`
	Added     int         `json:"added"`   // lines added
	Removed   int         `json:"removed"` // lines removed
	Diff      string      `json:"diff"`    // unified diff old → new
	Err       string      `json:"error,omitempty"`
	Blocks    []int       `json:"blocks"` // answer blocks that touched the file
}

// Changeset is a patch resolved against a project: one Change per file, in
// the order the answer first touched them. A Changeset returned by Apply is
// the revert record.
type Changeset struct {
	Root    string   `json:"root"`
	Changes []Change `json:"changes"`
}

// OK reports whether every file's edits applied cleanly.
func (c *Changeset) OK() bool {
	for _, ch := range c.Changes {
		if ch.Err != "" {
			return false
		}
	}
	return true
}

// Err joins the per-file errors, or returns nil.
func (c *Changeset) Err() error {
	var errs []error
	for _, ch := range c.Changes {
		if ch.Err != "" {
			errs = append(errs, errors.New(ch.Err))
		}
	}
	return errors.Join(errs...)
}

// Diff returns the unified diff of every change, concatenated.
func (c *Changeset) Diff() string {
	var b strings.Builder
	for _, ch := range c.Changes {
		b.WriteString(ch.Diff)
	}
	return b.String()
}

// Summary is a one-line-per-file summary ("modify a.py +1 -1").
func (c *Changeset) Summary() string {
	var b strings.Builder
	for _, ch := range c.Changes {
		fmt.Fprintf(&b, "%s %s +%d -%d", ch.Action, ch.Path, ch.Added, ch.Removed)
		if ch.Err != "" {
			b.WriteString(" FAILED")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Confine resolves rel against root and refuses paths that leave it:
// absolute paths, ".." escapes, paths whose existing part resolves through a
// symlink outside root, and paths inside .git or .codeloom. It returns the
// path to write (symlinks inside the root resolved) and the cleaned relative
// path.
func Confine(root, rel string) (abs, clean string, err error) {
	refuse := func(why string) (string, string, error) { return "", "", &PathError{Path: rel, Reason: why} }
	switch {
	case strings.TrimSpace(rel) == "":
		return refuse("empty path")
	case strings.ContainsRune(rel, 0):
		return refuse("contains a NUL byte")
	case filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || filepath.VolumeName(rel) != "" ||
		(len(rel) >= 2 && rel[1] == ':'):
		return refuse("absolute paths are not allowed; use a path relative to the project root")
	case strings.HasPrefix(rel, "~"):
		return refuse("home-relative paths are not allowed; use a path relative to the project root")
	}
	clean = path.Clean(strings.ReplaceAll(rel, `\`, "/"))
	if clean == "." {
		return refuse("names the project root itself, not a file")
	}
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return refuse("escapes the project root with \"..\"")
	}
	if g := guardedPart(clean); g != "" {
		return refuse("inside " + g + ", which CodeLoom never edits")
	}
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", "", fmt.Errorf("resolve project root %s: %w", root, err)
	}
	full := filepath.Join(rootReal, filepath.FromSlash(clean))
	existing := full
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing || len(parent) < len(rootReal) {
			existing = rootReal
			break
		}
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return refuse(fmt.Sprintf("is or passes through a symlink that does not resolve (dangling, a loop, or outside the project root): %v", err))
	}
	if r, err := filepath.Rel(rootReal, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return refuse("resolves outside the project root through a symlink")
	}
	remainder, _ := filepath.Rel(existing, full)
	abs = real
	if remainder != "." {
		abs = filepath.Join(real, remainder)
	}
	// A symlink inside the project may point into .git or .codeloom
	// ("gitmeta -> .git"): judge the resolved path by the same rule.
	if r, err := filepath.Rel(rootReal, abs); err == nil {
		if g := guardedPart(filepath.ToSlash(r)); g != "" {
			return refuse("resolves through a symlink into " + g + ", which CodeLoom never edits")
		}
	}
	if abs == rootReal {
		return refuse("resolves to the project root itself, not a file")
	}
	return abs, clean, nil
}

// guardedPart returns the protected folder (".git" or ".codeloom") a slash
// path passes through, or "". Case-insensitive: on macOS and Windows ".GIT"
// is ".git".
func guardedPart(slashPath string) string {
	for _, part := range strings.Split(slashPath, "/") {
		for _, guarded := range []string{".git", ".codeloom"} {
			if strings.EqualFold(part, guarded) {
				return guarded
			}
		}
	}
	return ""
}

// fileState is the evolving content of one file while a patch is resolved.
type fileState struct {
	change  Change
	abs     string
	content string
	exists  bool
}

// Prepare resolves a patch against the files under root without writing
// anything. Per-file problems (refused path, unreadable file, a block that
// does not apply) are recorded in Change.Err and joined in the returned
// error; the other files are still resolved so a report can show them all.
func Prepare(root string, p *Patch, opts Options) (*Changeset, error) {
	cs := &Changeset{Root: root}
	states := map[string]*fileState{}
	var order []string
	for _, e := range p.Edits {
		abs, clean, err := Confine(root, e.Path)
		key := clean
		if err != nil {
			key = "!" + e.Path
		}
		st, ok := states[key]
		if !ok {
			st = &fileState{abs: abs, change: Change{Path: clean, Mode: 0o644}}
			if err != nil {
				st.change.Path = e.Path
				st.change.Err = fmt.Sprintf("block %d: %v", e.Block, err)
			} else if err := st.load(); err != nil {
				st.change.Err = fmt.Sprintf("block %d for %s: %v", e.Block, clean, err)
			}
			states[key] = st
			order = append(order, key)
		}
		st.change.Blocks = append(st.change.Blocks, e.Block)
		if st.change.Err != "" {
			continue
		}
		content, exists, err := applyEdit(e, st.content, st.exists, opts)
		if err != nil {
			st.change.Err = err.Error()
			continue
		}
		if exists && len(content) > MaxFileSize {
			st.change.Err = fmt.Sprintf("block %d for %s: the result would be %d bytes, larger than the %d-byte limit for a patched file", e.Block, st.change.Path, len(content), MaxFileSize)
			continue
		}
		st.content, st.exists = content, exists
	}
	for _, key := range order {
		st := states[key]
		ch := st.change
		if ch.Err == "" {
			ch.NewExists = st.exists
			if st.exists {
				ch.New = []byte(st.content)
			}
			switch {
			case !ch.OldExists && ch.NewExists:
				ch.Action = ActionCreate
			case ch.OldExists && !ch.NewExists:
				ch.Action = ActionDelete
			case ch.OldExists:
				ch.Action = ActionModify
			default:
				ch.Err = fmt.Sprintf("%s: the patch creates and deletes the file", ch.Path)
			}
			ch.Diff, ch.Added, ch.Removed = UnifiedDiff(ch.Path, string(ch.Old), string(ch.New), ch.OldExists, ch.NewExists)
		}
		cs.Changes = append(cs.Changes, ch)
	}
	if err := cs.Err(); err != nil {
		return cs, fmt.Errorf("patch does not apply: %w", err)
	}
	return cs, nil
}

// load reads the file's current content into the state. Only regular
// files are read, never blocking (a FIFO or device is refused).
func (st *fileState) load() error {
	fi, err := os.Lstat(st.abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > MaxFileSize {
		return fmt.Errorf("file is %d bytes, larger than the %d-byte limit for patching", fi.Size(), MaxFileSize)
	}
	data, err := ReadRegular(st.abs, MaxFileSize)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return errors.New("binary file (contains NUL bytes); it cannot be patched as text")
	}
	st.content = string(data)
	st.exists = true
	st.change.Old = data
	st.change.OldExists = true
	st.change.Mode = fi.Mode().Perm()
	return nil
}

// Apply resolves the patch against root and, only if every file applies
// cleanly, writes each file atomically (temp file + rename in the same
// directory, mode kept). If a write fails, the files already written are
// restored. The returned Changeset is the revert record.
func Apply(ctx context.Context, root string, p *Patch, opts Options) (*Changeset, error) {
	cs, err := Prepare(root, p, opts)
	if err != nil {
		return cs, err
	}
	if err := Write(ctx, cs); err != nil {
		return cs, err
	}
	return cs, nil
}

// Write writes a Changeset made by Prepare, so a caller can record what it
// will change (the revert record) before anything is written. It first
// checks that every file still holds what Prepare read and writes nothing
// when one does not (a *ConflictError); then each file is written
// atomically, and the files already written are restored if a write fails.
func Write(ctx context.Context, cs *Changeset) error {
	if cs == nil {
		return errors.New("apply patch: no changeset")
	}
	if err := cs.Err(); err != nil {
		return fmt.Errorf("apply patch: %w", err)
	}
	for _, ch := range cs.Changes {
		if err := holds(cs.Root, ch.Path, ch.OldExists, ch.Old); err != nil {
			var ce *ConflictError
			if errors.As(err, &ce) {
				ce.Applying = true
			}
			return fmt.Errorf("apply patch: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("apply patch: %w", err)
	}
	return commit(cs.Root, cs.Changes, false)
}

// holds checks that the file rel under root exists (or not) with content
// data; a difference is a *ConflictError.
func holds(root, rel string, exists bool, data []byte) error {
	abs, _, err := Confine(root, rel)
	if err != nil {
		return err
	}
	cur, err := ReadRegular(abs, MaxFileSize)
	have := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", rel, err)
	}
	if have != exists || (have && !bytes.Equal(cur, data)) {
		return &ConflictError{Path: rel}
	}
	return nil
}

// commit writes the new side (or, reverse, the old side) of every change.
func commit(root string, changes []Change, reverse bool) error {
	var done []Change
	for _, ch := range changes {
		if err := writeSide(root, ch, !reverse); err != nil {
			rbErr := commitRollback(root, done, reverse)
			return errors.Join(fmt.Errorf("write %s: %w", ch.Path, err), rbErr)
		}
		done = append(done, ch)
	}
	return nil
}

// writeSide writes the new side of ch (newSide) or its old side, removing
// the file when that side does not exist.
func writeSide(root string, ch Change, newSide bool) error {
	exists, data := ch.OldExists, ch.Old
	if newSide {
		exists, data = ch.NewExists, ch.New
	}
	if exists {
		return WriteFile(root, ch.Path, data, ch.Mode)
	}
	return RemoveFile(root, ch.Path)
}

// commitRollback undoes the changes in done, newest first.
func commitRollback(root string, done []Change, reverse bool) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		ch := done[i]
		if err := writeSide(root, ch, reverse); err != nil {
			errs = append(errs, fmt.Errorf("roll back %s: %w", ch.Path, err))
		}
	}
	return errors.Join(errs...)
}

// ConflictError reports a file that no longer holds what was expected: it
// changed since the patch was prepared (Applying) or applied.
type ConflictError struct {
	Path     string
	Applying bool
}

// Error implements error.
func (e *ConflictError) Error() string {
	if e.Applying {
		return fmt.Sprintf("%s changed since the patch was prepared; nothing was written", e.Path)
	}
	return fmt.Sprintf("%s changed since the patch was applied; not reverting it (use force to overwrite)", e.Path)
}

// Revert restores every file of an applied Changeset to its previous content
// (deleting files the patch created). Unless force is set it first checks
// that every file still holds what the patch wrote, and reverts nothing if
// one does not.
func Revert(ctx context.Context, cs *Changeset, force bool) error {
	if cs == nil {
		return errors.New("revert: no changeset")
	}
	if !force {
		for _, ch := range cs.Changes {
			if err := holds(cs.Root, ch.Path, ch.NewExists, ch.New); err != nil {
				return fmt.Errorf("revert: %w", err)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("revert: %w", err)
	}
	rev := make([]Change, len(cs.Changes))
	for i := range cs.Changes {
		rev[i] = cs.Changes[len(cs.Changes)-1-i]
	}
	if err := commit(cs.Root, rev, true); err != nil {
		return fmt.Errorf("revert: %w", err)
	}
	return nil
}

// WriteFile writes data to the confined path rel under root atomically: a
// temporary file in the same directory, synced, given mode (0644 when 0),
// then renamed over the target. Missing parent directories are created.
func WriteFile(root, rel string, data []byte, mode fs.FileMode) error {
	abs, _, err := Confine(root, rel)
	if err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(abs)+".codeloom-*")
	if err != nil {
		return fmt.Errorf("create temp file in %s: %w", dir, err)
	}
	name := tmp.Name()
	cleanup := func(e error) error {
		tmp.Close()
		os.Remove(name)
		return e
	}
	if _, err := tmp.Write(data); err != nil {
		return cleanup(fmt.Errorf("write %s: %w", name, err))
	}
	if err := tmp.Chmod(mode.Perm()); err != nil {
		return cleanup(fmt.Errorf("chmod %s: %w", name, err))
	}
	if err := tmp.Sync(); err != nil {
		return cleanup(fmt.Errorf("sync %s: %w", name, err))
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("close %s: %w", name, err)
	}
	if err := os.Rename(name, abs); err != nil {
		os.Remove(name)
		return fmt.Errorf("rename onto %s: %w", abs, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: persist the rename
		d.Close()
	}
	return nil
}

// RemoveFile deletes the confined path rel under root; a missing file is not
// an error.
func RemoveFile(root, rel string) error {
	abs, _, err := Confine(root, rel)
	if err != nil {
		return err
	}
	if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", rel, err)
	}
	return nil
}

// DryRun resolves the patch against root (confinement is always judged
// against root) and writes the result into scratch, a copy of the project
// (for instance a runtime workspace), so checks can run there. With an empty
// scratch, a temporary directory holding copies of just the touched files is
// used and removed afterwards. The Changeset reports each file; the error is
// non-nil when any file failed.
func DryRun(ctx context.Context, root, scratch string, p *Patch, opts Options) (*Changeset, error) {
	cs, err := Prepare(root, p, opts)
	if err != nil {
		return cs, err
	}
	if scratch == "" {
		dir, err := NewDryRunDir()
		if err != nil {
			return cs, err
		}
		defer os.RemoveAll(dir)
		for _, ch := range cs.Changes {
			if ch.OldExists {
				if err := WriteFile(dir, ch.Path, ch.Old, ch.Mode); err != nil {
					return cs, fmt.Errorf("dry run: copy %s: %w", ch.Path, err)
				}
			}
		}
		scratch = dir
	}
	if err := ctx.Err(); err != nil {
		return cs, fmt.Errorf("dry run: %w", err)
	}
	// Re-resolve on the scratch copy so the check covers what is there.
	sc, err := Prepare(scratch, p, opts)
	if err != nil {
		return sc, fmt.Errorf("dry run on scratch copy: %w", err)
	}
	if err := commit(scratch, sc.Changes, false); err != nil {
		return cs, fmt.Errorf("dry run: %w", err)
	}
	return cs, nil
}
