package adversarial

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"codeloom/models/modeltest"
)

// modelsTwoBlocks is an answer whose edit blocks are each complete: a cut
// that falls after the first block leaves a patch that parses, half of it.
const modelsTwoBlocks = "a.py\n<<<<<<< SEARCH\nA = 1\n=======\nA = 2\n>>>>>>> REPLACE\n\nb.py\n<<<<<<< SEARCH\nB = 1\n=======\nB = 2\n>>>>>>> REPLACE\n"

// TestModelsTruncatedAnswerIsNeverApplied (issue 14): a model answer cut
// off — finish_reason "length", or a stream that ends without [DONE] — is
// incomplete: `task --yes` re-asks and then fails, and no file changes.
func TestModelsTruncatedAnswerIsNeverApplied(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  modeltest.Config
	}{
		{"finish_reason length", modeltest.Config{Kind: modeltest.LlamaCpp, Finish: "length"}},
		{"no [DONE]", modeltest.Config{Kind: modeltest.LlamaCpp, NoDone: true}},
		{"ollama length", modeltest.Config{Kind: modeltest.Ollama, Finish: "length"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Answers = []string{modelsTwoBlocks}
			srv := modeltest.Start(c.cfg)
			defer srv.Close()
			files := map[string]string{"a.py": "A = 1\n", "b.py": "B = 1\n"}
			dir := project(t, files)
			r := run(t, limits{Timeout: 90 * time.Second, Env: []string{"OPENAI_BASE_URL=", "OPENAI_API_BASE=", "OLLAMA_HOST=", "OPENAI_API_KEY="}},
				"task", dir, "set A and B to 2", "--kind", "edit", "--yes", "--max-fix", "1", "--endpoint", srv.URL)
			r.bounded(t)
			for name, want := range files {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != want {
					t.Fatalf("%s changed to %q (%v): %s", name, got, err, r)
				}
			}
			if r.Code != 1 || !strings.Contains(r.Stdout+r.Stderr, "cut off") && !strings.Contains(r.Stdout+r.Stderr, "stream ended") {
				t.Fatalf("the cut was not reported: %s", r)
			}
			if len(srv.Requests()) < 2 {
				t.Fatalf("the cut answer was not re-asked (%d requests): %s", len(srv.Requests()), r)
			}
		})
	}
}
