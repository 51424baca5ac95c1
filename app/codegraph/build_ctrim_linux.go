//go:build linux && cgo

package codegraph

/*
#ifdef __GLIBC__
#include <malloc.h>
static void cl_malloc_trim(void) { malloc_trim(0); }
#else
static void cl_malloc_trim(void) {}
#endif
*/
import "C"

// releaseCHeap returns the C heap's free pages to the system (glibc's
// malloc_trim; nothing elsewhere). Tree-sitter's parse trees are malloc'ed:
// once the parse of a large project is over, glibc keeps their freed memory
// in its arenas (≈ 35 MB after pyenv's stdlib), which would otherwise stay
// in the process's resident set through the build.
func releaseCHeap() { C.cl_malloc_trim() }
