//go:build unix

package codegraph

import (
	"errors"
	"os"
	"syscall"
)

// renameOpenTemp: writeAtomic renames its temporary file while it is still
// open, and so still locked.
const renameOpenTemp = true

// lockTemp takes an exclusive flock on f, held until f is closed or the
// process ends.
func lockTemp(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// removeUnlocked removes the regular file name if nobody holds its lock,
// and reports whether it did. It opens the file without following a
// symbolic link and without blocking, tries the lock without waiting, and
// removes the file while holding it: a writer that made the file just
// before takes the lock only after that and sees its file gone
// (createLockedTemp).
func removeUnlocked(name string) (bool, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false, err
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		return false, nil // a live writer's
	case err != nil:
		return false, err
	}
	if err := os.Remove(name); err != nil {
		return false, err
	}
	return true, nil
}
