package models

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Found is one model file discovery saw: its description, or why it cannot be used.
type Found struct {
	ModelInfo
	Error string `json:"error,omitempty"` // non-empty when the file is unusable (corrupt, unsupported, …)
}

// DiscoverOptions says where to look. Zero values use the user's home
// directory and the environment (HF_HOME, HF_HUB_CACHE, OLLAMA_MODELS).
type DiscoverOptions struct {
	Home    string   // "" = os.UserHomeDir()
	Folders []string // extra folders the user picked
	Env     func(string) string
	// MaxDepth bounds directory recursion (default 8).
	MaxDepth int
}

// Discover lists GGUF models in ~/models, the user's folders, LM Studio's
// stores (~/.lmstudio/models, ~/.cache/lm-studio/models), the Hugging Face
// cache (~/.cache/huggingface/hub) and Ollama's store (~/.ollama/models:
// manifests naming GGUF blobs). Only headers are read. Unreadable or
// unusable files are listed with Error set; missing locations are skipped.
func Discover(ctx context.Context, o DiscoverOptions) ([]Found, error) {
	if o.Home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("discover models: %w", err)
		}
		o.Home = h
	}
	if o.Env == nil {
		o.Env = os.Getenv
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 8
	}
	d := &discovery{o: o, seen: map[string]bool{}}
	hf := filepath.Join(o.Home, ".cache", "huggingface", "hub")
	if v := o.Env("HF_HUB_CACHE"); v != "" {
		hf = v
	} else if v := o.Env("HF_HOME"); v != "" {
		hf = filepath.Join(v, "hub")
	}
	ollama := filepath.Join(o.Home, ".ollama", "models")
	if v := o.Env("OLLAMA_MODELS"); v != "" {
		ollama = v
	}
	for _, f := range o.Folders {
		d.walk(ctx, f, "folder")
	}
	d.walk(ctx, filepath.Join(o.Home, "models"), "models")
	d.walk(ctx, filepath.Join(o.Home, ".lmstudio", "models"), "lmstudio")
	d.walk(ctx, filepath.Join(o.Home, ".cache", "lm-studio", "models"), "lmstudio")
	d.walk(ctx, hf, "huggingface")
	d.ollama(ctx, ollama)
	if err := ctx.Err(); err != nil {
		return d.out, fmt.Errorf("discover models: %w", err)
	}
	sort.SliceStable(d.out, func(i, j int) bool {
		if d.out[i].Source != d.out[j].Source {
			return d.out[i].Source < d.out[j].Source
		}
		return d.out[i].Name < d.out[j].Name
	})
	return d.out, nil
}

type discovery struct {
	o    DiscoverOptions
	seen map[string]bool // real paths already listed
	out  []Found
}

func (d *discovery) add(path, source, name string) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	if d.seen[real] {
		return
	}
	d.seen[real] = true
	info, _, err := Inspect(path)
	f := Found{ModelInfo: info}
	f.Path, f.Source = path, source
	if name != "" {
		f.Name = name
	}
	if f.Name == "" {
		f.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if err != nil {
		f.Error = err.Error()
	}
	d.out = append(d.out, f)
}

func (d *discovery) walk(ctx context.Context, root, source string) {
	st, err := os.Stat(root)
	if err != nil || !st.IsDir() {
		return
	}
	base := strings.Count(filepath.Clean(root), string(filepath.Separator))
	filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return filepath.SkipAll
		}
		if err != nil {
			return nil // unreadable folder: skip it
		}
		if e.IsDir() {
			if strings.Count(path, string(filepath.Separator))-base >= d.o.MaxDepth || (path != root && strings.HasPrefix(e.Name(), ".") && source != "huggingface") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.EqualFold(filepath.Ext(path), ".gguf") {
			return nil
		}
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() { // follows HF snapshot symlinks
			return nil
		}
		d.add(path, source, "")
		return nil
	})
}

// maxManifest is the largest file read as an Ollama manifest.
const maxManifest = 1 << 20

// ollama reads manifests/<host>/<namespace>/<model>/<tag> and lists the
// blob of each model layer (media type application/vnd.ollama.image.model).
func (d *discovery) ollama(ctx context.Context, root string) {
	manifests := filepath.Join(root, "manifests")
	if st, err := os.Stat(manifests); err != nil || !st.IsDir() {
		return
	}
	filepath.WalkDir(manifests, func(path string, e fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return filepath.SkipAll
		}
		if err != nil || e.IsDir() {
			return nil
		}
		// manifests are small JSON files: anything large is not one, and is
		// not read into memory
		if fi, err := e.Info(); err != nil || fi.Size() > maxManifest {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil || len(data) > maxManifest {
			return nil
		}
		var m struct {
			Layers []struct {
				MediaType string `json:"mediaType"`
				Digest    string `json:"digest"`
			} `json:"layers"`
		}
		if json.Unmarshal(data, &m) != nil {
			return nil
		}
		rel, _ := filepath.Rel(manifests, path)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		name := rel
		if n := len(parts); n >= 2 {
			name = parts[n-2] + ":" + parts[n-1]
			if n >= 3 && parts[n-3] != "library" {
				name = parts[n-3] + "/" + name
			}
		}
		for _, l := range m.Layers {
			if l.MediaType != "application/vnd.ollama.image.model" {
				continue
			}
			blob := filepath.Join(root, "blobs", strings.Replace(l.Digest, ":", "-", 1))
			if strings.ContainsAny(l.Digest, `/\`) || !fileExists(blob) {
				continue
			}
			d.add(blob, "ollama", name)
		}
		return nil
	})
}
