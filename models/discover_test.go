package models

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"codeloom/models/gguf"
)

func TestDiscover(t *testing.T) {
	home := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		return p
	}
	tiny := gguf.TinyLlama()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(gguf.WriteLlama(mk("models/sub/a.gguf"), tiny))
	must(os.WriteFile(mk("models/broken.gguf"), []byte("nope"), 0o644))
	must(os.WriteFile(mk("models/readme.txt"), []byte("not a model"), 0o644))
	tiny.Name = "lm"
	must(gguf.WriteLlama(mk(".lmstudio/models/pub/repo/lm.gguf"), tiny))
	// Hugging Face: snapshot symlink to a blob
	tiny.Name = "hf"
	blob := mk(".cache/huggingface/hub/models--org--repo/blobs/abc123")
	must(gguf.WriteLlama(blob, tiny))
	snap := mk(".cache/huggingface/hub/models--org--repo/snapshots/rev/model.Q8_0.gguf")
	must(os.Symlink(blob, snap))
	// Ollama: manifest → blob
	tiny.Name = "ol"
	must(gguf.WriteLlama(mk(".ollama/models/blobs/sha256-deadbeef"), tiny))
	must(os.WriteFile(mk(".ollama/models/manifests/registry.ollama.ai/library/tiny/latest"),
		[]byte(`{"layers":[{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:0000"},{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:deadbeef"}]}`), 0o644))
	must(os.WriteFile(mk(".ollama/models/manifests/registry.ollama.ai/library/bad/latest"), []byte(`{garbage`), 0o644))
	// a user folder, and the same file again through a symlink (listed once)
	extra := t.TempDir()
	tiny.Name = "mine"
	must(gguf.WriteLlama(filepath.Join(extra, "mine.gguf"), tiny))
	must(os.Symlink(filepath.Join(home, "models/sub/a.gguf"), filepath.Join(extra, "alias.gguf")))

	found, err := Discover(context.Background(), DiscoverOptions{Home: home, Folders: []string{extra, filepath.Join(home, "missing")}, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	bySource := map[string][]Found{}
	for _, f := range found {
		bySource[f.Source] = append(bySource[f.Source], f)
	}
	check := func(source, name string, wantErr bool) {
		t.Helper()
		for _, f := range bySource[source] {
			if f.Name == name {
				if (f.Error != "") != wantErr {
					t.Errorf("%s/%s: error %q", source, name, f.Error)
				}
				if !wantErr && (f.Architecture != "llama" || f.Parameters == 0 || f.ContextLength != 2048 || f.FileType != "F32") {
					t.Errorf("%s/%s: %+v", source, name, f.ModelInfo)
				}
				return
			}
		}
		t.Errorf("%s/%s not found in %+v", source, name, found)
	}
	check("folder", "mine", false)
	check("folder", "codeloom-tiny", false) // the alias, seen first through the user folder
	check("models", "broken", true)
	check("lmstudio", "lm", false)
	check("huggingface", "hf", false)
	check("ollama", "tiny:latest", false)
	if len(found) != 6 {
		t.Errorf("found %d models: %+v", len(found), found)
	}
}
