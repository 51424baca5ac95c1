package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifySkippedOnlyWhenUnchanged checks the verified-state marker: a
// store closed by its writer is not walked again at the next open, and any
// change the marker did not see (a commit by a process that did not close,
// a damaged page) makes the next open verify and catch damage.
func TestVerifySkippedOnlyWhenUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlob("b", "k", []byte(strings.Repeat("v", 5000))); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !verifiedUnchanged(path) {
		t.Fatal("a store its writer closed is not marked verified")
	}
	marker, err := os.ReadFile(path + verifiedSuffix)
	if err != nil {
		t.Fatal(err)
	}
	// A later writer that dies before Close: its commit is not in the marker.
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlob("b", "k2", []byte("x")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.WriteFile(path+verifiedSuffix, marker, 0o644); err != nil {
		t.Fatal(err)
	}
	if verifiedUnchanged(path) {
		t.Fatal("a commit the marker did not record is taken as verified")
	}
	// Damage written after the writer closed is found at the next open
	// (the write changed the file's mtime), and the store moved aside.
	st, _ := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, st.Size()-int64(2*os.Getpagesize()))
	for i := range junk {
		junk[i] = 0xA5
	}
	f.WriteAt(junk, int64(2*os.Getpagesize()))
	f.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatalf("open after damage: %v", err)
	}
	defer s.Close()
	if s.Notice() == "" {
		t.Error("damage written after the last verified close was not detected")
	}
}

// TestCheckProject: a store as its writer left it is not read; a damaged
// one is found and moved aside with a notice.
func TestCheckProject(t *testing.T) {
	root := t.TempDir()
	if n, err := CheckProject(root); n != "" || err != nil {
		t.Fatalf("no store: %q %v", n, err)
	}
	s, err := OpenProject(root)
	if err != nil {
		t.Fatal(err)
	}
	s.PutBlob("b", "k", []byte(strings.Repeat("v", 9000)))
	s.Close()
	if n, err := CheckProject(root); n != "" || err != nil {
		t.Fatalf("clean store: %q %v", n, err)
	}
	path := filepath.Join(DataDir(root), FileName)
	st, _ := os.Stat(path)
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	junk := make([]byte, st.Size()-int64(2*os.Getpagesize()))
	for i := range junk {
		junk[i] = 0x5A
	}
	f.WriteAt(junk, int64(2*os.Getpagesize()))
	f.Close()
	n, err := CheckProject(root)
	if err != nil || !strings.Contains(n, "damaged") {
		t.Fatalf("damaged store: %q %v", n, err)
	}
}
