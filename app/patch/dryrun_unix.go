//go:build unix

package patch

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports whether this user owns the file.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// processAlive reports whether a process with this PID exists (a process of
// another user counts as alive).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
