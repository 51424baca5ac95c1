package codegraph

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// Temporary snapshot files. writeAtomic writes graph.snap.tmp-* beside the
// snapshot and renames it over the old one; a process killed before the
// rename leaves its temporary file behind, as large as the snapshot (131 MB
// on pyenv's standard library and site-packages), and every kill left one
// more. A writer holds an exclusive flock on its temporary file for as long
// as the file exists, and the kernel drops that lock when the process dies:
// a temporary file nobody holds a lock on was left by a dead writer, and
// removeStaleTemps, run when a project opens with its cache, deletes it.

// snapTmpPattern names writeAtomic's temporary files of the snapshot.
const snapTmpPattern = snapFile + ".tmp-*"

// createLockedTemp makes a temporary file in dir (os.CreateTemp's pattern)
// and takes its lock. A sweeper may remove the file between the two steps;
// the file is then made again.
func createLockedTemp(dir, pattern string) (*os.File, error) {
	for range 3 {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		if err := lockTemp(f); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, fmt.Errorf("lock temporary file %s: %w", f.Name(), err)
		}
		fi, err1 := f.Stat()
		pi, err2 := os.Lstat(f.Name())
		if err1 == nil && err2 == nil && os.SameFile(fi, pi) {
			return f, nil
		}
		f.Close() // removed by a sweeper before the lock
	}
	return nil, fmt.Errorf("temporary file in %s removed as soon as made, 3 times", dir)
}

// removeStaleTemps deletes the files in dir matching pattern that no live
// process holds the lock of, and returns how many it deleted. Anything but
// a regular file is left alone (a FIFO is never opened), and so is every
// file where such locks are not available.
func removeStaleTemps(log *slog.Logger, dir, pattern string) (int, error) {
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return 0, fmt.Errorf("stale temporary files in %s: %w", dir, err)
	}
	removed := 0
	var errs []error
	for _, name := range names {
		st, err := os.Lstat(name)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if !st.Mode().IsRegular() {
			continue
		}
		ok, err := removeUnlocked(name)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove %s: %w", name, err))
			}
			continue
		}
		if !ok {
			continue
		}
		removed++
		log.Info("removed a temporary file a killed writer left", "path", name, "bytes", st.Size())
	}
	return removed, errors.Join(errs...)
}

// removeStaleTemps deletes the temporary files killed writers left in the
// project's data folder: snapshots never renamed into place, and spill
// files never unlinked (refs_spill.go). A failure is logged, never fatal:
// the files only take room.
func (p *Project) removeStaleTemps() {
	for _, t := range []struct{ dir, pattern string }{
		{filepath.Dir(SnapshotPath(p.root)), snapTmpPattern},
		{spillDir(p.root), refsSpillPattern},
	} {
		if t.dir == "" {
			continue
		}
		if _, err := removeStaleTemps(p.log, t.dir, t.pattern); err != nil {
			p.log.Warn("codegraph: stale temporary files", "root", p.root, "err", err)
		}
	}
}
