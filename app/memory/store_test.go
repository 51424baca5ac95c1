package memory

import (
	"bufio"
	"encoding/binary"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := OpenProject(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestOpenProjectIgnoresItselfForGit(t *testing.T) {
	root := t.TempDir()
	s, err := OpenProject(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data, err := os.ReadFile(filepath.Join(root, DirName, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != GitIgnore {
		t.Fatalf(".gitignore = %q", data)
	}
	if v, err := s.Schema(); err != nil || v != SchemaVersion {
		t.Fatalf("schema = %d, %v; want %d", v, err, SchemaVersion)
	}
}

func TestBlobsRoundTrip(t *testing.T) {
	s := openTemp(t)
	if v, err := s.GetBlob("cache", "missing"); err != nil || v != nil {
		t.Fatalf("missing key: %q, %v", v, err)
	}
	if err := s.PutBlobs("cache", map[string][]byte{"a": []byte("1"), "b": []byte("2"), "c": []byte("3")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlobs("cache", map[string][]byte{"d": []byte("4")}, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := s.ForEachBlob("cache", func(k string, v []byte) error { keys = append(keys, k+"="+string(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(keys, ","); got != "a=1,c=3,d=4" {
		t.Fatalf("blobs = %s", got)
	}
	if err := s.DeleteBucket("cache"); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.GetBlob("cache", "a"); v != nil {
		t.Fatalf("bucket not dropped: %q", v)
	}
	if err := s.DeleteBucket("never-made"); err != nil {
		t.Fatalf("dropping a missing bucket: %v", err)
	}
}

func TestRecordsNewestFirstAndFiltered(t *testing.T) {
	s := openTemp(t)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := 0; i < 5; i++ {
		if _, err := s.AddExchange(Exchange{Time: base.Add(time.Duration(i) * time.Second), Session: []string{"a", "b"}[i%2], Role: "coder", Prompt: strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Exchanges("", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 || all[0].Prompt != "4" || all[4].Prompt != "0" {
		t.Fatalf("order: %+v", all)
	}
	a, _ := s.Exchanges("a", 2)
	if len(a) != 2 || a[0].Prompt != "4" || a[1].Prompt != "2" {
		t.Fatalf("session filter + limit: %+v", a)
	}
	if all[0].ID == "" || all[0].ID == all[1].ID {
		t.Fatalf("IDs not set or not unique: %q %q", all[0].ID, all[1].ID)
	}
}

func TestRunAndVersionByID(t *testing.T) {
	s := openTemp(t)
	id, err := s.AddRun(RunRecord{Command: []string{"python3", "-c", "print(1)"}, ExitCode: 3, PeakRSS: 1234,
		Samples: []Sample{{At: time.Millisecond, CPUPercent: 50, RSS: 1000}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != id || r.ExitCode != 3 || r.PeakRSS != 1234 || len(r.Samples) != 1 || r.Start.IsZero() {
		t.Fatalf("run = %+v", r)
	}
	if _, err := s.Run("zz"); err == nil {
		t.Fatal("a bad ID was accepted")
	}
	if _, err := s.AddVersion(Version{Path: "a.py", Content: []byte("old\x00binary")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddVersion(Version{Path: "b.py", Content: []byte("other")}); err != nil {
		t.Fatal(err)
	}
	vs, err := s.Versions("a.py", 0)
	if err != nil || len(vs) != 1 || string(vs[0].Content) != "old\x00binary" {
		t.Fatalf("versions = %+v, %v", vs, err)
	}
	if v, err := s.Version(vs[0].ID); err != nil || v.Path != "a.py" {
		t.Fatalf("version by id = %+v, %v", v, err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucketIfNotExists([]byte(metaBucket))
		var v [8]byte
		binary.BigEndian.PutUint64(v[:], SchemaVersion+1)
		return b.Put([]byte("schema"), v[:])
	})
	db.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("newer schema: err = %v", err)
	}
}

func TestLockedStoreSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = open(path, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "locked by another") {
		t.Fatalf("second open: %v", err)
	}
}

func TestGarbageFileIsMovedAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	garbage := []byte(strings.Repeat("not a database ", 1000))
	if err := os.WriteFile(path, garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(s.Notice(), "damaged") || !strings.Contains(s.Notice(), "meta") {
		t.Fatalf("notice = %q", s.Notice())
	}
	kept := damagedFiles(t, path)
	if len(kept) != 1 {
		t.Fatalf("damaged copies: %v", kept)
	}
	if data, _ := os.ReadFile(kept[0]); string(data) != string(garbage) {
		t.Fatal("the damaged file was not kept as it was")
	}
}

// crashWriterEnv makes the test binary a writer that prints the number of
// each record once its transaction has committed.
const crashWriterEnv = "CODELOOM_MEMORY_CRASH_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashWriterEnv); path != "" {
		crashWriter(path)
		return
	}
	if root := os.Getenv(holderEnv); root != "" {
		holdAndWrite(root)
		return
	}
	os.Exit(m.Run())
}

func crashWriter(path string) {
	s, err := Open(path)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	n, _ := s.Runs(0)
	for i := len(n); ; i++ {
		payload := strings.Repeat("x", 100+i%4000) // vary page usage
		if _, err := s.AddRun(RunRecord{Origin: "crash", ExitCode: i, Stdout: payload}); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(4)
		}
		if err := s.PutBlob("cache", strconv.Itoa(i%50), []byte(payload)); err != nil {
			os.Exit(5)
		}
		os.Stdout.WriteString(strconv.Itoa(i) + "\n")
	}
}

// TestSurvivesKillDashNine kills a writing process at random moments and
// checks every reopen succeeds with every acknowledged record intact.
func TestSurvivesKillDashNine(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test spawns processes")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	rng := rand.New(rand.NewSource(1))
	acked := -1
	for round := 0; round < 8; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashWriterEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan int, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if n, err := strconv.Atoi(sc.Text()); err == nil {
					lines <- n
				}
			}
			close(lines)
		}()
		// Kill at a random moment once the writer is writing (its start
		// can take long on a loaded machine).
		select {
		case n, ok := <-lines:
			if ok {
				acked = n
			}
		case <-time.After(30 * time.Second):
		}
		time.Sleep(time.Duration(30+rng.Intn(120)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for n := range lines {
			acked = n
		}
		cmd.Wait()

		s, err := Open(path)
		if err != nil {
			t.Fatalf("round %d: reopen after kill -9: %v", round, err)
		}
		runs, err := s.Runs(0)
		if err != nil {
			t.Fatalf("round %d: read after kill -9: %v", round, err)
		}
		if len(runs) < acked+1 {
			t.Fatalf("round %d: %d records survive, but %d were acknowledged", round, len(runs), acked+1)
		}
		for i, r := range runs { // newest first: exit codes count down
			if r.ExitCode != len(runs)-1-i {
				t.Fatalf("round %d: record %d has exit code %d", round, i, r.ExitCode)
			}
		}
		s.Close()
	}
	if acked < 5 {
		t.Fatalf("the writer committed only %d records; the test proved little", acked+1)
	}
}

// Records given the same time in two sessions (two opens of the file) must
// both survive: the key's tie-breaker may not restart at every open.
func TestSameTimeAcrossSessionsKeepsBoth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	var ids []string
	for i := 0; i < 2; i++ {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		id, err := s.AddLesson(Lesson{Time: at, Task: "task " + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ls, err := s.Lessons(0)
	if err != nil || len(ls) != 2 || ids[0] == ids[1] {
		t.Fatalf("lessons = %+v, %v (ids %v)", ls, err, ids)
	}
}
