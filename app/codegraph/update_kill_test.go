package codegraph

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// killEdits is how many one-file edits the "edits" child makes.
const killEdits = 6

// runKillEdits is the "edits" kill child's work after the load: one-file
// edits that keep every name (lines shift: comments put above everything;
// a call added to a body), each an update whose graph shares the previous
// one's storage (the hook reports "overlay" then); the persisted graph is
// rewritten after the third edit, from that overlay graph, as the
// background writer does, after the fifth (the fourth added a call: ranks
// are computed again), and at Close (the sixth only shifted lines: the
// writer reuses the ranks, hook "snapshot-ranks-reused").
func runKillEdits(t *testing.T, p *Project, root string, hook func(string)) {
	ctx := context.Background()
	for k := 0; k < killEdits; k++ {
		file, fn := "pkg/util.py", func(s string) string { return fmt.Sprintf("# edit %d\n", k) + s }
		switch k % 3 {
		case 1:
			file = "g/a.go"
			fn = func(s string) string { return fmt.Sprintf("// edit %d\n", k) + s }
		case 2:
			file = "pkg/models.py"
		}
		if k == 3 {
			fn = func(s string) string { return strings.Replace(s, "    it.save()\n", "    it.save()\n    env()\n", 1) }
		}
		path := rewriteFile(t, root, file, fn)
		g, err := p.UpdateFiles(ctx, []string{path})
		if err != nil {
			t.Fatal(err)
		}
		if g.ov != nil {
			hook("overlay")
		}
		if k == 2 || k == 4 {
			p.flushSnapshot()
		}
	}
}

// TestPersistKillDuringEdits kills a process making successive one-file
// edits (whose graphs share storage with the previous ones) at every stage
// of persisting — the per-file records saved, the graph encoded, half
// written, synced, renamed — and after random delays; the next open must
// give exactly the graph a fresh index gives. The run that is not killed
// must have made overlay graphs (else the test would not test them) and
// leave a persisted graph that loads.
func TestPersistKillDuringEdits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	// "#2" and "#3": the later rewrites, which continue the first one's
	// string table and copy its records (encCache).
	stops := []string{"snapshot-encoded#2", "snapshot-half-written#2", "snapshot-renamed#2", "snapshot-half-written#3",
		"update-cache-saved", "snapshot-ranks-reused", "snapshot-encoded", "snapshot-half-written", "snapshot-synced", "snapshot-renamed", "done", "", "", ""}
	for _, stop := range stops {
		root := writeTree(t, persistFixture())
		openT(t, root, Options{}).Close() // the child loads the persisted graph, then edits
		delay := time.Duration(rng.Intn(1500)) * time.Millisecond
		killed, stages := runKillChild(t, "edits", root, stop, delay, 0)
		what := fmt.Sprintf("edits kill at %q (delay %v, killed %v, stages %v)", stop, delay, killed, stages)
		if stop != "" && stop != "done" && !killed {
			t.Errorf("%s: stage never reached", what)
		}
		if stop == "done" {
			if !contains(stages, "snapshot-ranks-reused") {
				t.Errorf("%s: the last write did not reuse the ranks", what)
			}
			if countStr(stages, "overlay") != killEdits {
				t.Errorf("%s: %d of %d edits made an overlay graph", what, countStr(stages, "overlay"), killEdits)
			}
			if p := openT(t, root, Options{}); !p.Report().FromSnapshot {
				t.Errorf("%s: graph not persisted after the edits", what)
			}
		}
		checkAfterKill(t, root, what)
	}
}
