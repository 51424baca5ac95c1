package patch

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DryRunDirPrefix starts the name of every scratch folder a dry run makes
// in the temporary directory: "codeloom-dryrun-<pid>-<random>", so a later
// run can tell whether the process that made it is still alive.
const DryRunDirPrefix = "codeloom-dryrun-"

// NewDryRunDir makes a scratch folder for a dry run in the temporary
// directory, named after this process (see CleanStaleDryRuns).
func NewDryRunDir() (string, error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-*", DryRunDirPrefix, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("dry run: scratch folder: %w", err)
	}
	return dir, nil
}

// dryRunOwnerPID returns the PID in a dry-run folder name, or 0 when the
// name is not one NewDryRunDir makes.
func dryRunOwnerPID(name string) int {
	rest, ok := strings.CutPrefix(name, DryRunDirPrefix)
	if !ok {
		return 0
	}
	num, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0
	}
	pid, err := strconv.Atoi(num)
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// CleanStaleDryRuns removes the dry-run folders in tmp (os.TempDir() when
// empty) left by a process that was killed: only folders named by
// NewDryRunDir, owned by this user, whose process no longer exists. A
// folder of a live process, of another user, or of an unknown name is left
// alone. It returns the folders removed.
func CleanStaleDryRuns(tmp string) ([]string, error) {
	if tmp == "" {
		tmp = os.TempDir()
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return nil, fmt.Errorf("clean stale dry runs in %s: %w", tmp, err)
	}
	var removed []string
	var errs []string
	for _, e := range ents {
		pid := dryRunOwnerPID(e.Name())
		if pid == 0 || pid == os.Getpid() || !e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			continue
		}
		path := filepath.Join(tmp, e.Name())
		fi, err := os.Lstat(path)
		if err != nil || !fi.IsDir() || !ownedByMe(fi) || processAlive(pid) {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		removed = append(removed, path)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("clean stale dry runs: %s", strings.Join(errs, "; "))
	}
	return removed, nil
}
