package pipeline

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"codeloom/app/memory"
)

const crashChildEnv = "CODELOOM_PIPELINE_CRASH_STORE"

// TestCrashChildWriter is the child of TestStoreSurvivesRepeatedKills: it
// writes the records a pipeline session writes, in a loop, and prints each
// ID on stdout once the store has committed it. It does nothing when run
// normally.
func TestCrashChildWriter(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("only runs as the child of TestStoreSurvivesRepeatedKills")
	}
	st, err := memory.Open(path)
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	big := strings.Repeat("prompt text ", 2000) // ~24 KB per exchange: writes span pages
	for i := 0; ; i++ {
		id, err := st.AddExchange(memory.Exchange{Session: "crash", Role: RoleCoder, Prompt: big, Answer: fmt.Sprint(i)})
		if err != nil {
			fmt.Println("write-error", err)
			os.Exit(4)
		}
		fmt.Println("exchange", id)
		id, err = st.AddLesson(memory.Lesson{Task: fmt.Sprint("task ", i), Fix: big[:2000]})
		if err != nil {
			fmt.Println("write-error", err)
			os.Exit(4)
		}
		fmt.Println("lesson", id)
		id, err = st.AddVersion(memory.Version{Path: "a.py", Content: []byte(big), Reason: "crash test"})
		if err != nil {
			fmt.Println("write-error", err)
			os.Exit(4)
		}
		fmt.Println("version", id)
	}
}

// TestStoreSurvivesRepeatedKills runs a child writer, SIGKILLs it at random
// moments, and after each kill reopens the store: the open must succeed and
// every record the child reported as committed must be readable.
func TestStoreSurvivesRepeatedKills(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills child processes")
	}
	path := filepath.Join(t.TempDir(), "codeloom.db")
	acked := map[string]map[string]bool{"exchange": {}, "lesson": {}, "version": {}}
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	const rounds = 12
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChildWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Wait for the first commit, then kill at a random moment.
		first := true
		deadline := time.After(20 * time.Second)
		killAt := time.Duration(rng.IntN(80)) * time.Millisecond
		var timer <-chan time.Time
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				kind, id, _ := strings.Cut(l, " ")
				if _, known := acked[kind]; !known {
					t.Fatalf("round %d: child said %q", round, l)
				}
				acked[kind][id] = true
				if first {
					first = false
					timer = time.After(killAt)
				}
			case <-timer:
				cmd.Process.Signal(syscall.SIGKILL)
				timer = nil
			case <-deadline:
				cmd.Process.Kill()
				t.Fatalf("round %d: child never committed a record", round)
			}
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child did not die of SIGKILL: %v", round, err)
		}
		st, err := memory.Open(path)
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
		}
		exs, err1 := st.Exchanges("crash", 0)
		les, err2 := st.Lessons(0)
		vers, err3 := st.Versions("a.py", 0)
		st.Close()
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("round %d: read after SIGKILL: %v %v %v", round, err1, err2, err3)
		}
		have := map[string]bool{}
		for _, e := range exs {
			have[e.ID] = true
		}
		for _, l := range les {
			have[l.ID] = true
		}
		for _, v := range vers {
			have[v.ID] = true
		}
		for kind, ids := range acked {
			for id := range ids {
				if !have[id] {
					t.Fatalf("round %d: committed %s %s is missing after SIGKILL", round, kind, id)
				}
			}
		}
	}
	if len(acked["exchange"]) < rounds {
		t.Fatalf("only %d exchanges committed in %d rounds", len(acked["exchange"]), rounds)
	}
	t.Logf("%d rounds, %d exchanges, %d lessons, %d versions committed and all readable",
		rounds, len(acked["exchange"]), len(acked["lesson"]), len(acked["version"]))
}
