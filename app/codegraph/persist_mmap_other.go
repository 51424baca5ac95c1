//go:build !unix

package codegraph

// mapFile reads the file where mapping is not available.
func mapFile(path string, limit int64) (data []byte, release func() error, err error) {
	b, err := readProjectFile(path, limit)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
