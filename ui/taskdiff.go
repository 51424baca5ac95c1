package ui

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"codeloom/app/patch"
	"codeloom/app/pipeline"
)

// taskChanges follows a task's applied patches so its questions can show
// the net change of the whole task: each file's state before the task's
// first patch against its state now.
type taskChanges struct {
	root, request string

	mu    sync.Mutex
	order []string             // files in the order first changed
	first map[string]fileState // each file before the task touched it
}

type fileState struct {
	content string
	exists  bool
}

func newTaskChanges(root, request string) *taskChanges {
	return &taskChanges{root: root, request: request, first: map[string]fileState{}}
}

// observe records the first state of the files an applied patch changed.
// Safe on any goroutine (the pipeline's events).
func (t *taskChanges) observe(ev pipeline.Event) {
	if ev.Type != pipeline.EventApplied || ev.Changes == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ch := range ev.Changes.Changes {
		if _, seen := t.first[ch.Path]; seen || ch.Err != "" {
			continue
		}
		t.first[ch.Path] = fileState{content: string(ch.Old), exists: ch.OldExists}
		t.order = append(t.order, ch.Path)
	}
}

// net returns the unified diff first state → now of every file the task
// changed, and one summary line per file ("modify a.py +3 -1").
func (t *taskChanges) net() (diff string, summary []string) {
	t.mu.Lock()
	order := append([]string(nil), t.order...)
	first := make(map[string]fileState, len(t.first))
	for k, v := range t.first {
		first[k] = v
	}
	t.mu.Unlock()
	var b strings.Builder
	for _, p := range order {
		was := first[p]
		now := fileState{}
		if full, err := projectPath(t.root, p); err == nil {
			if data, err := os.ReadFile(full); err == nil {
				now = fileState{content: string(data), exists: true}
			}
		}
		d, add, del := patch.UnifiedDiff(p, was.content, now.content, was.exists, now.exists)
		action := patch.ActionModify
		switch {
		case d == "", !was.exists && !now.exists:
			summary = append(summary, "unchanged "+p+" (changed, then put back)")
			continue
		case !was.exists && now.exists:
			action = patch.ActionCreate
		case was.exists && !now.exists:
			action = patch.ActionDelete
		}
		summary = append(summary, fmt.Sprintf("%s %s +%d -%d", action, p, add, del))
		b.WriteString(d)
		if !strings.HasSuffix(d, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String(), summary
}

// explain fills in a question about the task: the final "Is this what you
// wanted?" gets the net diff of the whole task, "Add another feature?"
// says what was done and what each answer leads to.
func (t *taskChanges) explain(q pipeline.Question) pipeline.Question {
	switch q.Kind {
	case pipeline.AskConfirm:
		diff, summary := t.net()
		if len(summary) == 0 {
			return q
		}
		q.Detail = strings.TrimRight(q.Detail, "\n") + "\n\nNet change of the whole task (each file before the task → now):\n" +
			strings.Join(summary, "\n") + "\n\n" + diff
	case pipeline.AskNext:
		_, summary := t.net()
		var b strings.Builder
		fmt.Fprintf(&b, "Done: %s\n", t.request)
		if len(summary) == 0 {
			b.WriteString("No files were changed.\n")
		} else {
			b.WriteString("Changed (net, since the task started):\n")
			for _, s := range summary {
				b.WriteString("  " + s + "\n")
			}
		}
		b.WriteString("The checks passed and you confirmed the result.\n\n")
		b.WriteString("Yes: you will be asked what to add next; CodeLoom plans, patches and checks it the same way, asking before each change.\n")
		b.WriteString("No: the task ends here and the changes stay (History → Undo last change, or `codeloom rollback`, puts them back).")
		if q.Detail != "" {
			b.WriteString("\n\n" + q.Detail)
		}
		q.Detail = b.String()
	}
	return q
}
