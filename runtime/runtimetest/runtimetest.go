// Package runtimetest is the scaffolding shared by the tests of the runtime
// package and of the adversarial suite (tests/adversarial): finding the
// processes a case started by a token in their command line, waiting for
// them to go, cleaning up after a failed case, and running a binary as an
// unprivileged user. Like net/http/httptest it is imported only by tests;
// it uses only the standard library, so runtime's own tests can import it.
package runtimetest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Token returns a random string to find a case's processes by: put it in
// their command lines (`sleep 300; : TOKEN`) and look for it with Survivors.
func Token(t testing.TB) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "cltok" + hex.EncodeToString(b[:])
}

// Survivors lists the live (not zombie) processes other than this one
// whose command line contains token.
func Survivors(token string) []int {
	names, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, n := range names {
		pid, err := strconv.Atoi(filepath.Base(n))
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile(n + "/cmdline")
		if err != nil || !bytes.Contains(cmd, []byte(token)) {
			continue
		}
		if Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which may hold spaces and ")".
	i := bytes.LastIndexByte(st, ')')
	if i < 0 || i+2 >= len(st) {
		return false
	}
	return st[i+2] != 'Z' && st[i+2] != 'X'
}

// Kill SIGKILLs every process Survivors finds for token.
func Kill(token string) {
	for _, pid := range Survivors(token) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// KillOnCleanup kills what a case left behind carrying token, when it ends
// (passed or failed).
func KillOnCleanup(t testing.TB, token string) {
	t.Cleanup(func() { Kill(token) })
}

// WaitGone waits up to d until no process carries token, and returns those
// still alive then (none when all went).
func WaitGone(token string, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if len(Survivors(token)) == 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return Survivors(token)
}

// WaitCount waits up to d until at least n processes carry token and still
// do 200 ms later (a fork not yet exec'd shows its parent's command line,
// so a count can be briefly too high), and returns the last count.
func WaitCount(token string, n int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if len(Survivors(token)) >= n {
			time.Sleep(200 * time.Millisecond)
			if len(Survivors(token)) >= n {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return len(Survivors(token))
}

// AsNobody returns a command (not started) that runs a copy of binary with
// args as the nobody user through setpriv(1), in "/", with HOME set to a
// folder that does not exist and TMPDIR to a private temporary folder. It
// skips the test, saying why, when that is impossible here: not root, no
// setpriv, no nobody user. The copy is needed because the binary usually
// sits in a folder only its owner can read.
func AsNobody(t testing.TB, binary string, args ...string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to the nobody user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv(1) to switch to the nobody user")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no nobody user")
	}
	group := nobody.Gid
	if g, err := user.LookupGroup("nogroup"); err == nil {
		group = g.Gid
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, filepath.Base(binary))
	if err := os.WriteFile(copied, data, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o1777); err != nil { // the umask took bits off
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, append([]string{"--reuid=" + nobody.Uid, "--regid=" + group, "--clear-groups", "--", copied}, args...)...)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "HOME=/nonexistent", "TMPDIR="+tmp)
	return cmd
}
