//go:build unix

package gvcache

import (
	"os"
	"syscall"
)

// ownedByMe reports whether dir belongs to this process's user.
func ownedByMe(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}
