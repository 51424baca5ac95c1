package ui

import (
	"bytes"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"
)

// stallThreshold is the UI-goroutine block the watchdog reports.
const stallThreshold = 100 * time.Millisecond

// heartbeat is how often the watchdog pings the UI goroutine (and the
// automation file is rewritten).
const heartbeat = 500 * time.Millisecond

// stallStats is the watchdog's record: the longest time the UI goroutine
// did not answer, and what it was doing then.
type stallStats struct {
	mu      sync.Mutex
	longest time.Duration
	what    string
	count   int // stalls over stallThreshold
}

func (s *stallStats) note(d time.Duration, what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d > stallThreshold {
		s.count++
	}
	if d > s.longest {
		s.longest, s.what = d, what
	}
}

func (s *stallStats) get() (time.Duration, string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.longest, s.what, s.count
}

// startWatchdog pings the UI goroutine every heartbeat until stop closes:
// each ping rewrites the automation file (so the file's rewrite gaps are
// the UI stalls), and a ping not answered within stallThreshold is logged
// with the UI goroutine's stack at that moment: what blocked it.
func (w *Workbench) startWatchdog(stop <-chan struct{}) {
	go func() {
		t := time.NewTicker(heartbeat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			sent := time.Now()
			done := make(chan struct{})
			w.do(func() {
				w.writeState()
				close(done)
			})
			late := time.NewTimer(stallThreshold)
			what := ""
			select {
			case <-done:
			case <-stop:
				late.Stop()
				return
			case <-late.C:
				what = uiStack()
				select {
				case <-done:
				case <-stop:
					return
				}
			}
			late.Stop()
			if d := time.Since(sent); d > stallThreshold {
				w.stalls.note(d, what)
				slog.Warn("UI goroutine stalled", "for", d.Round(time.Millisecond), "in", what)
			} else {
				w.stalls.note(d, "")
			}
		}
	}()
}

// uiStack names what the main goroutine (Fyne's UI goroutine) is running:
// its innermost CodeLoom frames, else its innermost frames.
func uiStack() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var main []byte
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.HasPrefix(g, []byte("goroutine 1 ")) {
			main = g
			break
		}
	}
	if main == nil {
		return "(UI goroutine not found)"
	}
	var ours, all []string
	lines := strings.Split(string(main), "\n")
	for i := 1; i < len(lines); i += 2 {
		fn := lines[i]
		if j := strings.LastIndexByte(fn, '('); j > 0 {
			fn = fn[:j]
		}
		all = append(all, fn)
		if strings.HasPrefix(fn, "codeloom/") {
			ours = append(ours, fn)
		}
	}
	// The innermost frames say what runs; the innermost CodeLoom frame
	// says who asked for it.
	what := strings.Join(all[:min(3, len(all))], " < ")
	if len(ours) > 0 {
		what += " … " + ours[0]
	}
	return what
}
