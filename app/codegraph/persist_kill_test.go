package codegraph

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The kill tests re-run this test binary as a child that indexes or updates
// a project and is killed with SIGKILL, either at a named moment (the
// child's test hook prints the stage and waits there) or after a random
// delay. The next open of the project must give exactly the graph a fresh
// index (no cache) gives.

const (
	killChildEnv = "CODELOOM_PERSIST_KILL_CHILD" // mode: index | update
	killRootEnv  = "CODELOOM_PERSIST_KILL_ROOT"
	killStopEnv  = "CODELOOM_PERSIST_KILL_STOP" // stage to wait at ("" none)
	killEditEnv  = "CODELOOM_PERSIST_KILL_EDIT" // edit number (update mode)
)

// TestPersistKillChild is the child process; it does nothing in a normal run.
func TestPersistKillChild(t *testing.T) {
	mode := os.Getenv(killChildEnv)
	if mode == "" {
		t.Skip("child process of the kill tests")
	}
	root := os.Getenv(killRootEnv)
	stop := os.Getenv(killStopEnv)
	out := bufio.NewWriter(os.Stdout)
	// A stop "stage#k" is the k-th time the stage is reached (reported as
	// such from the second time on, besides the plain name).
	var mu sync.Mutex
	seen := map[string]int{}
	hook := func(stage string) {
		mu.Lock()
		seen[stage]++
		nth := fmt.Sprintf("%s#%d", stage, seen[stage])
		fmt.Fprintf(out, "STAGE %s\n", stage)
		if seen[stage] > 1 {
			fmt.Fprintf(out, "STAGE %s\n", nth)
		}
		out.Flush()
		mu.Unlock()
		if stage == stop || nth == stop {
			time.Sleep(time.Hour) // the parent kills us here
		}
	}
	p, err := Open(context.Background(), root, Options{testHook: hook, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if mode == "update" {
		n, _ := strconv.Atoi(os.Getenv(killEditEnv))
		if n%2 == 0 {
			// As the app's watcher does: prepare for updates in the
			// background while the update arrives (it waits for that work).
			go p.PrepareUpdates(context.Background())
		}
		path := applyKillEdit(t, root, n)
		if _, err := p.UpdateFiles(context.Background(), []string{path}); err != nil {
			t.Fatal(err)
		}
	}
	if mode == "edits" {
		runKillEdits(t, p, root, hook) // update_kill_test.go
	}
	p.Close()
	hook("done")
}

// applyKillEdit changes the project: edit n alternates a body edit, a new
// definition calling another file, and a new file.
func applyKillEdit(t *testing.T, root string, n int) string {
	var path, add string
	switch n % 3 {
	case 0:
		path, add = "pkg/util.py", fmt.Sprintf("\n\ndef added%d():\n    return helper()\n", n)
	case 1:
		path, add = "pkg/models.py", fmt.Sprintf("\n\nclass Extra%d(Item):\n    def total(self):\n        return self.price() + %d\n", n, n)
	default:
		path, add = fmt.Sprintf("pkg/new%d.py", n), "from .util import make\n\ndef fresh():\n    return make(2)\n"
	}
	full := filepath.Join(root, filepath.FromSlash(path))
	old, _ := os.ReadFile(full)
	if err := os.WriteFile(full, append(old, add...), 0o644); err != nil {
		t.Fatal(err)
	}
	return full
}

// runKillChild starts the child and kills it at stop (or after delay when
// stop is ""). It reports whether the child was killed before finishing.
func runKillChild(t *testing.T, mode, root, stop string, delay time.Duration, edit int) (killed bool, stages []string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPersistKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killChildEnv+"="+mode, killRootEnv+"="+root, killStopEnv+"="+stop,
		killEditEnv+"="+strconv.Itoa(edit))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var timer <-chan time.Time
	if stop == "" {
		timer = time.After(delay)
	}
	deadline := time.After(60 * time.Second)
	kill := func() {
		cmd.Process.Signal(syscall.SIGKILL)
		killed = true
	}
loop:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break loop
			}
			if st, ok := strings.CutPrefix(l, "STAGE "); ok {
				stages = append(stages, st)
				if st == stop {
					kill()
				}
			}
		case <-timer:
			kill()
			timer = nil
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("child %s stop=%q did not finish or reach its stage in 60 s (stages %v)", mode, stop, stages)
		}
	}
	cmd.Wait()
	if !killed && !contains(stages, "done") {
		t.Fatalf("child %s stop=%q exited without finishing (stages %v)", mode, stop, stages)
	}
	return killed && !contains(stages, "done"), stages
}

// snapTemps lists the temporary snapshot files in root's cache folder.
func snapTemps(root string) []string {
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(SnapshotPath(root)), snapTmpPattern))
	return left
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// checkAfterKill opens the project as the next run would and compares its
// graph's node and edge sets with a fresh index of the same files.
func checkAfterKill(t *testing.T, root, what string) {
	t.Helper()
	p, err := Open(context.Background(), root, Options{Workers: 2})
	if err != nil {
		t.Fatalf("%s: open after kill: %v", what, err)
	}
	// What a killed writer left in the cache folder is gone.
	if left := snapTemps(root); len(left) > 0 {
		t.Errorf("%s: temporary snapshots left after the next open: %v", what, left)
	}
	got := p.Graph()
	p.mu.Lock()
	ranks, rankG := p.ranks, p.rankG
	p.mu.Unlock()
	p.Close()
	q, err := Open(context.Background(), root, Options{NoCache: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	fresh := q.Graph()
	q.Close()
	gn, fn := nodeSet(got), nodeSet(fresh)
	if strings.Join(gn, "\n") != strings.Join(fn, "\n") {
		t.Errorf("%s: node set differs from a fresh index (%d vs %d nodes)", what, len(gn), len(fn))
	}
	ge, fe := persistEdgeSet(got), persistEdgeSet(fresh)
	if strings.Join(ge, "\n") != strings.Join(fe, "\n") {
		t.Errorf("%s: edge set differs from a fresh index (%d vs %d edges)", what, len(ge), len(fe))
	}
	if got.Stats().Resolved != fresh.Stats().Resolved || got.Stats().Unresolved != fresh.Stats().Unresolved {
		t.Errorf("%s: stats differ", what)
	}
	// The global ranks persisted with the graph (loaded, or written by
	// this open's rebuild) are bit for bit those of the fresh graph: a
	// writer that reused earlier ranks must have had the same arcs.
	if rankG != got {
		t.Errorf("%s: no persisted ranks for the graph opened", what)
	} else if want := globalRanks(fresh); !sameFloats(ranks, want) {
		t.Errorf("%s: persisted global ranks differ from a fresh index's (%d vs %d)", what, len(ranks), len(want))
	}
}

// sameFloats reports whether a and b hold bit-identical values.
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func nodeSet(g *Graph) []string {
	out := make([]string, len(g.nodes))
	for i, n := range g.nodes {
		out[i] = fmt.Sprintf("%+v", *n)
	}
	sort.Strings(out)
	return out
}

var indexStages = []string{"cache-saved", "snapshot-encoded", "snapshot-half-written", "snapshot-synced", "snapshot-renamed"}
var updateStages = []string{"prepare-start", "prepare-built", "update-cache-saved", "snapshot-encoded", "snapshot-half-written", "snapshot-synced", "snapshot-renamed"}

func TestPersistKillDuringIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for i, stop := range append(append([]string{}, indexStages...), "", "", "", "", "", "") {
		root := writeTree(t, persistFixture())
		if i%2 == 1 {
			// Start from a persisted graph that a change made stale.
			openT(t, root, Options{}).Close()
			applyKillEdit(t, root, i)
		}
		delay := time.Duration(rng.Intn(600)) * time.Millisecond
		killed, stages := runKillChild(t, "index", root, stop, delay, 0)
		what := fmt.Sprintf("index kill at %q (delay %v, killed %v, stages %v)", stop, delay, killed, stages)
		if stop != "" && !killed {
			t.Errorf("%s: stage never reached", what)
		}
		if killed && (stop == "snapshot-half-written" || stop == "snapshot-synced") && len(snapTemps(root)) == 0 {
			t.Errorf("%s: the killed write left no temporary snapshot to clear", what)
		}
		checkAfterKill(t, root, what)
	}
}

func TestPersistKillDuringUpdate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for i, stop := range append(append([]string{}, updateStages...), "", "", "", "", "", "") {
		root := writeTree(t, persistFixture())
		openT(t, root, Options{}).Close() // the child loads the persisted graph, then updates
		delay := time.Duration(rng.Intn(800)) * time.Millisecond
		killed, stages := runKillChild(t, "update", root, stop, delay, i)
		what := fmt.Sprintf("update kill at %q (delay %v, killed %v, stages %v)", stop, delay, killed, stages)
		if stop != "" && !killed {
			t.Errorf("%s: stage never reached", what)
		}
		checkAfterKill(t, root, what)
		if !killed {
			// A finished update persisted its graph: the next open is a load.
			if p := openT(t, root, Options{}); !p.Report().FromSnapshot {
				t.Errorf("%s: graph not persisted after a finished update", what)
			}
		}
	}
}
