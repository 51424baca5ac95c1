//go:build !unix

package patch

import "io/fs"

// ownedByMe cannot tell owners apart here: nothing is cleaned.
func ownedByMe(fs.FileInfo) bool { return false }

// processAlive assumes every process is alive: nothing is cleaned.
func processAlive(int) bool { return true }
