//go:build !linux || !cgo

package codegraph

// releaseCHeap does nothing where malloc_trim is not known to exist (see
// build_ctrim_linux.go).
func releaseCHeap() {}
