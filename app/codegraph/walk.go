package codegraph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	ignore "github.com/sabhiram/go-gitignore"
)

// skipDirs are never walked: version control, virtual environments,
// dependencies, caches, build output and CodeLoom's own data.
var skipDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "node_modules": true,
	"__pycache__": true, ".mypy_cache": true, ".pytest_cache": true, ".tox": true, ".ruff_cache": true,
	"build": true, "dist": true, "target": true, ".codeloom": true, ".idea": true, ".vscode": true,
}

// manifestEco maps manifest file names to their package ecosystem.
var manifestEco = map[string]string{
	"requirements.txt": "pypi", "pyproject.toml": "pypi", "go.mod": "go", "package.json": "npm",
}

// Problem is a file that could not be indexed (Skipped) or was indexed with
// a caveat (syntax errors, invalid UTF-8).
type Problem struct {
	Path    string `json:"path"`
	Reason  string `json:"reason"`
	Skipped bool   `json:"skipped"`
	// PathB64 is the exact bytes of Path, base64, when Path is not valid
	// UTF-8 (as Node.PathB64).
	PathB64 string `json:"path_b64,omitempty"`
}

// walkFile is one file the walk selected.
type walkFile struct {
	rel     string
	size    int64
	modTime int64
	lang    *language // nil for manifests
	eco     string    // manifest ecosystem
}

// walkResult is what a walk of the project found.
type walkResult struct {
	files    []walkFile
	problems []Problem
	info     *projectInfo
	git      bool     // the file set came from git ls-files
	notes    []string // why git was not used, when it failed (logged)
}

// ignoreLevel is one .gitignore on the way from the root to a path.
type ignoreLevel struct {
	dir string // rel dir of the .gitignore, "" for root
	gi  *ignore.GitIgnore
}

// walker walks one project root.
type walker struct {
	root    string
	maxSize int64
	byExt   map[string]*language
	res     *walkResult
	visited map[dirID]bool // walked dirs (loop guard)
	dirBuf  []byte         // readDirBuf's scratch, reused for every folder
}

// walk lists the files to index under root.
func walk(ctx context.Context, root string, maxSize int64, byExt map[string]*language) (*walkResult, error) {
	w := &walker{root: root, maxSize: maxSize, byExt: byExt, visited: map[dirID]bool{},
		res: &walkResult{info: &projectInfo{goModules: map[string]string{}, dirs: map[string]bool{}, initDirs: map[string]bool{}}}}
	out, err := gitLsFiles(ctx, root)
	var entries []gitEntry
	listed := 0
	if err == nil {
		entries, listed = parseLsFiles(out, w.gitKeep)
	}
	switch {
	case err == nil && listed > 0:
		w.res.git = true
		if err := w.fromGit(ctx, entries); err != nil {
			return nil, err
		}
		return w.res, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && !errors.Is(err, errNotGit) && !errors.Is(err, exec.ErrNotFound):
		w.res.notes = append(w.res.notes, "file set from git failed, walked the folder instead: "+err.Error())
	}
	if err := w.dir(ctx, "", nil); err != nil {
		return nil, err
	}
	return w.res, nil
}

// fromGit selects the files to index from git's list. Tracked files are
// always taken; untracked ones (not ignored by git) are still kept out of
// dependency, cache and virtualenv folders (skipDirs, isVirtualenv), which
// a project may not have told git to ignore yet. A submodule or nested
// repository, listed as a folder, is walked.
func (w *walker) fromGit(ctx context.Context, entries []gitEntry) error {
	skippedDir := map[string]bool{} // memo: untracked folders to skip
	inSkipped := func(rel string) bool {
		dir := ""
		for _, part := range strings.Split(path.Dir(rel), "/") {
			if part == "." {
				break
			}
			dir = path.Join(dir, part)
			skip, ok := skippedDir[dir]
			if !ok {
				skip = skipDirs[part] || isVirtualenv(w.abs(dir))
				skippedDir[dir] = skip
			}
			if skip {
				return true
			}
		}
		return false
	}
	for i, e := range entries {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if !e.tracked && inSkipped(e.rel) {
			continue
		}
		name := path.Base(e.rel)
		if name == "__init__.py" {
			w.res.info.initDirs[relDir(e.rel)] = true
		}
		if e.dir {
			if err := w.dir(ctx, e.rel, nil); err != nil {
				return err
			}
			continue
		}
		lang := w.byExt[path.Ext(name)]
		eco := manifestEco[name]
		if lang == nil && eco == "" {
			continue
		}
		st, err := os.Lstat(w.abs(e.rel))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) { // a tracked file deleted from the work tree is simply absent
				w.problem(e.rel, "unreadable: "+errReason(err), true)
			}
			continue
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			w.symlink(e.rel)
		case st.IsDir():
			if err := w.dir(ctx, e.rel, nil); err != nil { // a submodule
				return err
			}
		case !st.Mode().IsRegular():
			w.problem(e.rel, "not a regular file: "+fileKind(st.Mode()), true)
		default:
			w.add(e.rel, st.Size(), st.ModTime().UnixNano(), lang, eco)
		}
	}
	return nil
}

// add selects one regular file for indexing (or reports it too big).
func (w *walker) add(rel string, size, modTime int64, lang *language, eco string) {
	if size > w.maxSize {
		w.problem(rel, fmt.Sprintf("too big: %d bytes (limit %d)", size, w.maxSize), true)
		return
	}
	dir := relDir(rel)
	if path.Base(rel) == "go.mod" {
		w.goMod(dir, rel)
	}
	w.res.info.dirs[dir] = true
	w.res.files = append(w.res.files, walkFile{rel: rel, size: size, modTime: modTime, lang: lang, eco: eco})
}

// abs returns the absolute path of the root-relative path rel.
func (w *walker) abs(rel string) string { return filepath.Join(w.root, filepath.FromSlash(rel)) }

// ignored reports whether any of the .gitignore levels ignores rel.
func ignored(levels []ignoreLevel, rel string, isDir bool) bool {
	for _, l := range levels {
		sub := rel
		if l.dir != "" {
			if !strings.HasPrefix(rel, l.dir+"/") {
				continue
			}
			sub = rel[len(l.dir)+1:]
		}
		if l.gi.MatchesPath(sub) || (isDir && l.gi.MatchesPath(sub+"/")) {
			return true
		}
	}
	return false
}

// problem records a file the walk skipped or indexed with a caveat.
func (w *walker) problem(rel, reason string, skipped bool) {
	w.res.problems = append(w.res.problems, Problem{Path: rel, Reason: reason, Skipped: skipped})
}

// dir walks the folder rel, under the .gitignore levels of its parents.
func (w *walker) dir(ctx context.Context, rel string, levels []ignoreLevel) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	abs := w.abs(rel)
	l := readDirBuf(abs, rel == "", w.wanted, &w.dirBuf)
	if l.err != nil {
		if rel == "" {
			return fmt.Errorf("walk %s: %w", w.root, l.err)
		}
		if st, err := os.Lstat(abs); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			// Became (or, listed by git, is) a symlink: not followed.
			w.symlink(rel)
			return nil
		}
		w.problem(rel, "unreadable directory: "+errReason(l.err), true)
		return nil
	}
	if l.id != (dirID{}) {
		if w.visited[l.id] {
			w.problem(rel, "directory loop (already walked)", true)
			return nil
		}
		w.visited[l.id] = true
	}
	for _, e := range l.ents {
		switch e.name {
		case "__init__.py":
			w.res.info.initDirs[rel] = true
		case ".gitignore":
			if e.typ&fs.ModeSymlink != 0 {
				// As git (2.32 and later): a symlinked .gitignore is not read.
				w.problem(path.Join(rel, ".gitignore"), "symlink: not followed (as git does); its rules are not applied", true)
				continue
			}
			gi, err := compileIgnore(filepath.Join(abs, ".gitignore"))
			if err != nil {
				w.problem(path.Join(rel, ".gitignore"), readReason(err)+" (its rules are not applied)", true)
				continue
			}
			levels = append(levels[:len(levels):len(levels)], ignoreLevel{dir: rel, gi: gi})
		}
	}
	for _, e := range l.ents {
		name := e.name
		crel := path.Join(rel, name) // just name at the root: Join drops the empty element
		typ := e.typ
		if typ&fs.ModeSymlink != 0 {
			if name != ".gitignore" { // reported above
				w.symlink(crel)
			}
			continue
		}
		if typ.IsDir() {
			if skipDirs[name] || ignored(levels, crel, true) || isVirtualenv(w.abs(crel)) {
				continue
			}
			if err := w.dir(ctx, crel, levels); err != nil {
				return err
			}
			continue
		}
		lang := w.byExt[path.Ext(name)]
		eco := manifestEco[name]
		if lang == nil && eco == "" {
			continue
		}
		if ignored(levels, crel, false) {
			continue
		}
		if !typ.IsRegular() {
			w.problem(crel, "not a regular file: "+fileKind(typ), true)
			continue
		}
		if !e.stated { // readDir stats every wanted regular file
			return fmt.Errorf("walk %s: %s was not stated", w.root, crel)
		}
		if e.statErr != nil {
			if errors.Is(e.statErr, fs.ErrNotExist) {
				w.problem(crel, "deleted during the walk", true)
			} else {
				w.problem(crel, "unreadable: "+errReason(e.statErr), true)
			}
			continue
		}
		w.add(crel, e.size, e.modTime, lang, eco)
	}
	return nil
}

// gitKeep selects, from git's listing, what fromGit looks at: folders
// (submodules, nested repositories), files it may index, and __init__.py
// (which marks a Python package).
func (w *walker) gitKeep(name []byte, dir bool) bool {
	if dir {
		return true
	}
	if string(name) == "__init__.py" || manifestEco[string(name)] != "" {
		return true
	}
	if i := bytes.LastIndexByte(name, '.'); i >= 0 {
		return w.byExt[string(name[i:])] != nil
	}
	return w.byExt[""] != nil
}

// wanted reports whether a file called name is indexed (a source file or a
// manifest), so that readDir stats only those.
func (w *walker) wanted(name string) bool {
	return w.byExt[path.Ext(name)] != nil || manifestEco[name] != ""
}

// isVirtualenv reports a Python virtual environment (it has pyvenv.cfg), such
// as .venv/ or venv/; a package that happens to be called venv (like the
// standard library's) is indexed.
func isVirtualenv(dir string) bool {
	switch filepath.Base(dir) {
	case ".venv", "venv", "env", ".env":
	default:
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "pyvenv.cfg"))
	return err == nil
}

// symlink records why a symbolic link is not followed: links are never
// followed (their target, when inside the project, is indexed at its own path).
func (w *walker) symlink(rel string) {
	abs := w.abs(rel)
	target, err := filepath.EvalSymlinks(abs)
	switch {
	case err != nil && (errors.Is(err, syscall.ELOOP) || strings.Contains(err.Error(), "too many links")):
		w.problem(rel, "symlink loop", true)
	case err != nil && errors.Is(err, fs.ErrNotExist):
		w.problem(rel, "broken symlink", true)
	case err != nil:
		w.problem(rel, "unreadable symlink: "+errReason(err), true)
	default:
		realRoot, rerr := filepath.EvalSymlinks(w.root)
		if rerr != nil {
			realRoot = w.root
		}
		if r, err := filepath.Rel(realRoot, target); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			w.problem(rel, "symlink points outside the project (not followed)", true)
			return
		}
		// Inside the project: the target is indexed under its own path. Only
		// links that look like source are worth listing.
		if w.byExt[path.Ext(rel)] != nil {
			w.problem(rel, "symlink inside the project (target indexed at its own path)", true)
		}
	}
}

// goMod reads the module path of a go.mod.
func (w *walker) goMod(dir, rel string) {
	b, err := readProjectFile(w.abs(rel), w.maxSize)
	if err != nil {
		return // processOne reads it again and reports why
	}
	if m := goModulePath(b); m != "" {
		w.res.info.goModules[dir] = m
	}
}

// errReason shortens an error for a report line.
func errReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// maxIgnoreFile caps the size of a .gitignore (git itself has no limit, but
// a real one is a few KiB; a bigger one is someone's experiment).
const maxIgnoreFile = 4 << 20

// compileIgnore reads one .gitignore file (safely: see readProjectFile).
func compileIgnore(file string) (*ignore.GitIgnore, error) {
	b, err := readProjectFile(file, maxIgnoreFile)
	if err != nil {
		return nil, err
	}
	return ignore.CompileIgnoreLines(strings.Split(string(b), "\n")...), nil
}
