//go:build !unix

package gvcache

// ownedByMe is true where folder ownership is not a uid (per-user folders
// there are private already).
func ownedByMe(string) bool { return true }
