package patch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by ReadRegular's error for a FIFO, socket,
// device or directory: only regular files are read.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by ReadRegular's error for a file over its size cap.
var ErrTooLarge = errors.New("file too large")

// ReadRegular reads the file at abs, at most max bytes, without ever
// blocking: it opens with O_NONBLOCK (a FIFO without a writer does not hang
// the open), checks with fstat on the open descriptor that it is a regular
// file no larger than max, and reads at most max+1 bytes (a file growing
// while read is refused, not followed). Devices, FIFOs, sockets and
// directories wrap ErrNotRegular; oversized files wrap ErrTooLarge.
func ReadRegular(abs string, max int64) ([]byte, error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", abs, err)
	}
	if !fi.Mode().IsRegular() {
		kind := fi.Mode().Type().String()
		if fi.IsDir() {
			kind = "directory"
		}
		return nil, fmt.Errorf("%s: %w (%s)", abs, ErrNotRegular, kind)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit: %w", abs, fi.Size(), max, ErrTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", abs, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s grew past the %d-byte limit while being read: %w", abs, max, ErrTooLarge)
	}
	return data, nil
}
