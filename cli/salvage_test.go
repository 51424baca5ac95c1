package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"codeloom/app/memory"
)

func TestSalvageReadsADamagedStore(t *testing.T) {
	root := t.TempDir()
	st, err := memory.OpenProject(root)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := st.AddLesson(memory.Lesson{Task: "lesson " + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	path := st.Path()
	st.Close()
	// An intact copy: every record comes back (damage is covered in app/memory).
	data, _ := os.ReadFile(path)
	damaged := filepath.Join(root, "copy.damaged")
	os.WriteFile(damaged, data, 0o644)
	out, errOut, code := runCLI(t, "salvage", damaged, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sv memory.Salvaged
	if err := json.Unmarshal([]byte(out), &sv); err != nil {
		t.Fatal(err)
	}
	if len(sv.Records[memory.BucketLessons]) != 5 || !strings.Contains(string(sv.Records[memory.BucketLessons][0]), "lesson a") {
		t.Fatalf("lessons = %s", sv.Records[memory.BucketLessons])
	}
	if _, errOut, code := runCLI(t, "salvage", filepath.Join(root, "missing")); code != ExitFailure || !strings.Contains(errOut, "missing") {
		t.Fatalf("missing file: exit %d, %s", code, errOut)
	}
}
