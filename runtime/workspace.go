package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// skippedDirs are never copied into a workspace nor diffed.
var skippedDirs = map[string]bool{".git": true, ".codeloom": true, "__pycache__": true, ".pytest_cache": true, ".mypy_cache": true}

// linkedDirs are environments that are not copied but linked into the
// workspace, so runs there use the project's own interpreter and packages.
var linkedDirs = map[string]bool{".venv": true, "venv": true, "node_modules": true}

// Workspace is a scratch copy of a project in a temporary directory, where
// patches are dry-run and programs may write freely without touching the
// user's files. Close removes it.
type Workspace struct {
	src     string
	dir     string
	include func(rel string) bool
	copied  map[string]bool // slash-separated relative paths of copied files
}

// FileChange is one file a run changed in a workspace, compared with the
// project folder.
type FileChange struct {
	Path   string `json:"path"`   // slash-separated, relative to the project
	Status string `json:"status"` // "added", "modified" or "deleted"
	Binary bool   `json:"binary,omitempty"`
	Diff   string `json:"diff"` // unified diff (a/ and b/ prefixes), or a binary note
}

// NewWorkspace copies projectDir into a new temporary directory. include,
// when not nil, selects the files to copy by their slash-separated path
// relative to projectDir. .git, .codeloom and caches are skipped; .venv,
// venv and node_modules at the top level are symlinked rather than copied.
// Symlinks inside the project are copied as symlinks (never followed).
func NewWorkspace(projectDir string, include func(rel string) bool) (*Workspace, error) {
	src, err := filepath.Abs(projectDir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace: %s is not a directory", projectDir)
	}
	dir, err := os.MkdirTemp("", "codeloom-ws-")
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	w := &Workspace{src: src, dir: dir, include: include, copied: map[string]bool{}}
	if err := w.copyTree(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return w, nil
}

// Dir returns the workspace directory.
func (w *Workspace) Dir() string { return w.dir }

// Close removes the workspace directory.
func (w *Workspace) Close() error {
	if err := os.RemoveAll(w.dir); err != nil {
		return fmt.Errorf("workspace: remove %s: %w", w.dir, err)
	}
	return nil
}

func (w *Workspace) copyTree() error {
	return filepath.WalkDir(w.src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("workspace: copy %s: %w", p, err)
		}
		rel, _ := filepath.Rel(w.src, p)
		if rel == "." {
			return nil
		}
		slash := filepath.ToSlash(rel)
		target := filepath.Join(w.dir, rel)
		name := d.Name()
		if d.IsDir() {
			if skippedDirs[name] {
				return filepath.SkipDir
			}
			if linkedDirs[name] && !strings.Contains(slash, "/") {
				if err := os.Symlink(p, target); err != nil {
					return fmt.Errorf("workspace: link %s: %w", slash, err)
				}
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		if w.include != nil && !w.include(slash) {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			dest, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("workspace: read link %s: %w", slash, err)
			}
			if err := os.Symlink(dest, target); err != nil {
				return fmt.Errorf("workspace: link %s: %w", slash, err)
			}
		case d.Type().IsRegular():
			if err := copyFile(p, target); err != nil {
				return fmt.Errorf("workspace: copy %s: %w", slash, err)
			}
			w.copied[slash] = true
		}
		return nil // sockets, devices, pipes: not part of a project
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// wsFiles lists the regular files of root (slash-separated relative paths)
// with the workspace's skip rules.
func wsFiles(root string) (map[string]bool, error) {
	files := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			if skippedDirs[d.Name()] || (linkedDirs[d.Name()] && !strings.Contains(filepath.ToSlash(rel), "/")) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	return files, err
}

// Diff compares the workspace with the project folder as it is now and
// returns the files added, modified and deleted in the workspace, sorted by
// path. Files the include filter left out are not reported as deleted.
func (w *Workspace) Diff() ([]FileChange, error) {
	now, err := wsFiles(w.dir)
	if err != nil {
		return nil, fmt.Errorf("workspace diff: %w", err)
	}
	var out []FileChange
	for rel := range now {
		orig := filepath.Join(w.src, filepath.FromSlash(rel))
		cur := filepath.Join(w.dir, filepath.FromSlash(rel))
		a, errA := os.ReadFile(orig)
		b, err := os.ReadFile(cur)
		if err != nil {
			return nil, fmt.Errorf("workspace diff: %w", err)
		}
		switch {
		case errA != nil && !errors.Is(errA, fs.ErrNotExist):
			return nil, fmt.Errorf("workspace diff: %w", errA)
		case errA != nil:
			c, err := fileChange(rel, "added", nil, b, "", cur)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		case !bytes.Equal(a, b):
			c, err := fileChange(rel, "modified", a, b, orig, cur)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	for rel := range w.copied {
		if now[rel] {
			continue
		}
		orig := filepath.Join(w.src, filepath.FromSlash(rel))
		a, err := os.ReadFile(orig)
		if err != nil {
			continue // gone from the project too
		}
		c, err := fileChange(rel, "deleted", a, nil, orig, "")
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// UnifiedDiff joins the diffs of changes into one patch text.
func UnifiedDiff(changes []FileChange) string {
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(c.Diff)
	}
	return b.String()
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// fileChange builds one change with its unified diff, computed by diff(1).
func fileChange(rel, status string, a, b []byte, pathA, pathB string) (FileChange, error) {
	c := FileChange{Path: rel, Status: status}
	if isBinary(a) || isBinary(b) {
		c.Binary = true
		c.Diff = fmt.Sprintf("Binary files a/%s and b/%s differ\n", rel, rel)
		return c, nil
	}
	if pathA == "" {
		pathA = os.DevNull
	}
	if pathB == "" {
		pathB = os.DevNull
	}
	labelA, labelB := "a/"+rel, "b/"+rel
	if status == "added" {
		labelA = "/dev/null"
	}
	if status == "deleted" {
		labelB = "/dev/null"
	}
	out, err := exec.Command("diff", "-u", "--label", labelA, "--label", labelB, pathA, pathB).Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return c, fmt.Errorf("workspace diff %s: diff(1): %w", rel, err)
	}
	c.Diff = string(out)
	return c, nil
}
