package ui

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"codeloom/app/memory"
)

// projectPath resolves rel (slash-separated, relative to root) to a path
// inside root, refusing absolute paths and ".." escapes.
func projectPath(root, rel string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") {
		return "", fmt.Errorf("path %q: must be relative to the project", rel)
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q: outside the project", rel)
	}
	return filepath.Join(root, clean), nil
}

// WriteFileAtomic replaces path with data: it writes a temporary file in the
// same folder, syncs it and renames it over path, so readers see either the
// old or the new content, never a torn file. The file's mode is kept.
func WriteFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("write %s: not a regular file", path)
		}
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".codeloom-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// SaveRequest is one save from the code pane.
type SaveRequest struct {
	Root     string // project root
	Path     string // file, relative to Root
	NodeID   string // the node being edited ("" for a whole file)
	NodeName string
	Content  []byte // the new file content
	Reason   string // recorded with the previous version
}

// ErrUnchanged is returned by SaveFile when the content on disk is already
// the requested content.
var ErrUnchanged = errors.New("no changes to save")

// SaveFile keeps the file's previous content as a version in store (when
// store is not nil) and then writes the new content atomically. If the
// version cannot be recorded, nothing is written.
func SaveFile(store Store, req SaveRequest) error {
	full, err := projectPath(req.Root, req.Path)
	if err != nil {
		return fmt.Errorf("save: %w", err)
	}
	old, err := os.ReadFile(full)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("save %s: read previous content: %w", req.Path, err)
	}
	if err == nil && bytes.Equal(old, req.Content) {
		return ErrUnchanged
	}
	if store != nil && old != nil {
		reason := req.Reason
		if reason == "" {
			reason = "before edit in CodeLoom"
		}
		if _, err := store.AddVersion(memory.Version{
			Time: time.Now(), Path: req.Path, NodeID: req.NodeID, NodeName: req.NodeName,
			Content: old, Reason: reason,
		}); err != nil {
			return fmt.Errorf("save %s: keep previous version: %w (file not written)", req.Path, err)
		}
	}
	if err := WriteFileAtomic(full, req.Content); err != nil {
		return fmt.Errorf("save %s: %w", req.Path, err)
	}
	return nil
}

// RevertTo writes version v back to its file, first keeping the current
// content as a version so the revert itself can be undone.
func RevertTo(store Store, root string, v memory.Version) error {
	return SaveFile(store, SaveRequest{
		Root: root, Path: v.Path, NodeID: v.NodeID, NodeName: v.NodeName,
		Content: v.Content, Reason: "before revert to " + v.Time.Format("2006-01-02 15:04:05"),
	})
}
