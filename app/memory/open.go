package memory

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ErrReadOnly is returned (wrapped) by writes to a store opened as a
// snapshot beside another process's writer (see OpenProjectReader).
var ErrReadOnly = errors.New("store is a read-only snapshot: another CodeLoom process is writing it")

// precheck looks at the store file before bbolt maps it, holding the same
// exclusive lock bbolt takes: an empty file is reported (bbolt re-initialises
// it) and a structurally damaged one is moved aside. It returns what it did,
// for Notice.
func precheck(path string, lockWait time.Duration) (string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		// Missing: bbolt creates it. Unreadable: bbolt says why.
		return "", nil
	}
	defer f.Close()
	if err := lockFile(f, lockWait); err != nil {
		return "", fmt.Errorf("open store %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("open store %s: %w", path, err)
	}
	if st.Size() == 0 {
		n := fmt.Sprintf("store %s was empty (0 bytes, probably cut off while it was being created); started a new one", path)
		slog.Warn(n)
		return n, nil
	}
	var dmg *DamageError
	if err := inspectFile(path, f); errors.As(err, &dmg) {
		return moveAside(path, dmg)
	}
	return "", nil
}

// precheckDamaged moves aside a store that bbolt found damaged, under the lock.
func precheckDamaged(path string, lockWait time.Duration, cause error) (string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Errorf("open store %s: %w", path, err)
	}
	defer f.Close()
	if err := lockFile(f, lockWait); err != nil {
		return "", fmt.Errorf("open store %s: %w", path, err)
	}
	var dmg *DamageError
	if !errors.As(cause, &dmg) {
		dmg = &DamageError{Path: path, Reason: cause.Error()}
	}
	return moveAside(path, dmg)
}

// moveAside renames the damaged store and returns the notice telling the
// user what happened and how to read what is left.
func moveAside(path string, dmg *DamageError) (string, error) {
	forgetVerified(path)
	dest, err := quarantine(path, time.Now())
	if err != nil {
		return "", fmt.Errorf("%v; %w", dmg, err)
	}
	n := fmt.Sprintf("%v. It was moved to %s and a new store started (the code graph cache is rebuilt). "+
		"Read what is left of its history with: codeloom salvage %s", dmg, dest, dest)
	slog.Warn(n)
	return n, nil
}

// view runs a read transaction; a damaged page becomes a DamageError.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	return guard(s.path, func() error { return s.db.View(fn) })
}

// update runs a write transaction; a damaged page becomes a DamageError.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	if s.snapshot {
		return fmt.Errorf("store %s: %w", s.path, ErrReadOnly)
	}
	return guard(s.path, func() error { return s.db.Update(fn) })
}
