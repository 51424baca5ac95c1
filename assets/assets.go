// Package assets holds what CodeLoom ships inside its binary: the bundled
// sample project that opens when no folder is given.
package assets

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

//go:embed all:sample
var sample embed.FS

// SampleName is the folder name of the bundled sample project.
const SampleName = "sample"

// Sample returns the bundled sample project as a file system rooted at the
// project folder.
func Sample() fs.FS {
	sub, err := fs.Sub(sample, SampleName)
	if err != nil {
		panic(err) // the embed directive guarantees the folder exists
	}
	return sub
}

// skipped reports whether a path of the embedded tree is local state that
// must not be copied out (it may exist in a developer's checkout).
func skipped(p string) bool {
	base := path.Base(p)
	return base == "__pycache__" || base == ".codeloom" || path.Ext(base) == ".pyc"
}

// ExtractSample copies the sample project into dest (creating it) unless
// dest already exists, and returns dest. An existing copy is left alone so
// the user's edits to it survive restarts.
func ExtractSample(dest string) (string, error) {
	if _, err := os.Stat(dest); err == nil {
		return dest, nil
	}
	tmp := dest + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return "", fmt.Errorf("extract sample: clear %s: %w", tmp, err)
	}
	err := fs.WalkDir(Sample(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skipped(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := filepath.Join(tmp, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(Sample(), p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err == nil {
		err = os.Rename(tmp, dest)
	}
	if err != nil {
		os.RemoveAll(tmp) // a failed copy leaves nothing behind
		return "", fmt.Errorf("extract sample to %s: %w", dest, err)
	}
	return dest, nil
}

// DefaultSampleDir is where the sample project is extracted for the user:
// <user data dir>/codeloom/sample.
func DefaultSampleDir() (string, error) {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find a folder for the sample project: %w", err)
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "codeloom", SampleName), nil
}
