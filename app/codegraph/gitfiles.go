package codegraph

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

// In a git work tree the project's file set is git's own: what
// `git ls-files -co --exclude-standard` lists, that is tracked files (never
// skipped, even in folders named build/ or dist/) plus untracked files that
// no exclude source ignores (.gitignore files with their negations,
// .git/info/exclude, core.excludesFile). git itself is asked rather than a
// re-implementation of its rules: it is the only way to agree with git on
// every rule, and on /usr/local/go/src (15k files) it answers in well under
// a second (see BENCHMARKS.md). Without git, or outside a work tree, the
// folder is walked and .gitignore files are applied as before.

// gitTimeout bounds one git ls-files run. git blocks like any program on a
// FIFO named .gitignore; the timeout (or the caller's cancellation) ends it
// and the index falls back to walking the folder, which refuses the FIFO.
const gitTimeout = 20 * time.Second

// errNotGit is returned by gitListFiles outside a git work tree.
var errNotGit = errors.New("not a git work tree")

// gitEntry is one path git lists.
type gitEntry struct {
	rel     string // slash-separated, relative to the project root
	tracked bool
	dir     bool // a submodule or a nested repository (listed as a folder)
}

// gitEnv is the environment for git: variables that would point git at
// another repository or index (set inside git hooks, for instance) are
// removed, and git is told not to take optional locks.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_OPTIONAL_LOCKS=0")
}

// gitListFiles returns the files git considers part of the project at root
// (tracked, and untracked but not ignored), limited to pathspecs when given.
// It returns errNotGit outside a work tree and exec.ErrNotFound (wrapped)
// when git is not installed.
func gitListFiles(ctx context.Context, root string, pathspecs ...string) ([]gitEntry, error) {
	out, err := gitLsFiles(ctx, root, pathspecs...)
	if err != nil {
		return nil, err
	}
	es, _ := parseLsFiles(out, nil)
	return es, nil
}

// gitLsFiles runs `git ls-files -z -t --cached --others --exclude-standard`
// at root (see gitListFiles) and returns its output.
func gitLsFiles(ctx context.Context, root string, pathspecs ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	args := []string{"-C", root, "-c", "core.fsmonitor=false", "-c", "core.quotePath=false",
		"ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard"}
	if len(pathspecs) > 0 {
		args = append(args, "--")
		for _, p := range pathspecs {
			args = append(args, ":(literal)"+p)
		}
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = gitEnv()
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("git ls-files in %s: no answer within %v", root, gitTimeout)
			}
			return nil, ctx.Err()
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && strings.Contains(stderr.String(), "not a git repository") {
			return nil, errNotGit
		}
		return nil, fmt.Errorf("git ls-files in %s: %w: %s", root, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// parseLsFiles reads `git ls-files -z -t` output: NUL-terminated records of
// a status tag, a space and the path ("H a.py", "? new.py", "S sub/").
// A path listed twice (a tracked file with a merge conflict has several
// stages) is kept once. When keep is not nil, only the records it accepts
// (by the path's last element, and whether git lists a folder) are
// returned, and the others cost no allocation: the walk keeps only what it
// may index out of a listing that is mostly other files. listed counts the
// records before keep.
func parseLsFiles(out []byte, keep func(name []byte, dir bool) bool) (es []gitEntry, listed int) {
	seen := map[string]bool{}
	for len(out) > 0 {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			i = len(out)
		}
		rec := out[:i]
		out = out[min(i+1, len(out)):]
		if len(rec) < 3 || rec[1] != ' ' {
			continue
		}
		tag, p := rec[0], rec[2:]
		dir := bytes.HasSuffix(p, []byte("/"))
		p = bytes.TrimSuffix(p, []byte("/"))
		if len(p) == 0 {
			continue
		}
		listed++
		if keep != nil && !keep(p[bytes.LastIndexByte(p, '/')+1:], dir) {
			continue
		}
		if seen[string(p)] {
			continue
		}
		e := gitEntry{rel: string(p), tracked: tag != '?', dir: dir}
		seen[e.rel] = true
		es = append(es, e)
	}
	return es, listed
}
