package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"codeloom/app/memory"
	"codeloom/app/patch"
)

// createdMarker is in the Reason of a version recorded before a patch
// created its file: restoring that version deletes the file.
const createdMarker = "(" + patch.ActionCreate + ")"

// VersionStore is what RestoreVersion needs from the memory store;
// *memory.Store satisfies it.
type VersionStore interface {
	Version(id string) (memory.Version, error)
	AddVersion(memory.Version) (string, error)
}

// RestoreVersion puts the kept version id of a file back (one-click
// revert): the file's current content is first kept as a new version, then
// the old content is written atomically (or the file is deleted when the
// version predates the patch that created it). It returns the ID of the
// version that keeps what was replaced.
func RestoreVersion(ctx context.Context, root string, st VersionStore, id string) (string, error) {
	v, err := st.Version(id)
	if err != nil {
		return "", fmt.Errorf("restore version: %w", err)
	}
	abs, clean, err := patch.Confine(root, v.Path)
	if err != nil {
		return "", fmt.Errorf("restore version %s: %w", id, err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("restore version %s: %w", id, err)
	}
	cur, err := os.ReadFile(abs)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("restore version %s: read %s: %w", id, clean, err)
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(abs); err == nil {
		mode = fi.Mode().Perm()
	}
	reason := fmt.Sprintf("before restoring version %s", id)
	if !exists {
		reason += " " + createdMarker
	}
	keep, err := st.AddVersion(memory.Version{Path: clean, NodeID: v.NodeID, NodeName: v.NodeName, Content: cur, Reason: reason})
	if err != nil {
		return "", fmt.Errorf("restore version %s: keep the current content: %w", id, err)
	}
	if strings.Contains(v.Reason, createdMarker) {
		err = patch.RemoveFile(root, clean)
	} else {
		err = patch.WriteFile(root, clean, v.Content, mode)
	}
	if err != nil {
		return keep, fmt.Errorf("restore version %s: %w", id, err)
	}
	return keep, nil
}
