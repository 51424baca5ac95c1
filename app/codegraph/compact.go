package codegraph

// trimFileData drops the spare capacity that appending left in a parsed
// file's record lists (often a fifth of the references: the extractor sizes
// them before filtering) before the builder keeps the record for the life
// of the project. The lists' contents are unchanged. Called once per new
// record, before any other goroutine can see it.
func trimFileData(fd *fileData) {
	fd.Defs = trimSlack(fd.Defs)
	fd.Imports = trimSlack(fd.Imports)
}

// trimSlack returns s, copied into an exact-size array when more than an
// eighth of its capacity is unused.
func trimSlack[T any](s []T) []T {
	if cap(s)-len(s) <= len(s)/8 {
		return s
	}
	if len(s) == 0 {
		return make([]T, 0) // still non-nil, no array kept
	}
	return append(make([]T, 0, len(s)), s...)
}
