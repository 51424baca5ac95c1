package memory

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// readerLockWait is how long a reader tries for the store itself before it
// reads a snapshot instead.
const readerLockWait = 150 * time.Millisecond

// OpenProjectReader opens the project's store for a command that only reads
// (query, search, history, …). When no other process has the store, it is
// the store itself, as OpenProject. When another CodeLoom process holds it
// for writing (bbolt allows one writer process and its lock excludes
// readers), it is a consistent read-only snapshot of the last committed
// state instead of a wait and a "locked" failure; writes to a snapshot fail
// with ErrReadOnly.
func OpenProjectReader(root string) (*Store, error) {
	s, err := openProject(root, readerLockWait)
	if err == nil || !errors.Is(err, ErrLocked) {
		return s, err
	}
	return openSnapshot(filepath.Join(DataDir(root), FileName))
}

// ReadOnly reports whether the store is a snapshot that cannot be written.
func (s *Store) ReadOnly() bool { return s.snapshot }

// openSnapshot copies the store at path while another process may be
// committing to it, and opens the copy read-only.
//
// Why the copy is consistent: bbolt never overwrites a page reachable from
// the newest committed meta; a commit writes new pages, then the meta. Pages
// that commit N+1 frees are reused no earlier than commit N+2. So when the
// copy's newest valid meta is N and the file's newest meta after the copy is
// at most N+1, every page reachable from N was copied intact. Otherwise the
// copy is retried.
func openSnapshot(path string) (*Store, error) {
	var lastErr error
	for attempt := 0; attempt < 8; attempt++ {
		s, err := trySnapshot(path)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errSnapshotRace) {
			return nil, err
		}
		lastErr = err
		time.Sleep(time.Duration(attempt+1) * 20 * time.Millisecond)
	}
	return nil, fmt.Errorf("open store %s: %w", path, lastErr)
}

var errSnapshotRace = errors.New("the writer committed more than once during every copy")

func trySnapshot(path string) (*Store, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".snapshot-*")
	if err != nil {
		tmp, err = os.CreateTemp("", "codeloom-snapshot-*.db")
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot of store %s: %w", path, err)
	}
	tmpPath := tmp.Name()
	// The snapshot lives only as long as the open handle: removed as soon as
	// bbolt has it open (or on any failure), so a kill leaves nothing behind
	// but for this short window.
	defer os.Remove(tmpPath)
	_, err = io.Copy(tmp, src) // copy_file_range: a reflink where the file system can
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot of store %s: copy: %w", path, err)
	}
	cf, err := os.Open(tmpPath)
	if err != nil {
		return nil, fmt.Errorf("snapshot of store %s: %w", path, err)
	}
	copied, _, cerr := readMeta(cf)
	inspectErr := inspectFile(path, cf)
	cf.Close()
	after, _, aerr := readMeta(src)
	if cerr != nil || aerr != nil || after.txid > copied.txid+1 {
		return nil, errSnapshotRace
	}
	if inspectErr != nil {
		// The writer's own file is damaged; it is not ours to move aside.
		return nil, inspectErr
	}
	db, err := openBolt(tmpPath, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("snapshot of store %s: %w", path, err)
	}
	if err := verify(path, db); err != nil {
		db.Close()
		return nil, err
	}
	s := &Store{db: db, path: path, snapshot: true}
	if v, err := s.Schema(); err != nil || v > SchemaVersion {
		db.Close()
		if err == nil {
			err = fmt.Errorf("store schema %d is newer than this CodeLoom (%d); upgrade CodeLoom", v, SchemaVersion)
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}
