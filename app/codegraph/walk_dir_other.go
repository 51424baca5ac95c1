//go:build !linux

package codegraph

import (
	"os"
	"path/filepath"
)

// readDir reads the directory abs (portable version: os.ReadDir, and an
// lstat for each entry want selects that is a regular file). follow is
// unused: the entries of a directory are never followed.
func readDir(abs string, follow bool, want func(name string) bool) dirListing {
	return readDirBuf(abs, follow, want, nil)
}

// readDirBuf is readDir; buf (a scratch buffer on Linux) is unused here.
func readDirBuf(abs string, follow bool, want func(name string) bool, buf *[]byte) dirListing {
	var l dirListing
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		l.id.real = real
	}
	des, err := os.ReadDir(abs)
	if err != nil {
		return dirListing{err: err}
	}
	l.ents = make([]dirEnt, 0, len(des))
	for _, d := range des {
		e := dirEnt{name: d.Name(), typ: d.Type()}
		if e.typ == 0 && want(e.name) {
			e.stated = true
			if info, err := d.Info(); err != nil {
				e.statErr = err
			} else if t := info.Mode().Type(); t != 0 {
				e.typ = t
			} else {
				e.size, e.modTime = info.Size(), info.ModTime().UnixNano()
			}
		}
		l.ents = append(l.ents, e)
	}
	return l
}
