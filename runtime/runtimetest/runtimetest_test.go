package runtimetest

import (
	"os/exec"
	"testing"
	"time"
)

// A process carrying a token is found, counted, killed and seen gone; one
// that was not given the token is not found.
func TestSurvivorsFindKillAndWait(t *testing.T) {
	tok := Token(t)
	KillOnCleanup(t, tok)
	if got := Survivors(tok); len(got) != 0 {
		t.Fatalf("a fresh token already names %v", got)
	}
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	cmd := exec.Command("sh", "-c", "sleep 30; : "+tok)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	if n := WaitCount(tok, 1, 20*time.Second); n != 1 {
		t.Fatalf("%d processes carry the token, want the one shell", n)
	}
	if !Alive(cmd.Process.Pid) {
		t.Fatal("the running shell is not Alive")
	}
	Kill(tok)
	<-done // reaped: no zombie left to count
	if left := WaitGone(tok, 5*time.Second); len(left) != 0 {
		t.Fatalf("%v still carry the token after Kill", left)
	}
	if Alive(cmd.Process.Pid) {
		t.Fatal("the reaped shell is still Alive")
	}
	if !Alive(other.Process.Pid) {
		t.Fatal("Kill took a process that did not carry the token")
	}
}

// AsNobody runs a copy of the binary as nobody (or skips, saying why).
func TestAsNobody(t *testing.T) {
	id, err := exec.LookPath("id")
	if err != nil {
		t.Skip("no id(1)")
	}
	out, err := AsNobody(t, id, "-un").CombinedOutput()
	if err != nil {
		t.Fatalf("id as nobody: %v\n%s", err, out)
	}
	if string(out) != "nobody\n" {
		t.Fatalf("id -un as nobody said %q", out)
	}
}
