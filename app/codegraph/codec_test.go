package codegraph

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCodecRoundTripAndCorruption(t *testing.T) {
	root := writeTree(t, pyFixture)
	p := openT(t, root, Options{NoCache: true})
	if len(p.files) < 4 {
		t.Fatalf("fixture indexed %d files", len(p.files))
	}
	for path, fd := range p.files {
		b := encodeFileData(fd)
		got, err := decodeFileData(b)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !reflect.DeepEqual(normalise(got), normalise(fd)) {
			t.Errorf("%s: round trip differs:\n%+v\n%+v", path, got, fd)
		}
		// Every truncation and a flipped byte are errors, never panics.
		for i := 0; i < len(b); i++ {
			if _, err := decodeFileData(b[:i]); err == nil {
				t.Errorf("%s: truncated at %d decoded without error", path, i)
				break
			}
		}
		bad := append([]byte(nil), b...)
		bad[0] = 99
		if _, err := decodeFileData(bad); err == nil {
			t.Errorf("%s: wrong version accepted", path)
		}
	}
	// A damaged cache entry makes the file parse again instead of failing.
	p2 := openT(t, root, Options{})
	p2.Close()
	err := p2.withStore(func(s BlobStore) error {
		return s.PutBlobs(cacheFilesBucket, map[string][]byte{"app.py": []byte{codecVersion, 200, 1}}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Without the persisted graph (an unchanged project would load it and
	// read no per-file record).
	if err := os.Remove(SnapshotPath(root)); err != nil {
		t.Fatal(err)
	}
	p3, err := Open(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p3.Close()
	if r := p3.Report(); r.Parsed != 1 {
		t.Errorf("after a corrupt entry parsed %d files, want 1", r.Parsed)
	}
	byQual(t, p3.Graph(), "app.main")
}

// normalise maps empty slices to nil so DeepEqual compares content.
func normalise(fd *fileData) fileData {
	c := *fd
	if len(c.Defs) == 0 {
		c.Defs = nil
	}
	if len(c.Imports) == 0 {
		c.Imports = nil
	}
	if len(c.Env) == 0 {
		c.Env = nil
	}
	if len(c.Globals) == 0 {
		c.Globals = nil
	}
	if len(c.Packages) == 0 {
		c.Packages = nil
	}
	return c
}

// failingStore is a BlobStore whose every call fails.
type failingStore struct{}

func (failingStore) GetBlob(string, string) ([]byte, error) { return nil, errors.New("disk on fire") }
func (failingStore) PutBlobs(string, map[string][]byte, []string) error {
	return errors.New("disk on fire")
}
func (failingStore) ForEachBlob(string, func(string, []byte) error) error {
	return errors.New("disk on fire")
}
func (failingStore) DeleteBucket(string) error { return errors.New("disk on fire") }

func TestCacheFailureDoesNotStopIndex(t *testing.T) {
	root := writeTree(t, pyFixture)
	p := openT(t, root, Options{Store: failingStore{}})
	r := p.Report()
	if !strings.Contains(r.CacheErr, "disk on fire") || r.Parsed != r.Stats.Files {
		t.Errorf("report: cache error %q, parsed %d of %d", r.CacheErr, r.Parsed, r.Stats.Files)
	}
	byQual(t, p.Graph(), "app.main")
	util := filepath.Join(root, "pkg", "util.py")
	os.WriteFile(util, []byte("def only():\n    pass\n"), 0o644)
	g, err := p.UpdateFiles(context.Background(), []string{util})
	if err != nil {
		t.Fatal(err)
	}
	byQual(t, g, "pkg.util.only")
	if !strings.Contains(p.Report().CacheErr, "disk on fire") {
		t.Errorf("update: cache error not reported")
	}
}
