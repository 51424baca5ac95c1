//go:build !unix

package memory

import (
	"os"
	"time"
)

// lockFile is a no-op where bbolt does not use flock; bbolt's own lock in
// Open still keeps a second writer out.
func lockFile(*os.File, time.Duration) error { return nil }

// unlockFile is a no-op where bbolt does not use flock.
func unlockFile(*os.File) {}
