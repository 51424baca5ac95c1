// Package memory is CodeLoom's embedded store: one bbolt file per project
// (<project>/.codeloom/codeloom.db) holding the activity log, runs with their
// metrics, model exchanges, approvals, lesson cards, node/file versions, and
// caches (the code graph, embeddings).
//
// bbolt commits each write transaction with an fsync and never overwrites the
// pages of the last committed state, so a crash (even kill -9) at any moment
// loses at most the transaction in flight and never corrupts the file.
package memory

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SchemaVersion is the layout version this code writes. Older files are
// migrated on Open; newer ones are refused rather than misread.
const SchemaVersion = 1

// DirName is the per-project data folder; git ignores its store and caches.
const DirName = ".codeloom"

// FileName is the database file inside DirName.
const FileName = "codeloom.db"

const metaBucket = "meta"

// Store is an open CodeLoom database. It is safe for concurrent use by
// several goroutines; bbolt allows one writing process per file.
type Store struct {
	db       *bolt.DB
	path     string
	notice   string // what open did to the file; see Notice
	snapshot bool   // a read-only copy taken beside another process's writer
}

// DataDir returns the folder where CodeLoom keeps data for the project at root.
func DataDir(root string) string { return filepath.Join(root, DirName) }

// OpenProject opens (creating if needed) the store of the project at root.
// It also makes sure git ignores the store and caches in the data folder
// (see GitIgnore).
func OpenProject(root string) (*Store, error) { return openProject(root, 3*time.Second) }

func openProject(root string, lockWait time.Duration) (*Store, error) {
	dir := DataDir(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create data folder %s: %w", dir, err)
	}
	if err := writeGitIgnore(dir); err != nil {
		return nil, err
	}
	return open(filepath.Join(dir, FileName), lockWait)
}

// GitIgnore is the .gitignore CodeLoom keeps in a project's data folder: the
// store (with its damaged copies and snapshots) and caches are local, while
// policy.yaml and workflows/*.yaml are the user's, meant to be committed.
const GitIgnore = `# CodeLoom's local data (the store and caches). policy.yaml and
# workflows/*.yaml are yours to commit.
/codeloom.db
/codeloom.db.*
/cache/
*.tmp
`

// oldGitIgnore is what earlier versions wrote: it ignored everything.
const oldGitIgnore = "# CodeLoom's data; not part of the project\n*\n"

// writeGitIgnore writes dir/.gitignore when missing, and upgrades it when it
// is exactly what an earlier version generated; a file the user changed is
// left alone.
func writeGitIgnore(dir string) error {
	path := filepath.Join(dir, ".gitignore")
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		// Unreadable (or a folder): not ours to fix; the store still works.
		slog.Warn("data folder .gitignore unreadable", "path", path, "err", err)
		return nil
	case string(old) != oldGitIgnore:
		return nil
	}
	if err := os.WriteFile(path, []byte(GitIgnore), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Open opens (creating if needed) the store file at path.
func Open(path string) (*Store, error) { return open(path, 3*time.Second) }

// ErrLocked is returned (wrapped) when another process has the store open
// for writing and did not let go in time.
var ErrLocked = errors.New("locked by another CodeLoom process")

// open opens the store at path, waiting at most lockWait for another
// process's lock to go away. A damaged file is moved aside (see
// DamageError) and a new store started; what happened is logged and kept in
// Notice.
func open(path string, lockWait time.Duration) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create folder for store %s: %w", path, err)
	}
	notice, err := precheck(path, lockWait)
	if err != nil {
		return nil, err
	}
	db, err := openBolt(path, &bolt.Options{Timeout: lockWait})
	if err == nil && !verifiedUnchanged(path) {
		if err = verify(path, db); err != nil {
			db.Close()
		}
	}
	if errors.Is(err, ErrDamaged) {
		// Found only once bbolt read it (a garbled page): move it aside now.
		// The lock went with the handle, so take it again to move the file.
		notice, err = precheckDamaged(path, lockWait, err)
		if err != nil {
			return nil, err
		}
		db, err = openBolt(path, &bolt.Options{Timeout: lockWait})
	}
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path, notice: notice}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// openBolt opens the bbolt file, turning a lock timeout into ErrLocked and a
// panic while bbolt reads a damaged file into a DamageError.
func openBolt(path string, opts *bolt.Options) (*bolt.DB, error) {
	var db *bolt.DB
	var file *os.File
	o := *opts
	o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	err := guard(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o644, &o)
		return err
	})
	if err != nil && db == nil && file != nil && errors.Is(err, ErrDamaged) {
		// bbolt panicked half-way through Open: release its lock (its memory
		// map keeps the open file, and so the lock, alive) and its file.
		unlockFile(file)
		file.Close()
	}
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, ErrDamaged):
		return nil, err
	case errors.Is(err, bolt.ErrTimeout):
		return nil, fmt.Errorf("open store %s: it is %w (close it and retry)", path, ErrLocked)
	case errors.Is(err, bolt.ErrInvalid), errors.Is(err, bolt.ErrChecksum), errors.Is(err, bolt.ErrVersionMismatch):
		return nil, &DamageError{Path: path, Reason: err.Error()}
	}
	return nil, fmt.Errorf("open store %s: %w", path, err)
}

// Notice says what open had to do to the file (an empty file re-initialised,
// a damaged one moved aside), or "" when nothing.
func (s *Store) Notice() string { return s.notice }

// Path returns the file the store lives in.
func (s *Store) Path() string { return s.path }

// Close releases the file.
func (s *Store) Close() error {
	var state fileState
	var stateErr error = ErrReadOnly
	if !s.snapshot {
		// Taken while this process still holds the lock: the state its own
		// commits left (see verified.go).
		state, stateErr = stateOf(s.path)
	}
	if err := s.db.Close(); err != nil {
		forgetVerified(s.path)
		return fmt.Errorf("close store %s: %w", s.path, err)
	}
	if stateErr == nil {
		if err := recordVerified(s.path, state); err != nil {
			slog.Warn("store: could not record its verified state", "path", s.path, "err", err)
		}
	}
	return nil
}

// migrate brings an older file up to SchemaVersion and refuses newer ones.
func (s *Store) migrate() error {
	return s.update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists([]byte(metaBucket))
		if err != nil {
			return fmt.Errorf("create meta bucket: %w", err)
		}
		have := 0
		if v := meta.Get([]byte("schema")); len(v) == 8 {
			have = int(binary.BigEndian.Uint64(v))
		}
		if have > SchemaVersion {
			return fmt.Errorf("store schema %d is newer than this CodeLoom (%d); upgrade CodeLoom", have, SchemaVersion)
		}
		// Version 0 → 1: create the record buckets. Later versions add steps here.
		if have < 1 {
			for _, b := range recordBuckets {
				if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
					return fmt.Errorf("create bucket %s: %w", b, err)
				}
			}
		}
		var v [8]byte
		binary.BigEndian.PutUint64(v[:], SchemaVersion)
		return meta.Put([]byte("schema"), v[:])
	})
}

// Schema returns the schema version recorded in the file.
func (s *Store) Schema() (int, error) {
	var have int
	err := s.view(func(tx *bolt.Tx) error {
		if v := tx.Bucket([]byte(metaBucket)).Get([]byte("schema")); len(v) == 8 {
			have = int(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store %s schema: %w", s.path, err)
	}
	return have, nil
}

// PutBlob stores val under key in bucket, creating the bucket if needed.
func (s *Store) PutBlob(bucket, key string, val []byte) error {
	return s.PutBlobs(bucket, map[string][]byte{key: val}, nil)
}

// PutBlobs writes puts and removes deletes in bucket in one transaction.
func (s *Store) PutBlobs(bucket string, puts map[string][]byte, deletes []string) error {
	err := s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucket))
		if err != nil {
			return err
		}
		for k, v := range puts {
			if err := b.Put([]byte(k), v); err != nil {
				return fmt.Errorf("put %q: %w", k, err)
			}
		}
		for _, k := range deletes {
			if err := b.Delete([]byte(k)); err != nil {
				return fmt.Errorf("delete %q: %w", k, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store %s bucket %s: %w", s.path, bucket, err)
	}
	return nil
}

// GetBlob returns a copy of the value under key, or nil, nil when absent.
func (s *Store) GetBlob(bucket, key string) ([]byte, error) {
	var out []byte
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		if v := b.Get([]byte(key)); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store %s get %s/%s: %w", s.path, bucket, key, err)
	}
	return out, nil
}

// DeleteBlob removes key from bucket; a missing key is not an error.
func (s *Store) DeleteBlob(bucket, key string) error {
	return s.PutBlobs(bucket, nil, []string{key})
}

// ForEachBlob calls fn for every key in bucket in key order. The value is
// only valid during the call. A missing bucket yields no calls.
func (s *Store) ForEachBlob(bucket string, fn func(key string, val []byte) error) error {
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error { return fn(string(k), v) })
	})
	if err != nil {
		return fmt.Errorf("store %s bucket %s: %w", s.path, bucket, err)
	}
	return nil
}

// DeleteBucket drops a whole bucket (e.g. to invalidate a cache).
func (s *Store) DeleteBucket(bucket string) error {
	err := s.update(func(tx *bolt.Tx) error {
		err := tx.DeleteBucket([]byte(bucket))
		if errors.Is(err, bolt.ErrBucketNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store %s delete bucket %s: %w", s.path, bucket, err)
	}
	return nil
}

// keyID renders a record key as the ID callers see.
func keyID(k []byte) string { return fmt.Sprintf("%x", k) }

// appendRecord stores v (JSON) under a new time-ordered key and returns its ID.
// setID is called with the ID and time before encoding so the stored record carries them.
func (s *Store) appendRecord(bucket string, t time.Time, setID func(id string, t time.Time), v any) (string, error) {
	if t.IsZero() {
		t = time.Now()
	}
	var id string
	err := s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucket))
		if err != nil {
			return err
		}
		// The key is 8 bytes of Unix nanoseconds then the bucket's persistent
		// sequence, so keys sort by time and never collide, even for records
		// given the same time in different sessions.
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		key := make([]byte, 16)
		binary.BigEndian.PutUint64(key[:8], uint64(t.UnixNano()))
		binary.BigEndian.PutUint64(key[8:], seq)
		id = keyID(key)
		setID(id, t)
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode record: %w", err)
		}
		return b.Put(key, data)
	})
	if err != nil {
		return "", fmt.Errorf("store %s add %s record: %w", s.path, bucket, err)
	}
	return id, nil
}

// listRecords decodes up to limit records of bucket, newest first, keeping
// those for which keep returns true. limit <= 0 means all.
func listRecords[T any](s *Store, bucket string, limit int, keep func(*T) bool) ([]T, error) {
	var out []T
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var rec T
			if err := json.Unmarshal(v, &rec); err != nil {
				// One garbled record must not hide the others.
				slog.Warn("store: unreadable record skipped", "store", s.path, "bucket", bucket, "key", keyID(k), "err", err)
				continue
			}
			if keep != nil && !keep(&rec) {
				continue
			}
			out = append(out, rec)
			if limit > 0 && len(out) >= limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store %s list %s: %w", s.path, bucket, err)
	}
	return out, nil
}
