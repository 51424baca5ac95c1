package workflow

import (
	"context"
	"strings"
	"testing"

	"codeloom/models"
)

func TestDraftReasksUntilValid(t *testing.T) {
	invalid := "Here it is:\n```yaml\nid: d\nsteps:\n  - {id: a, type: run, command: ls, depends_on: [b]}\n  - {id: b, type: run, command: ls, depends_on: [a]}\n```\n"
	wrongType := "```yaml\nid: d\nsteps:\n  - {id: a, type: patch, patch: x}\n```\n"
	valid := "```yaml\nid: d\ndescription: list then count\nsteps:\n  - {id: list, type: run, command: ls}\n  - {id: count, type: run, command: \"echo '{{.list}}' | wc -l\"}\n```\n"
	eng := models.NewScripted(invalid, wrongType, valid)
	w, text, err := Draft(context.Background(), eng, "count the files", nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	if w.ID != "d" || len(w.Steps) != 2 || !strings.Contains(text, "wc -l") {
		t.Fatalf("draft %+v\n%s", w, text)
	}
	calls := eng.Calls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls", len(calls))
	}
	second := calls[1].Messages[len(calls[1].Messages)-1].Content
	if !strings.Contains(second, "dependency cycle: a → b → a") && !strings.Contains(second, "dependency cycle: b → a → b") {
		t.Fatalf("re-ask lacks the cycle:\n%s", second)
	}
	third := calls[2].Messages[len(calls[2].Messages)-1].Content
	if !strings.Contains(third, `type "patch" is not allowed`) {
		t.Fatalf("re-ask lacks the type problem:\n%s", third)
	}
	// Bounded: never valid → error after the tries.
	eng = models.NewScripted(invalid, invalid)
	if _, _, err := Draft(context.Background(), eng, "x", nil, 2); err == nil || !strings.Contains(err.Error(), "after 2 tries") {
		t.Fatalf("got %v", err)
	}
}
