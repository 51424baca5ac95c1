//go:build unix

package memory

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockFile takes bbolt's exclusive advisory lock (flock) on f, waiting at
// most wait.
func lockFile(f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("it is %w (close it and retry)", ErrLocked)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// unlockFile releases f's flock.
func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
