package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A full verify (every key of every bucket) reads the whole store; on a big
// project's graph cache that is most of an open's cost. So a writer that
// closes the store records the file's state as it left it — size, mtime and
// the newest committed transaction, taken while it still holds the lock — in
// codeloom.db.verified, and the next open skips the walk when the file is
// still exactly in that state. Any other change (another writer's commit, a
// crash before Close, a copy, a truncation) changes one of the three, and
// the store is verified again.

// verifiedSuffix names the marker file beside the store.
const verifiedSuffix = ".verified"

// fileState is what the marker records.
type fileState struct {
	size, mtime int64
	txid        uint64
}

func (s fileState) String() string { return fmt.Sprintf("%d %d %d\n", s.size, s.mtime, s.txid) }

// stateOf reads the store file's current state.
func stateOf(path string) (fileState, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileState{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fileState{}, err
	}
	m, _, err := readMeta(f)
	if err != nil {
		return fileState{}, err
	}
	return fileState{size: st.Size(), mtime: st.ModTime().UnixNano(), txid: m.txid}, nil
}

// verifiedUnchanged reports whether the store is in the state its last
// writer recorded at Close.
func verifiedUnchanged(path string) bool {
	b, err := os.ReadFile(path + verifiedSuffix)
	if err != nil || len(b) > 100 {
		return false
	}
	now, err := stateOf(path)
	if err != nil {
		return false
	}
	return strings.TrimSpace(string(b)) == strings.TrimSpace(now.String())
}

// recordVerified writes the marker for state (temp file and rename).
func recordVerified(path string, state fileState) error {
	tmp := path + verifiedSuffix + ".tmp"
	if err := os.WriteFile(tmp, []byte(state.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path+verifiedSuffix)
}

// forgetVerified removes the marker (before anything that may change the
// file without this process's commits, e.g. moving a damaged store aside).
func forgetVerified(path string) { os.Remove(path + verifiedSuffix) }

// CheckProject makes sure the project's store is sound without keeping it
// open, for a command that does not otherwise need the store (a warm open
// that loads the persisted graph). Nothing is read when there is no store
// or when the file is exactly as its last writer left it at Close; when
// another process holds the store, that process answers for it and nothing
// is done. Otherwise it is opened as OpenProject opens it (checked,
// verified, moved aside with a logged notice when damaged) and closed. It
// returns the notice of what was done, if anything.
func CheckProject(root string) (string, error) {
	path := filepath.Join(DataDir(root), FileName)
	if _, err := os.Stat(path); err != nil {
		return "", nil
	}
	if verifiedUnchanged(path) {
		return "", nil
	}
	s, err := openProject(root, time.Nanosecond)
	if errors.Is(err, ErrLocked) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	n := s.Notice()
	return n, s.Close()
}
