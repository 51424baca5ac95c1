package adversarial

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// storeProject is a small Python project whose store has a graph cache and
// some recorded runs, enough pages for truncation to 16 KiB to cut into it.
func storeProject(t *testing.T) (dir, db string) {
	t.Helper()
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("pkg/mod%02d.py", i)] = fmt.Sprintf("import os\n\n\ndef helper_%d(x):\n    return os.path.join(str(x), %q)\n\n\nclass Thing%d:\n    def run(self):\n        return helper_%d(%d)\n", i, strings.Repeat("p", 300), i, i, i)
	}
	dir = project(t, files)
	if r := run(t, limits{}, "index", dir); r.Code != 0 {
		t.Fatalf("index: %s", r)
	}
	for i := 0; i < 3; i++ {
		if r := run(t, limits{}, "exec", "--dir", dir, "--", "echo", strings.Repeat("out", 500)); r.Code != 0 {
			t.Fatalf("exec: %s", r)
		}
	}
	db = filepath.Join(dir, ".codeloom", "codeloom.db")
	if st, err := os.Stat(db); err != nil || st.Size() <= 16<<10 {
		t.Fatalf("store %v bytes (%v): too small to truncate", st.Size(), err)
	}
	return dir, db
}

// storeGarbleRoots writes random bytes over the root bucket page named by
// each meta page, as a disk or another program might.
func storeGarbleRoots(t *testing.T, db string) {
	t.Helper()
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hdr := make([]byte, 8192)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for _, off := range []int{0, 4096} {
		pageSize := int64(binary.LittleEndian.Uint32(hdr[off+16+8:]))
		root := int64(binary.LittleEndian.Uint64(hdr[off+16+16:]))
		junk := make([]byte, pageSize)
		rng.Read(junk)
		if _, err := f.WriteAt(junk, root*pageSize); err != nil {
			t.Fatal(err)
		}
	}
}

func storeDamagedCopies(t *testing.T, db string) []string {
	m, _ := filepath.Glob(db + ".damaged-*")
	return m
}

// Each command that opens the store, on each kind of damage: no panic, a
// clear message, the damaged file kept, and the next run works.
func TestStoreDamagedStoreNeverPanics(t *testing.T) {
	script := filepath.Join(t.TempDir(), "answers.script")
	os.WriteFile(script, []byte("no change needed\n"), 0o644)
	cmds := map[string]func(dir string) []string{
		"history": func(dir string) []string { return []string{"history", dir} },
		"index":   func(dir string) []string { return []string{"index", dir} },
		"exec":    func(dir string) []string { return []string{"exec", "--dir", dir, "--", "true"} },
		"task":    func(dir string) []string { return []string{"task", dir, "say hello", "--script", script} },
	}
	damage := map[string]func(t *testing.T, db string){
		"garbled-page": storeGarbleRoots,
		"truncated": func(t *testing.T, db string) {
			if err := os.Truncate(db, 16<<10); err != nil {
				t.Fatal(err)
			}
		},
	}
	for dname, hurt := range damage {
		for cname, args := range cmds {
			t.Run(dname+"/"+cname, func(t *testing.T) {
				dir, db := storeProject(t)
				hurt(t, db)
				r := run(t, limits{Timeout: 120 * time.Second}, args(dir)...)
				r.bounded(t)
				if r.Code == 2 || !strings.Contains(r.Stderr, "is damaged") || !strings.Contains(r.Stderr, "codeloom salvage") {
					t.Fatalf("no clear message about the damage: %s", r)
				}
				kept := storeDamagedCopies(t, db)
				if len(kept) != 1 {
					t.Fatalf("damaged copies kept: %v\n%s", kept, r)
				}
				// What is left can be read.
				s := run(t, limits{}, "salvage", kept[0], "--json")
				s.bounded(t)
				if s.Code != 0 && s.Code != 1 {
					t.Fatalf("salvage: %s", s)
				}
				// The next run works on a fresh store.
				again := run(t, limits{Timeout: 120 * time.Second}, args(dir)...)
				again.bounded(t)
				if again.Code == 2 || strings.Contains(again.Stderr, "damaged") {
					t.Fatalf("next run: %s", again)
				}
				if cname == "index" && (again.Code != 0 || !strings.Contains(again.Stdout, "helper_3") && !strings.Contains(again.Stdout, "nodes")) {
					t.Fatalf("index after recovery: %s", again)
				}
			})
		}
	}
}

func TestStoreEmptyStoreIsReported(t *testing.T) {
	dir := project(t, map[string]string{"a.py": "def f():\n    return 1\n"})
	os.MkdirAll(filepath.Join(dir, ".codeloom"), 0o755)
	os.WriteFile(filepath.Join(dir, ".codeloom", "codeloom.db"), nil, 0o644)
	r := run(t, limits{}, "index", dir)
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stderr, "was empty") {
		t.Fatalf("empty store: %s", r)
	}
}

// storeHeld reports whether some process holds bbolt's exclusive lock on db.
func storeHeld(db string) bool {
	f, err := os.Open(db)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// holdStore starts a `codeloom exec` of `sleep secs` in dir, which records
// into the project's store and so holds bbolt's write lock on db, and waits
// (30 s at most) until it holds it; its process group is killed when the
// test ends.
func holdStore(t *testing.T, dir, db string, secs int) {
	t.Helper()
	s := strconv.Itoa(secs)
	holder := exec.Command(bin, "exec", "--dir", dir, "--timeout", s+"s", "--", "sleep", s)
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(holder.Process.Pid); holder.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for !storeHeld(db) {
		if time.Now().After(deadline) {
			t.Fatal("the exec never held the store")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A read-only query answers while another codeloom process (a long exec
// that records into the store) holds the store for writing.
func TestStoreQueryBesideAWriter(t *testing.T) {
	dir, db := storeProject(t)
	holdStore(t, dir, db, 60)
	for _, args := range [][]string{
		{"query", dir, "search", "helper_7"},
		{"query", dir, "rdeps", "helper_7"},
		{"search", dir, "helper_7"},
		{"history", dir},
		{"index", dir, "--json"},
	} {
		r := run(t, limits{Timeout: 60 * time.Second}, args...)
		r.bounded(t)
		if r.Code != 0 || strings.Contains(r.Stderr, "locked") {
			t.Fatalf("%v beside a writer: %s", args, r)
		}
		if (args[0] == "query" || args[0] == "search") && !strings.Contains(r.Stdout, "helper_7") && !strings.Contains(r.Stdout, "Thing7") {
			t.Fatalf("%v: no answer: %s", args, r)
		}
		if !storeHeld(db) {
			t.Fatal("the writer let go; the case proved nothing")
		}
	}
	left, _ := filepath.Glob(db + ".snapshot-*")
	if len(left) != 0 {
		t.Fatalf("snapshots left behind: %v", left)
	}
}

// A second OS user on the machine: go-graphviz's compile cache of the first
// user (here root) must not make every command panic. Needs root to make the
// throwaway user; skipped otherwise.
func TestStoreSecondUserDoesNotPanic(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to create a throwaway second user")
	}
	for _, tool := range []string{"useradd", "userdel", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	name := "clstore" + strconv.Itoa(os.Getpid()%100000)
	if out, err := exec.Command("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Skipf("useradd: %v %s", err, out)
	}
	defer exec.Command("userdel", name).Run()
	uidOut, err := exec.Command("id", "-u", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	uid := strings.TrimSpace(string(uidOut))

	// A place both users can reach: the binary, a project, a shared temp folder.
	base, err := os.MkdirTemp("", "codeloom-adv-user-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	os.Chmod(base, 0o755)
	userBin := filepath.Join(base, "codeloom")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(userBin, data, 0o755)
	shared := filepath.Join(base, "tmp")
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, 0o1777)
	// The first user's go-graphviz cache as older builds left it in the
	// shared temp folder: go-graphviz/wazero-<version>/ readable only by root.
	rootCache := filepath.Join(base, "rootcache")
	first := exec.Command(userBin, "version")
	first.Env = append(os.Environ(), "XDG_CACHE_HOME="+rootCache)
	if out, err := first.CombinedOutput(); err != nil {
		t.Fatalf("first user: %v %s", err, out)
	}
	vers, _ := filepath.Glob(filepath.Join(rootCache, "codeloom", "graphviz", "go-graphviz", "wazero-*"))
	if len(vers) == 0 {
		t.Fatal("no go-graphviz cache was written for the first user")
	}
	os.MkdirAll(filepath.Join(shared, "go-graphviz", filepath.Base(vers[0])), 0o700)
	os.Chmod(filepath.Join(shared, "go-graphviz"), 0o755)

	proj := filepath.Join(base, "proj")
	os.Mkdir(proj, 0o777)
	os.WriteFile(filepath.Join(proj, "a.py"), []byte("def f():\n    return 1\n"), 0o666)
	home := filepath.Join(base, "home")
	os.Mkdir(home, 0o700)
	exec.Command("chown", "-R", uid, home, proj).Run()

	for _, args := range [][]string{{"version"}, {"index", proj}} {
		cmd := exec.Command("setpriv", append([]string{"--reuid", uid, "--regid", uid, "--clear-groups", userBin}, args...)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + shared}
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(120 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%v as a second user: hung", args)
		}
		if err != nil || strings.Contains(string(out), "panic") {
			t.Fatalf("%v as a second user: %v\n%s", args, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".cache", "codeloom", "graphviz")); err != nil {
		t.Fatalf("the second user's own cache was not used: %v", err)
	}
}
