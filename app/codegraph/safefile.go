package codegraph

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Every read of a project file goes through readProjectFile: a repository's
// own files are untrusted input. A FIFO named .gitignore would block an
// ordinary open forever, and a .env symlinked to /dev/zero would be read
// until memory runs out. readProjectFile reads regular files only, never
// blocks and never reads more than a cap.

// errNotRegular is returned for a path that is not a regular file (a named
// pipe, a device, a socket or a directory); the error text names what it is.
var errNotRegular = errors.New("not a regular file")

// errTooBig is returned for a file larger than the cap it was read with.
var errTooBig = errors.New("too big")

// fileKind names the type of a non-regular file for a report line.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file"
}

// readProjectFile returns the content of the regular file at name (symlinks
// are followed, but must end at a regular file), at most limit bytes.
//
// It refuses anything else without opening it when it can: the target is
// checked with stat first (opening some devices has effects of its own),
// then opened with O_NONBLOCK (a FIFO swapped in after the check does not
// block the open) and checked again with fstat on the open descriptor, which
// must be the same regular file. The read is capped with io.LimitReader, so
// a file that grows while being read cannot exhaust memory either.
//
// Errors wrap fs.ErrNotExist, errNotRegular or errTooBig where they apply.
func readProjectFile(name string, limit int64) ([]byte, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(name, st.Mode())
	}
	if st.Size() > limit {
		return nil, tooBig(name, st.Size(), limit)
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !fst.Mode().IsRegular() {
		return nil, notRegular(name, fst.Mode())
	}
	if !os.SameFile(st, fst) {
		return nil, fmt.Errorf("%s: %w", name, &skipError{reason: "not a regular file: replaced while being opened", kind: errNotRegular})
	}
	size := fst.Size()
	if size > limit {
		return nil, tooBig(name, size, limit)
	}
	buf := make([]byte, 0, size+1) // +1: reading to EOF needs no regrowth
	b, err := readAllInto(buf, io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w", name, &skipError{reason: fmt.Sprintf("too big: grew past %d bytes while being read", limit), kind: errTooBig})
	}
	return b, nil
}

// readAllInto reads r to EOF, appending to buf.
func readAllInto(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// skipError says why a file was not read: it is not a regular file, or it
// is over the cap. Its text is the reason shown on the report line.
type skipError struct {
	reason string
	kind   error // errNotRegular or errTooBig
}

func (e *skipError) Error() string { return e.reason }
func (e *skipError) Unwrap() error { return e.kind }

// notRegular returns the error for a file of mode m.
func notRegular(name string, m fs.FileMode) error {
	return fmt.Errorf("%s: %w", name, &skipError{reason: "not a regular file: " + fileKind(m), kind: errNotRegular})
}

// tooBig returns the error for a file of size bytes over limit.
func tooBig(name string, size, limit int64) error {
	return fmt.Errorf("%s: %w", name, &skipError{reason: fmt.Sprintf("too big: %d bytes (limit %d)", size, limit), kind: errTooBig})
}

// readReason turns a readProjectFile error into the reason of a report line.
func readReason(err error) string {
	var se *skipError
	switch {
	case errors.As(err, &se):
		return se.reason
	case errors.Is(err, fs.ErrNotExist):
		return "deleted during the index"
	}
	return "unreadable: " + errReason(err)
}

// maxSourceRead caps reads of an indexed file's code by the graph (Code,
// Slice): far above any indexable file, far below a runaway.
const maxSourceRead = 1 << 30
