package models

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"codeloom/models/gguf"
)

// storeLayout builds fake model stores under home, laid out as Ollama, LM
// Studio, the Hugging Face hub, llama.cpp and a user's folder lay them out,
// with tiny GGUF files.
func storeLayout(t *testing.T, home string) (env map[string]string, system string) {
	t.Helper()
	mk := func(rel string) string {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		return p
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	tiny := gguf.TinyLlama() // every file says general.name = codeloom-tiny
	must(gguf.WriteLlama(mk("models/sub/a.gguf"), tiny))
	must(os.WriteFile(mk("models/broken.gguf"), []byte("nope"), 0o644))
	must(os.WriteFile(mk("models/readme.txt"), []byte("not a model"), 0o644))
	// a split model: part 1 holds the metadata and some tensors, part 2 the rest
	must(gguf.WriteLlama(mk("models/big-00001-of-00002.gguf"), tiny))
	must(gguf.Write(mk("models/big-00002-of-00002.gguf"), []gguf.KV{{Key: "split.no", Value: uint16(1)}, {Key: "split.count", Value: uint16(2)}},
		[]gguf.TensorSpec{{Name: "blk.9.ffn_up.weight", Dims: []uint64{64, 1000}, Type: gguf.TypeF32, Fill: func([]float32) {}}}))
	// a split model missing its second part
	must(gguf.WriteLlama(mk("models/half-00001-of-00002.gguf"), tiny))
	// LM Studio: a model and its vision projectors (by name, and by architecture)
	must(gguf.WriteLlama(mk(".lmstudio/models/pub/repo/repo-Q8_0.gguf"), tiny))
	must(gguf.WriteLlama(mk(".lmstudio/models/pub/repo/mmproj-repo-f16.gguf"), tiny))
	must(gguf.Write(mk(".lmstudio/models/pub/repo/projector.gguf"), []gguf.KV{{Key: "general.architecture", Value: "clip"}}, nil))
	// Hugging Face hub under $XDG_CACHE_HOME: a snapshot symlink to a blob
	xdg := filepath.Join(home, "xdg")
	blob := mk("xdg/huggingface/hub/models--org--repo/blobs/abc123")
	must(gguf.WriteLlama(blob, tiny))
	must(os.MkdirAll(filepath.Join(xdg, "huggingface/hub/models--org--repo/snapshots/rev"), 0o755))
	must(os.Symlink(blob, filepath.Join(xdg, "huggingface/hub/models--org--repo/snapshots/rev/model.Q8_0.gguf")))
	// llama.cpp's download cache (llama-server -hf)
	must(gguf.WriteLlama(mk("xdg/llama.cpp/org_repo_model-Q4_K_M.gguf"), tiny))
	// Ollama: three tags, two of them on one blob
	must(gguf.WriteLlama(mk(".ollama/models/blobs/sha256-deadbeef"), tiny))
	must(gguf.WriteLlama(mk(".ollama/models/blobs/sha256-feedface"), tiny))
	manifest := func(rel, digest string) {
		must(os.WriteFile(mk(".ollama/models/manifests/"+rel), []byte(`{"layers":[{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:0000"},{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:`+digest+`"}]}`), 0o644))
	}
	manifest("registry.ollama.ai/library/tiny/latest", "deadbeef")
	manifest("registry.ollama.ai/someuser/tiny/v1", "deadbeef")
	manifest("hf.co/org/repo/Q8_0", "feedface")
	must(os.WriteFile(mk(".ollama/models/manifests/registry.ollama.ai/library/bad/latest"), []byte(`{garbage`), 0o644))
	// the system service's store (/usr/share/ollama/.ollama/models)
	system = filepath.Join(home, "system-ollama")
	must(gguf.WriteLlama(mk("system-ollama/blobs/sha256-0ddba11"), tiny))
	must(os.MkdirAll(filepath.Join(system, "manifests/registry.ollama.ai/library/sys"), 0o755))
	must(os.WriteFile(filepath.Join(system, "manifests/registry.ollama.ai/library/sys/latest"), []byte(`{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:0ddba11"}]}`), 0o644))
	return map[string]string{"XDG_CACHE_HOME": xdg}, system
}

func TestDiscoverNamesModelsAsTheirStoresDo(t *testing.T) {
	home := t.TempDir()
	env, system := storeLayout(t, home)
	extra := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(gguf.WriteLlama(filepath.Join(extra, "mine.gguf"), gguf.TinyLlama()))
	// the same file again through a symlink: listed once, where first seen
	must(os.Symlink(filepath.Join(home, "models/sub/a.gguf"), filepath.Join(extra, "alias.gguf")))

	opts := DiscoverOptions{Home: home, Folders: []string{extra, filepath.Join(home, "missing")}, Env: func(k string) string { return env[k] }, SystemOllama: system}
	found, err := Discover(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Found{}
	var names []string
	for _, f := range found {
		byName[f.Name] = f
		names = append(names, f.Source+":"+f.Name)
	}
	want := []string{
		"folder:mine", "folder:alias", "models:broken", "models:big", "models:half",
		"lmstudio:pub/repo/repo-Q8_0", "huggingface:org/repo/model.Q8_0", "llama.cpp:org_repo_model-Q4_K_M",
		"ollama:tiny:latest", "ollama:someuser/tiny:v1", "ollama:hf.co/org/repo:Q8_0", "ollama:sys:latest",
	}
	if len(found) != len(want) {
		t.Errorf("found %d models, want %d: %s", len(found), len(want), strings.Join(names, " "))
	}
	for _, w := range want {
		_, name, _ := strings.Cut(w, ":")
		f, ok := byName[name]
		if !ok || f.Source+":"+f.Name != w {
			t.Errorf("%s not listed: %s", w, strings.Join(names, " "))
			continue
		}
		usable := name != "broken" && name != "half"
		if (f.Error == "") != usable {
			t.Errorf("%s: error %q", w, f.Error)
		}
		if usable && (f.Architecture != "llama" || f.Parameters == 0 || f.ContextLength != 2048 || f.ModelName != "codeloom-tiny") {
			t.Errorf("%s: %+v", w, f)
		}
	}
	// the split model is one row with both parts' size and parameters
	one, big := byName["mine"], byName["big"]
	if big.Parts != 2 || big.Parameters != one.Parameters+64*1000 || big.Size <= one.Size+64*1000*4 {
		t.Errorf("split: parts %d params %d size %d (one part: %d params, %d bytes)", big.Parts, big.Parameters, big.Size, one.Parameters, one.Size)
	}
	if !strings.Contains(byName["half"].Error, "part 2 of 2") {
		t.Errorf("missing part: %q", byName["half"].Error)
	}

	// every listed name, and the names users type, find the model
	for name, path := range map[string]string{
		"tiny:latest":         byName["tiny:latest"].Path,
		"tiny":                byName["tiny:latest"].Path,
		"someuser/tiny:v1":    byName["tiny:latest"].Path,
		"hf.co/org/repo:Q8_0": byName["hf.co/org/repo:Q8_0"].Path, // Ollama's tag wins over the HF cache's alias
		"org/repo/model.Q8_0": byName["org/repo/model.Q8_0"].Path,
		"pub/repo":            byName["pub/repo/repo-Q8_0"].Path,
		"pub/repo:Q8_0":       byName["pub/repo/repo-Q8_0"].Path,
		"big":                 filepath.Join(home, "models/big-00001-of-00002.gguf"),
		"sys:latest":          filepath.Join(system, "blobs/sha256-0ddba11"),
	} {
		f, err := LookupModel(found, name)
		if err != nil || f.Path != path {
			t.Errorf("lookup %q: %s %v, want %s", name, f.Path, err, path)
		}
	}
	if _, err := LookupModel(found, "nope:latest"); err == nil || !strings.Contains(err.Error(), "codeloom models") {
		t.Errorf("unknown name: %v", err)
	}
	// the HF cache's org/repo:Q8_0 alias is also LM Studio's pub/repo… but
	// org/repo alone is unique to the HF cache
	if f, err := LookupModel(found, "org/repo"); err != nil || f.Source != SourceHuggingFace {
		t.Errorf("org/repo: %+v %v", f, err)
	}
	for _, f := range found {
		if f.Source == SourceFolder || f.Source == SourceModels || f.Parts > 0 {
			continue
		}
		if _, err := LookupModel(found, f.Name); err != nil {
			t.Errorf("listed name %q not accepted: %v", f.Name, err)
		}
	}

	// HF_HUB_CACHE / HF_HOME move the hub; OLLAMA_MODELS moves Ollama's store
	env["HF_HOME"] = filepath.Join(home, "elsewhere")
	env["OLLAMA_MODELS"] = filepath.Join(home, "elsewhere")
	opts.SystemOllama = "-"
	found, err = Discover(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if f.Source == SourceHuggingFace || f.Source == SourceOllama {
			t.Errorf("%s still found in the default location", f.Name)
		}
	}
}
