package codegraph

import (
	"io/fs"
	"slices"
	"strings"
)

// dirEnt is one entry of a directory as the walk reads it: its type bits
// (from the directory itself, no stat) and, for a candidate regular file
// only, its size and modification time.
type dirEnt struct {
	name    string
	typ     fs.FileMode // type bits only, as fs.DirEntry.Type
	stated  bool        // size, modTime (or statErr) were read
	size    int64
	modTime int64 // UnixNano
	statErr error
}

// dirID identifies a directory for the loop guard: device and inode where
// the platform gives them, else its real path.
type dirID struct {
	dev, ino uint64
	real     string
}

// dirListing is one directory read by readDir: its entries sorted by name,
// or why it could not be read.
type dirListing struct {
	id   dirID
	ents []dirEnt
	err  error
}

// sortEnts sorts entries by name (the order os.ReadDir gives), so that the
// walk's result does not depend on the file system's order.
func sortEnts(ents []dirEnt) {
	slices.SortFunc(ents, func(a, b dirEnt) int { return strings.Compare(a.name, b.name) })
}
