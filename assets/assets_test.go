package assets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExtractSampleCopiesProjectAndKeepsEdits(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "sample")
	if _, err := ExtractSample(dest); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".env", "requirements.txt", "inventory/__init__.py", "inventory/pricing.py", "tests/test_pricing.py"} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	pricing := filepath.Join(dest, "inventory", "pricing.py")
	if err := os.WriteFile(pricing, []byte("# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ExtractSample(dest); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(pricing)
	if !strings.HasPrefix(string(data), "# edited") {
		t.Fatal("a second extract overwrote the user's edit")
	}
}
