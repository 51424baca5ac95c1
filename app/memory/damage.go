package memory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ErrDamaged marks a store file that cannot be read safely (see DamageError).
var ErrDamaged = errors.New("store is damaged")

// DamageError says what is wrong with a store file and where.
type DamageError struct {
	Path   string // the store file
	Reason string // what is wrong and where, e.g. "page 5: ..."
}

// Error describes the damage.
func (e *DamageError) Error() string {
	return fmt.Sprintf("store %s is damaged: %s", e.Path, e.Reason)
}

// Unwrap makes errors.Is(err, ErrDamaged) true.
func (e *DamageError) Unwrap() error { return ErrDamaged }

// bbolt's on-disk layout (go.etcd.io/bbolt/internal/common): a 16-byte page
// header, then on pages 0 and 1 the meta record below, checksummed with FNV-64a.
const (
	pageHeaderSize = 16
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	metaSize       = 64 // magic … checksum
	metaSumOffset  = 56 // checksum covers the bytes before it
	noFreelist     = ^uint64(0)
)

// fileMeta is one decoded meta page.
type fileMeta struct {
	pageSize uint32
	root     uint64 // page of the root bucket
	freelist uint64 // page of the freelist, or noFreelist
	pgid     uint64 // high-water mark: pages [0, pgid) are in use
	txid     uint64
}

// decodeMeta decodes and validates the meta record of a page.
func decodeMeta(page []byte) (fileMeta, error) {
	if len(page) < pageHeaderSize+metaSize {
		return fileMeta{}, errors.New("too short for a meta page")
	}
	m := page[pageHeaderSize : pageHeaderSize+metaSize]
	le := binary.LittleEndian
	if le.Uint32(m[0:]) != boltMagic {
		return fileMeta{}, errors.New("not a bbolt meta page (bad magic)")
	}
	if v := le.Uint32(m[4:]); v != boltVersion {
		return fileMeta{}, fmt.Errorf("bbolt format version %d, want %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaSumOffset])
	if h.Sum64() != le.Uint64(m[metaSumOffset:]) {
		return fileMeta{}, errors.New("meta checksum mismatch")
	}
	return fileMeta{pageSize: le.Uint32(m[8:]), root: le.Uint64(m[16:]), freelist: le.Uint64(m[32:]),
		pgid: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, nil
}

// readMeta returns the newest valid meta of the open store file f, as bbolt
// would pick it, and the file's size.
func readMeta(f *os.File) (fileMeta, int64, error) {
	st, err := f.Stat()
	if err != nil {
		return fileMeta{}, 0, err
	}
	buf := make([]byte, 2*65536)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fileMeta{}, st.Size(), err
	}
	buf = buf[:n]
	m0, err0 := decodeMeta(buf)
	// The second meta page sits one page further; its size comes from the
	// first meta, or the default when that one is unreadable.
	ps := os.Getpagesize()
	if err0 == nil && m0.pageSize >= 512 && m0.pageSize <= 65536 {
		ps = int(m0.pageSize)
	}
	var m1 fileMeta
	err1 := errors.New("file ends before the second meta page")
	if len(buf) > ps {
		m1, err1 = decodeMeta(buf[ps:])
	}
	switch {
	case err0 != nil && err1 != nil:
		return fileMeta{}, st.Size(), fmt.Errorf("both meta pages unreadable (page 0: %v; page 1: %v)", err0, err1)
	case err0 != nil:
		return m1, st.Size(), nil
	case err1 != nil || m0.txid >= m1.txid:
		return m0, st.Size(), nil
	default:
		return m1, st.Size(), nil
	}
}

// inspectFile checks the structure bbolt trusts blindly before it maps the
// file: a valid meta page, a sane page size, and a file long enough for every
// page the meta says is in use. It returns a *DamageError when one fails.
func inspectFile(path string, f *os.File) error {
	m, size, err := readMeta(f)
	if err != nil {
		return &DamageError{Path: path, Reason: err.Error()}
	}
	if m.pageSize < 512 || m.pageSize > 65536 || m.pageSize&(m.pageSize-1) != 0 {
		return &DamageError{Path: path, Reason: fmt.Sprintf("meta page gives an impossible page size %d", m.pageSize)}
	}
	need := int64(m.pgid) * int64(m.pageSize)
	if m.pgid < 2 || need < 0 || size < need {
		return &DamageError{Path: path, Reason: fmt.Sprintf("file is %d bytes but its pages need %d (truncated: pages %d to %d are missing)",
			size, need, size/int64(m.pageSize), int64(m.pgid)-1)}
	}
	if m.root < 2 || m.root >= m.pgid {
		return &DamageError{Path: path, Reason: fmt.Sprintf("meta page: root bucket page %d is outside the file's %d pages", m.root, m.pgid)}
	}
	if m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.pgid) {
		return &DamageError{Path: path, Reason: fmt.Sprintf("meta page: freelist page %d is outside the file's %d pages", m.freelist, m.pgid)}
	}
	return nil
}

// guard runs fn, turning a panic or a memory fault while bbolt reads a
// damaged page into a *DamageError for path instead of crashing the process.
// (bbolt trusts the file: a garbled page makes it index out of range or read
// past its memory map.)
func guard(path string, fn func() error) (err error) {
	prev := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(prev)
	defer func() {
		if r := recover(); r != nil {
			err = &DamageError{Path: path, Reason: fmt.Sprintf("reading it failed: %v", r)}
		}
	}()
	return fn()
}

// verify reads every page reachable from the newest meta: every bucket, every
// key and value, so that a garbled page is found at open rather than in the
// middle of a command. bbolt checks each page's header as it visits it.
func verify(path string, db *bolt.DB) error {
	return guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
				if err := walkBucket(b); err != nil {
					return &DamageError{Path: path, Reason: fmt.Sprintf("bucket %q: %v", name, err)}
				}
				return nil
			})
		})
	})
}

// walkBucket visits every key of b and of its nested buckets.
func walkBucket(b *bolt.Bucket) error {
	var sum byte
	c := b.Cursor()
	var prev []byte
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if prev != nil && string(prev) >= string(k) {
			return fmt.Errorf("keys out of order at %x", k)
		}
		prev = k
		if v == nil {
			if nb := b.Bucket(k); nb != nil {
				if err := walkBucket(nb); err != nil {
					return fmt.Errorf("%q: %w", k, err)
				}
			}
			continue
		}
		if len(v) > 0 {
			// Touch the first and last byte so an overflow run past the
			// end of the map faults here.
			sum ^= v[0] ^ v[len(v)-1]
		}
	}
	_ = sum
	return nil
}

// quarantine moves the damaged store at path aside and returns where it went.
func quarantine(path string, now time.Time) (string, error) {
	dest := fmt.Sprintf("%s.damaged-%s", path, now.UTC().Format("20060102T150405Z"))
	for i := 1; ; i++ {
		if _, err := os.Lstat(dest); errors.Is(err, os.ErrNotExist) {
			break
		}
		dest = fmt.Sprintf("%s.damaged-%s-%d", path, now.UTC().Format("20060102T150405Z"), i)
	}
	if err := os.Rename(path, dest); err != nil {
		return "", fmt.Errorf("move damaged store %s aside: %w", path, err)
	}
	return dest, nil
}
