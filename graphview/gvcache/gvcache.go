// Package gvcache points go-graphviz's compile cache at a per-user folder.
//
// go-graphviz compiles Graphviz (WebAssembly) in its package init and keeps
// the result in os.TempDir()/go-graphviz. On a machine with two users the
// second one finds that folder owned by the first, cannot read it, and every
// codeloom command panics before main runs. This package's init runs before
// go-graphviz's (Go initialises packages in import-path order once their own
// imports are ready, and "codeloom/…" sorts before "github.com/…"): it points
// TMPDIR at a per-user folder for the duration of go-graphviz's init, and
// Restore (called by package graphview's init, which runs after go-graphviz's)
// puts TMPDIR back, so nothing else in the process sees the change.
package gvcache

import (
	"os"
	"path/filepath"
	"strconv"
)

// savedEnv carries the original TMPDIR from Prepare to Restore ("unset:" when
// there was none); the process environment is the only state used.
const savedEnv = "CODELOOM_GVCACHE_SAVED_TMPDIR"

func init() { Prepare() }

// Dir returns the per-user folder under which go-graphviz keeps its cache:
// os.UserCacheDir()/codeloom/graphviz, or, without a home folder, a folder of
// this user's own in the temp folder. ok is false when neither is usable.
func Dir() (dir string, ok bool) {
	if base, err := os.UserCacheDir(); err == nil && filepath.IsAbs(base) {
		d := filepath.Join(base, "codeloom", "graphviz")
		if os.MkdirAll(d, 0o700) == nil && ownedByMe(d) {
			return d, true
		}
	}
	d := filepath.Join(os.TempDir(), "codeloom-graphviz-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(d, 0o700); err != nil && !os.IsExist(err) {
		return "", false
	}
	if !ownedByMe(d) {
		return "", false // someone else made it: do not trust it
	}
	return d, true
}

// Prepare points TMPDIR at Dir for go-graphviz's init and remembers the
// original value for Restore. Without a usable per-user folder it points
// TMPDIR at a folder that cannot be created, so go-graphviz runs without a
// cache (slower to start) instead of panicking.
func Prepare() {
	if _, pending := os.LookupEnv(savedEnv); pending {
		return
	}
	orig, had := os.LookupEnv("TMPDIR")
	saved := "unset:"
	if had {
		saved = "set:" + orig
	}
	dir, ok := Dir()
	if !ok {
		dir = filepath.Join(string(filepath.Separator), "nonexistent", "codeloom-graphviz-no-cache")
	}
	os.Setenv(savedEnv, saved)
	os.Setenv("TMPDIR", dir)
}

// Restore puts back the TMPDIR that Prepare replaced. It is a no-op when
// Prepare did not run (or Restore already did).
func Restore() {
	saved, ok := os.LookupEnv(savedEnv)
	if !ok {
		return
	}
	os.Unsetenv(savedEnv)
	if len(saved) > 4 && saved[:4] == "set:" {
		os.Setenv("TMPDIR", saved[4:])
	} else {
		os.Unsetenv("TMPDIR")
	}
}
