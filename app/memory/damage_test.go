package memory

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// damagedFiles lists the copies of path moved aside as damaged.
func damagedFiles(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".damaged-*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// filledStore writes a store with enough records to span many pages and
// returns its path.
func filledStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "codeloom.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		if _, err := s.AddRun(RunRecord{Origin: "test", ExitCode: i, Stdout: strings.Repeat("o", 50+i*7)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.LogActivity(Activity{Module: "m", Action: "a", Detail: strings.Repeat("d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutBlob("graph.files", "a.py", []byte(strings.Repeat("g", 9000))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAll reads everything a command would; it must not panic.
func readAll(s *Store) error {
	if _, err := s.Runs(0); err != nil {
		return err
	}
	if _, err := s.Activities(0); err != nil {
		return err
	}
	return s.ForEachBlob("graph.files", func(string, []byte) error { return nil })
}

func TestTruncatedStoreIsMovedAsideAndReplaced(t *testing.T) {
	path := filledStore(t)
	st, _ := os.Stat(path)
	if st.Size() <= 16<<10 {
		t.Fatalf("store only %d bytes; truncation proves nothing", st.Size())
	}
	if err := os.Truncate(path, 16<<10); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.Notice(), "truncated") || !strings.Contains(s.Notice(), "codeloom salvage") {
		t.Fatalf("notice = %q", s.Notice())
	}
	kept := damagedFiles(t, path)
	if len(kept) != 1 {
		t.Fatalf("damaged copies: %v", kept)
	}
	if st, _ := os.Stat(kept[0]); st.Size() != 16<<10 {
		t.Fatalf("kept copy is %d bytes", st.Size())
	}
	// The new store works and is empty.
	if runs, err := s.Runs(0); err != nil || len(runs) != 0 {
		t.Fatalf("new store runs = %d, %v", len(runs), err)
	}
	if _, err := s.AddRun(RunRecord{Origin: "after"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Notice() != "" {
		t.Fatalf("second open still complains: %q", s.Notice())
	}
}

func TestEmptyStoreIsReportedAndReinitialised(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codeloom.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(s.Notice(), "was empty") {
		t.Fatalf("notice = %q", s.Notice())
	}
	if _, err := s.AddLesson(Lesson{Task: "x"}); err != nil {
		t.Fatal(err)
	}
}

// Random bytes over any one page: opening never panics; either the damage is
// found (file moved aside, new store) or every read still works.
func TestRandomBytesInAnyPageNeverPanic(t *testing.T) {
	good := filledStore(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	pages := len(data) / page
	rng := rand.New(rand.NewSource(7))
	found := 0
	for p := 0; p < pages; p++ {
		bad := append([]byte(nil), data...)
		rng.Read(bad[p*page : (p+1)*page])
		path := filepath.Join(t.TempDir(), "codeloom.db")
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(path)
		if err != nil {
			t.Fatalf("page %d: open: %v", p, err)
		}
		if s.Notice() != "" {
			found++
			if len(damagedFiles(t, path)) != 1 {
				t.Fatalf("page %d: damage reported but no copy kept: %q", p, s.Notice())
			}
		} else if err := readAll(s); err != nil && !strings.Contains(err.Error(), "decode") {
			t.Errorf("page %d: damage not found at open, then: %v", p, err)
		}
		s.Close()
	}
	// Pages 0 and 1 are metas (one bad meta is survivable); most others
	// hold tree pages whose damage must be found.
	if found < pages/3 {
		t.Fatalf("damage found in only %d of %d pages", found, pages)
	}
	t.Logf("damage found at open in %d of %d pages", found, pages)
}

// A page garbled while the store is open (by another program) gives an
// error on the next read, not a crash.
func TestPageGarbledWhileOpenIsAnError(t *testing.T) {
	path := filledStore(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	junk := make([]byte, st.Size()-2*4096)
	rand.New(rand.NewSource(3)).Read(junk)
	if _, err := f.WriteAt(junk, 2*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	err = readAll(s)
	if err == nil {
		t.Fatal("reading a garbled store succeeded")
	}
	t.Logf("read error: %v", err)
}

// Salvage reads what is left of a store damaged in any one page, never
// panicking, and recovers most records on average.
func TestSalvageReadsAroundDamage(t *testing.T) {
	good := filledStore(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	pages := len(data) / page
	rng := rand.New(rand.NewSource(11))
	total, tried := 0, 0
	for p := 2; p < pages; p++ {
		bad := append([]byte(nil), data...)
		rng.Read(bad[p*page : (p+1)*page])
		path := filepath.Join(t.TempDir(), "codeloom.db.damaged-x")
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		sv, err := Salvage(path)
		tried++
		if err != nil {
			t.Logf("page %d: %v", p, err)
			continue
		}
		total += len(sv.Records[BucketRuns])
		if after, _ := os.ReadFile(path); string(after) != string(bad) {
			t.Fatalf("page %d: salvage changed the damaged file", p)
		}
	}
	if avg := total / tried; avg < 200 {
		t.Fatalf("salvage recovered %d of 300 runs on average", avg)
	}
	// Truncated: no panic, an answer either way.
	trunc := filepath.Join(t.TempDir(), "t.db")
	if err := os.WriteFile(trunc, data[:16<<10], 0o644); err != nil {
		t.Fatal(err)
	}
	if sv, err := Salvage(trunc); err == nil {
		t.Logf("truncated: %d runs, problems %v", len(sv.Records[BucketRuns]), sv.Problems)
	}
}
