package models

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"codeloom/models/gguf"
)

// Found is one model discovery saw: its description, or why it cannot be used.
type Found struct {
	ModelInfo
	// ModelName is the name in the GGUF header (general.name); Name is the
	// name users give the model in its store, which --model accepts.
	ModelName string `json:"model_name,omitempty"`
	// Aliases are other names --model accepts for it (e.g. "tiny" for
	// "tiny:latest", "org/repo:Q8_0" for a Hugging Face file).
	Aliases []string `json:"aliases,omitempty"`
	// Parts is the number of files of a split GGUF (0 or 1: one file).
	Parts int    `json:"parts,omitempty"`
	Error string `json:"error,omitempty"` // non-empty when the model is unusable (corrupt, unsupported, …)
}

// Model sources (Found.Source).
const (
	SourceFolder      = "folder"      // a folder the user named
	SourceModels      = "models"      // ~/models
	SourceLMStudio    = "lmstudio"    // LM Studio: publisher/repo/file
	SourceHuggingFace = "huggingface" // the Hugging Face hub cache: org/repo/file
	SourceLlamaCpp    = "llama.cpp"   // llama.cpp's download cache (llama-server -hf)
	SourceOllama      = "ollama"      // Ollama's store: name:tag
)

// DiscoverOptions says where to look. Zero values use the user's home
// directory and the environment (XDG_CACHE_HOME, HF_HOME, HF_HUB_CACHE,
// LLAMA_CACHE, OLLAMA_MODELS).
type DiscoverOptions struct {
	Home    string   // "" = os.UserHomeDir()
	Folders []string // extra folders the user picked
	Env     func(string) string
	// SystemOllama is the store of Ollama's system service (default
	// /usr/share/ollama/.ollama/models; "-" = none).
	SystemOllama string
	// MaxDepth bounds directory recursion (default 8).
	MaxDepth int
}

// Discover lists GGUF models in the user's folders, ~/models, LM Studio's
// stores (~/.lmstudio/models, ~/.cache/lm-studio/models), the Hugging Face
// hub cache, llama.cpp's download cache and Ollama's stores (the user's and
// the system service's), named as each store names them. Only headers are
// read. A split GGUF is one model (its parts' sizes and parameters summed);
// vision projectors (mmproj) are not models and are left out. Unusable
// files are listed with Error set; missing locations are skipped.
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
	if o.SystemOllama == "" {
		o.SystemOllama = "/usr/share/ollama/.ollama/models"
	}
	cache := filepath.Join(o.Home, ".cache")
	if v := o.Env("XDG_CACHE_HOME"); v != "" && filepath.IsAbs(v) {
		cache = v
	}
	hf := filepath.Join(cache, "huggingface", "hub")
	if v := o.Env("HF_HUB_CACHE"); v != "" {
		hf = v
	} else if v := o.Env("HF_HOME"); v != "" {
		hf = filepath.Join(v, "hub")
	}
	llama := filepath.Join(cache, "llama.cpp")
	if v := o.Env("LLAMA_CACHE"); v != "" {
		llama = v
	}
	ollama := filepath.Join(o.Home, ".ollama", "models")
	if v := o.Env("OLLAMA_MODELS"); v != "" {
		ollama = v
	}
	d := &discovery{o: o, seen: map[string]bool{}, infos: map[string]Found{}}
	for _, f := range o.Folders {
		d.walk(ctx, f, SourceFolder)
	}
	d.walk(ctx, filepath.Join(o.Home, "models"), SourceModels)
	d.walk(ctx, filepath.Join(o.Home, ".lmstudio", "models"), SourceLMStudio)
	d.walk(ctx, filepath.Join(cache, "lm-studio", "models"), SourceLMStudio)
	d.walk(ctx, hf, SourceHuggingFace)
	d.walk(ctx, llama, SourceLlamaCpp)
	d.ollama(ctx, ollama)
	if o.SystemOllama != "-" {
		d.ollama(ctx, o.SystemOllama)
	}
	if err := ctx.Err(); err != nil {
		return d.out, fmt.Errorf("discover models: %w", err)
	}
	addAliases(d.out)
	sort.SliceStable(d.out, func(i, j int) bool {
		if d.out[i].Source != d.out[j].Source {
			return d.out[i].Source < d.out[j].Source
		}
		return d.out[i].Name < d.out[j].Name
	})
	return d.out, nil
}

type discovery struct {
	o     DiscoverOptions
	seen  map[string]bool  // real paths (or Ollama names) already listed
	infos map[string]Found // headers read, by real path
	out   []Found
}

// splitName matches the parts of a split GGUF: name-00001-of-00003.gguf.
var splitName = regexp.MustCompile(`(?i)^(.*)-([0-9]{5})-of-([0-9]{5})\.gguf$`)

// isProjector reports whether a GGUF file is a vision projector, not a model.
func isProjector(path string, arch string) bool {
	return arch == "clip" || strings.Contains(strings.ToLower(filepath.Base(path)), "mmproj")
}

// inspect reads path's header (once per real file), summing the parts of a
// split model. ok is false for files that are not models (projectors,
// second and later parts of a split).
func (d *discovery) inspect(path string) (Found, bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	if f, ok := d.infos[real]; ok {
		return f, true
	}
	if isProjector(path, "") {
		return Found{}, false
	}
	parts := 0
	if m := splitName.FindStringSubmatch(filepath.Base(path)); m != nil {
		no, _ := strconv.Atoi(m[2])
		parts, _ = strconv.Atoi(m[3])
		if no != 1 {
			return Found{}, false // listed with part 1
		}
	}
	info, _, err := Inspect(path)
	if isProjector(path, info.Architecture) {
		return Found{}, false
	}
	f := Found{ModelInfo: info, ModelName: info.Name, Parts: parts}
	f.Path = path
	if err != nil {
		f.Error = err.Error()
	}
	if parts > 1 {
		m := splitName.FindStringSubmatch(path)
		for k := 2; k <= parts && f.Error == ""; k++ {
			p := fmt.Sprintf("%s-%05d-of-%s.gguf", m[1], k, m[3])
			g, err := gguf.ReadFile(p)
			if err != nil {
				f.Error = fmt.Sprintf("split model: part %d of %d: %v", k, parts, err)
				break
			}
			f.Size += g.Size
			f.Parameters += g.ParameterCount()
		}
	}
	d.infos[real] = f
	return f, true
}

// add lists the model at path under name, once per real file.
func (d *discovery) add(path, source, name string) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	if d.seen[real] {
		return
	}
	f, ok := d.inspect(path)
	if !ok {
		return
	}
	d.seen[real] = true
	f.Path, f.Source, f.Name = path, source, name
	d.out = append(d.out, f)
}

// stem is a GGUF file name without its extension and split suffix.
func stem(path string) string {
	base := filepath.Base(path)
	if m := splitName.FindStringSubmatch(base); m != nil {
		return m[1]
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// storeName is how the store at root names the file at path: a folder's
// relative path, LM Studio's publisher/repo/file, the Hugging Face hub's
// org/repo/file (a snapshot of models--org--repo).
func storeName(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		rel = filepath.Base(path)
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, p := range parts {
		// models--org--repo/snapshots/<revision>/file
		if org, repo, ok := strings.Cut(strings.TrimPrefix(p, "models--"), "--"); ok && strings.HasPrefix(p, "models--") && i+3 < len(parts) && parts[i+1] == "snapshots" {
			return org + "/" + repo + "/" + stem(strings.Join(parts[i+3:], "/"))
		}
	}
	parts[len(parts)-1] = stem(parts[len(parts)-1])
	return strings.Join(parts, "/")
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
			if strings.Count(path, string(filepath.Separator))-base >= d.o.MaxDepth || (path != root && strings.HasPrefix(e.Name(), ".") && source != SourceHuggingFace) {
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
		d.add(path, source, storeName(root, path))
		return nil
	})
}

// maxManifest is the largest file read as an Ollama manifest.
const maxManifest = 1 << 20

// ollamaRegistry is Ollama's default registry, left out of its model names.
const ollamaRegistry = "registry.ollama.ai"

// OllamaName is the name Ollama gives the manifest at rel (relative to
// manifests/): host/namespace/model/tag → "model:tag" for the default
// registry's library, "namespace/model:tag" for its users, and
// "host/namespace/model:tag" (e.g. "hf.co/org/repo:Q8_0") elsewhere.
func OllamaName(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	n := len(parts)
	if n < 2 {
		return rel
	}
	name := parts[n-2] + ":" + parts[n-1]
	prefix := parts[:n-2]
	if len(prefix) > 0 && prefix[0] == ollamaRegistry {
		prefix = prefix[1:]
		if len(prefix) == 1 && prefix[0] == "library" {
			prefix = nil
		}
	}
	if len(prefix) > 0 {
		name = strings.Join(prefix, "/") + "/" + name
	}
	return name
}

// ollama reads manifests/<host>/<namespace>/<model>/<tag>: one row per tag,
// for the blob of its model layer (media type application/vnd.ollama.image.model).
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
		if fi, err := e.Info(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxManifest {
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
		name := OllamaName(rel)
		if d.seen["ollama:"+name] {
			return nil // the user's store wins over the system's
		}
		for _, l := range m.Layers {
			if l.MediaType != "application/vnd.ollama.image.model" {
				continue
			}
			blob := filepath.Join(root, "blobs", strings.Replace(l.Digest, ":", "-", 1))
			if strings.ContainsAny(l.Digest, `/\`) || !fileExists(blob) {
				continue
			}
			f, ok := d.inspect(blob)
			if !ok {
				continue
			}
			d.seen["ollama:"+name] = true
			f.Path, f.Source, f.Name = blob, SourceOllama, name
			d.out = append(d.out, f)
			break
		}
		return nil
	})
}

// quantTag finds a quantisation tag (Q8_0, Q4_K_M, IQ2_XS, F16, BF16 …) at
// the end of a file stem.
var quantTag = regexp.MustCompile(`(?i)[-_.]((?:I?Q[0-9][A-Z0-9_]*)|F16|F32|BF16)$`)

// addAliases gives each model the other names users know it by: Ollama's
// "tiny" for "tiny:latest"; "org/repo" for a repository with one model,
// "org/repo:QUANT" and "hf.co/org/repo:QUANT" (llama.cpp's -hf and
// Ollama's spelling) for its files; the file name with .gguf.
func addAliases(out []Found) {
	perRepo := map[string]int{}
	for _, f := range out {
		if f.Source == SourceHuggingFace || f.Source == SourceLMStudio {
			if i := strings.LastIndex(f.Name, "/"); i > 0 {
				perRepo[f.Source+":"+f.Name[:i]]++
			}
		}
	}
	for i := range out {
		f := &out[i]
		switch f.Source {
		case SourceOllama:
			if base, ok := strings.CutSuffix(f.Name, ":latest"); ok {
				f.Aliases = append(f.Aliases, base)
			}
		case SourceHuggingFace, SourceLMStudio:
			j := strings.LastIndex(f.Name, "/")
			if j <= 0 {
				break
			}
			repo, file := f.Name[:j], f.Name[j+1:]
			if perRepo[f.Source+":"+repo] == 1 {
				f.Aliases = append(f.Aliases, repo)
			}
			if m := quantTag.FindStringSubmatch(file); m != nil {
				q := strings.ToUpper(m[1])
				f.Aliases = append(f.Aliases, repo+":"+q)
				if f.Source == SourceHuggingFace {
					f.Aliases = append(f.Aliases, "hf.co/"+repo+":"+q, "huggingface.co/"+repo+":"+q)
				}
			}
			f.Aliases = append(f.Aliases, f.Name+".gguf")
		default:
			f.Aliases = append(f.Aliases, f.Name+".gguf")
		}
	}
}

// LookupModel finds the model users call name among found: by its listed
// name first, then by its aliases (case-insensitively). A name that fits
// several models is an error naming them.
func LookupModel(found []Found, name string) (Found, error) {
	for _, f := range found {
		if f.Name == name {
			return f, nil
		}
	}
	var hits []Found
	for _, f := range found {
		match := strings.EqualFold(f.Name, name)
		for _, a := range f.Aliases {
			match = match || strings.EqualFold(a, name)
		}
		if match {
			hits = append(hits, f)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		var near []string
		for _, f := range found {
			if strings.Contains(strings.ToLower(f.Name), strings.ToLower(filepath.Base(name))) {
				near = append(near, f.Name)
			}
		}
		hint := ""
		if len(near) > 0 {
			hint = " (did you mean " + strings.Join(near, ", ") + "?)"
		}
		return Found{}, fmt.Errorf("%s: %w: not a file, and not a name `codeloom models` lists%s", name, ErrNoSuchModel, hint)
	}
	var names []string
	for _, f := range hits {
		names = append(names, f.Name+" ("+f.Source+")")
	}
	return Found{}, fmt.Errorf("%s names %d models: %s; use the full name", name, len(hits), strings.Join(names, ", "))
}
