//go:build unix

package codegraph

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps a regular file read-only. The mapping stays valid after the
// file is replaced by a rename (the writer never changes a file in place);
// release unmaps it.
func mapFile(path string, limit int64) (data []byte, release func() error, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0) // a planted FIFO must not block
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > limit {
		return nil, nil, fmt.Errorf("%s: %d bytes, over the %d limit", path, st.Size(), limit)
	}
	if st.Size() == 0 {
		return []byte{}, func() error { return nil }, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	return b, func() error { return unix.Munmap(b) }, nil
}
