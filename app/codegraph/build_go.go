package codegraph

import (
	"go/build"
	"path"
	"path/filepath"
)

// goPrefer reports whether a definition of fb should replace prev, another
// definition of the same name in the package: when prev's file is excluded
// by its build constraints (file name suffix or //go:build line) on this
// platform and fb's is not (util_safe.go and util_unsafe.go, runtime's
// per-OS files). Files are read only on such a conflict.
func (b *builder) goPrefer(fb *fileBuild, prev string) bool {
	loc, ok := b.defAt(prev)
	if !ok || loc.fb == fb {
		return false
	}
	return !b.goBuilt(loc.fb) && b.goBuilt(fb)
}

// goBuilt reports whether the go command would build fb's file here.
func (b *builder) goBuilt(fb *fileBuild) bool {
	if fb.goBuild == 0 {
		fb.goBuild = 1
		full := filepath.Join(b.root, filepath.FromSlash(fb.fd.Path))
		if ok, err := build.Default.MatchFile(filepath.Dir(full), path.Base(fb.fd.Path)); err == nil && !ok {
			fb.goBuild = -1
		}
	}
	return fb.goBuild > 0
}
