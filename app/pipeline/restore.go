package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/app/patch"
)

// createdMarker is in the Reason of a version recorded before a patch
// created its file: restoring that version deletes the file.
const createdMarker = "(" + patch.ActionCreate + ")"

// NodeVersionPrefix starts the Reason of a version that keeps one node's
// code (a function, method or class) rather than a whole file.
const NodeVersionPrefix = "node "

// IsNodeVersion reports whether v keeps one node's code.
func IsNodeVersion(v memory.Version) bool { return strings.HasPrefix(v.Reason, NodeVersionPrefix) }

// nodeVersions returns the previous code of every class, function and
// method a change modified (or removed), innermost only: a class whose
// changed part lies in one of its changed methods is not kept twice. before
// and after are the graphs of the file before and after the change.
func nodeVersions(before, after *codegraph.Graph, ch patch.Change, reason string) []memory.Version {
	if !ch.OldExists || !ch.NewExists {
		return nil // whole-file versions cover creation and deletion
	}
	code := func(b []byte, n *codegraph.Node) ([]byte, bool) {
		if n.StartByte < 0 || n.EndByte > len(b) || n.StartByte >= n.EndByte {
			return nil, false
		}
		return b[n.StartByte:n.EndByte], true
	}
	changed := map[string]*codegraph.Node{}
	var order []*codegraph.Node
	for _, n := range before.NodesInFile(ch.Path) {
		if n.Kind != codegraph.KindClass && n.Kind != codegraph.KindFunction && n.Kind != codegraph.KindMethod {
			continue
		}
		old, ok := code(ch.Old, n)
		if !ok {
			continue
		}
		if nn, ok := after.Node(n.ID); ok && nn.Path == ch.Path {
			if neu, ok := code(ch.New, nn); ok && bytes.Equal(old, neu) {
				continue
			}
		}
		changed[n.ID] = n
		order = append(order, n)
	}
	var out []memory.Version
	for _, n := range order {
		inner := false
		for _, c := range order {
			if c.ID != n.ID && c.Parent == n.ID {
				inner = true
				break
			}
		}
		if inner {
			continue
		}
		old, _ := code(ch.Old, n)
		out = append(out, memory.Version{Path: ch.Path, NodeID: n.ID, NodeName: n.QualName,
			Content: append([]byte(nil), old...), Reason: reason})
	}
	return out
}

// RestoreNodeVersion puts one node's kept code back in place of the node's
// current code (found in g, which must be current), keeping the replaced
// code as a new node version first. The caller re-indexes the file.
func RestoreNodeVersion(ctx context.Context, root string, st VersionStore, g *codegraph.Graph, id string) (string, error) {
	v, err := st.Version(id)
	if err != nil {
		return "", fmt.Errorf("restore version: %w", err)
	}
	if !IsNodeVersion(v) {
		return "", fmt.Errorf("restore version %s: it keeps the whole file %s; use RestoreVersion", id, v.Path)
	}
	n, ok := g.Node(v.NodeID)
	if !ok || n.Path != v.Path {
		return "", fmt.Errorf("restore version %s: %s no longer exists in %s; restore a whole-file version instead", id, v.NodeName, v.Path)
	}
	abs, clean, err := patch.Confine(root, v.Path)
	if err != nil {
		return "", fmt.Errorf("restore version %s: %w", id, err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("restore version %s: %w", id, err)
	}
	cur, err := patch.ReadRegular(abs, patch.MaxFileSize)
	if err != nil {
		return "", fmt.Errorf("restore version %s: read %s: %w", id, clean, err)
	}
	if n.StartByte < 0 || n.EndByte > len(cur) || n.StartByte > n.EndByte {
		return "", fmt.Errorf("restore version %s: %s changed since it was indexed; re-index and retry", id, clean)
	}
	keep, err := st.AddVersion(memory.Version{Path: clean, NodeID: n.ID, NodeName: n.QualName,
		Content: append([]byte(nil), cur[n.StartByte:n.EndByte]...), Reason: fmt.Sprintf("%sbefore restoring version %s", NodeVersionPrefix, id)})
	if err != nil {
		return "", fmt.Errorf("restore version %s: keep the current code: %w", id, err)
	}
	out := make([]byte, 0, len(cur)+len(v.Content))
	out = append(append(append(out, cur[:n.StartByte]...), v.Content...), cur[n.EndByte:]...)
	mode := permOf(abs)
	if err := patch.WriteFile(root, clean, out, mode); err != nil {
		return keep, fmt.Errorf("restore version %s: %w", id, err)
	}
	return keep, nil
}

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
	if IsNodeVersion(v) {
		return "", fmt.Errorf("restore version %s: it keeps only %s; use RestoreNodeVersion", id, v.NodeName)
	}
	abs, clean, err := patch.Confine(root, v.Path)
	if err != nil {
		return "", fmt.Errorf("restore version %s: %w", id, err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("restore version %s: %w", id, err)
	}
	cur, err := patch.ReadRegular(abs, patch.MaxFileSize)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("restore version %s: read %s: %w", id, clean, err)
	}
	mode := permOf(abs)
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

// permOf returns the permission bits of the file at abs, or 0644 when it
// cannot be read (a file about to be created).
func permOf(abs string) fs.FileMode {
	if fi, err := os.Stat(abs); err == nil {
		return fi.Mode().Perm()
	}
	return 0o644
}
