// Package vcs commits the files of one landed change to the project's git
// repository without touching anything else the user has staged: the commit
// is built in a temporary index from HEAD plus exactly the named paths, then
// HEAD moves to it and only those paths' entries in the user's index are
// updated to match.
package vcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ErrNotRepo is wrapped by Open's error when the folder is not in a git
// work tree (or git is not installed).
var ErrNotRepo = errors.New("not a git repository")

// Repo is the git work tree a project folder is in.
type Repo struct {
	dir string // the project folder; paths are relative to it
	git string // the git executable
}

// Open finds git and checks that dir is inside a git work tree.
func Open(ctx context.Context, dir string) (*Repo, error) {
	g, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("%s: %w (git not found: %v)", dir, ErrNotRepo, err)
	}
	r := &Repo{dir: dir, git: g}
	out, err := r.run(ctx, nil, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(out) != "true" {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotRepo)
	}
	return r, nil
}

// run runs git in the project folder with extra environment entries and
// returns its stdout; a failure carries git's stderr.
func (r *Repo) run(ctx context.Context, env []string, args ...string) (string, error) {
	return r.runIn(ctx, env, "", args...)
}

// runIn is run with stdin.
func (r *Repo) runIn(ctx context.Context, env []string, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.git, args...)
	cmd.Dir = r.dir
	// No pager, no prompts.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), fmt.Errorf("git %s: %s", args[0], msg)
	}
	return stdout.String(), nil
}

// Head returns the commit HEAD names, or "" on a branch with no commit yet.
func (r *Repo) Head(ctx context.Context) (string, error) {
	out, err := r.run(ctx, nil, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		if out == "" {
			return "", nil // unborn branch
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// CommitPaths commits the current content of paths (relative to the
// project folder; a missing file is committed as deleted) on the current
// branch with message, and returns the new commit. Nothing else is
// committed: the user's other staged and unstaged changes stay as they
// were. It returns "" without committing when the paths already match HEAD.
// Commit hooks do not run.
func (r *Repo) CommitPaths(ctx context.Context, paths []string, message string) (string, error) {
	if len(paths) == 0 {
		return "", errors.New("commit: no paths")
	}
	head, err := r.Head(ctx)
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	tmp, err := os.CreateTemp("", "codeloom-index-*")
	if err != nil {
		return "", fmt.Errorf("commit: temporary index: %w", err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	os.Remove(tmpName) // git creates it; an empty file is not a valid index
	defer os.Remove(tmpName)
	idx := []string{"GIT_INDEX_FILE=" + tmpName}
	if head != "" {
		_, err = r.run(ctx, idx, "read-tree", head)
	} else {
		_, err = r.run(ctx, idx, "read-tree", "--empty")
	}
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	args := append([]string{"update-index", "--add", "--remove", "--"}, paths...)
	if _, err := r.run(ctx, idx, args...); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	tree, err := r.run(ctx, idx, "write-tree")
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	tree = strings.TrimSpace(tree)
	if head != "" {
		cur, err := r.run(ctx, nil, "rev-parse", head+"^{tree}")
		if err != nil {
			return "", fmt.Errorf("commit: %w", err)
		}
		if strings.TrimSpace(cur) == tree {
			return "", nil
		}
	}
	ct := []string{"commit-tree", tree, "-F", "-"}
	if head != "" {
		ct = append(ct, "-p", head)
	}
	commit, err := r.runIn(ctx, nil, message, ct...)
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	commit = strings.TrimSpace(commit)
	old := head
	if old == "" {
		old = strings.Repeat("0", len(commit)) // HEAD must not exist yet
	}
	subject, _, _ := strings.Cut(message, "\n")
	if _, err := r.run(ctx, nil, "update-ref", "-m", "codeloom: "+subject, "HEAD", commit, old); err != nil {
		return "", fmt.Errorf("commit: move HEAD: %w", err)
	}
	// The user's index: only these paths change, to what was committed.
	if _, err := r.run(ctx, nil, args...); err != nil {
		return commit, fmt.Errorf("commit %s made, but updating the index for its files failed: %w", commit[:min(12, len(commit))], err)
	}
	return commit, nil
}
