package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"codeloom/models"
)

func TestFailedModelLoadKeepsTheWorkingModel(t *testing.T) {
	working := models.NewScripted("an answer")
	unloaded := 0
	loads := 0
	w, _ := newTestWorkbench(t, Options{Engine: working, LoadModel: func(ctx context.Context, path string, progress func(float32)) (models.Engine, func(), error) {
		loads++
		return nil, nil, errors.New("not a GGUF file")
	}})
	w.unload = func() { unloaded++ }
	w.panes.modelInfo.SetText("Model: scripted")
	bad := filepath.Join(t.TempDir(), "broken.gguf")
	if err := os.WriteFile(bad, []byte("GGUF but broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.LoadModel(bad)
	waitFor(t, "the failed load to finish", func() bool { return !w.panes.loadBar.Visible() && w.lastErr != "" })
	if w.engine != working || unloaded != 0 {
		t.Errorf("the working model was replaced or unloaded (engine %v, unloads %d)", w.engine, unloaded)
	}
	if w.panes.modelInfo.Text != "Model: scripted" {
		t.Errorf("model info after the failed load: %q", w.panes.modelInfo.Text)
	}
	if !strings.Contains(w.lastErr, "Could not load the model") {
		t.Errorf("error shown: %q", w.lastErr)
	}
	t.Logf("loader called %d times; error: %s", loads, w.lastErr)
}
