//go:build !unix

package codegraph

import "os"

// renameOpenTemp: writeAtomic closes its temporary file before renaming it
// (an open file cannot be renamed everywhere).
const renameOpenTemp = false

// lockTemp does nothing where flock is not available.
func lockTemp(*os.File) error { return nil }

// removeUnlocked removes nothing where flock is not available: a live
// writer's file cannot be told from a dead one's.
func removeUnlocked(string) (bool, error) { return false, nil }
