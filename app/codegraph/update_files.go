package codegraph

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// UpdateFiles re-reads the given files (absolute or root-relative paths) and
// returns the new graph: changed files are re-parsed, deleted ones removed,
// new ones added; unchanged content is not re-parsed. Paths outside the
// project, ignored or of unsupported type are skipped.
func (p *Project) UpdateFiles(ctx context.Context, paths []string) (*Graph, error) {
	start := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("update files: %w", errProjectClosed)
	}
	if err := p.materializeLocked(ctx); err != nil {
		return nil, fmt.Errorf("update files: %w", err)
	}
	var jobs []job
	removed := map[string]bool{}
	var rels []string
	for _, raw := range paths {
		if rel, ok := p.relPath(raw); ok {
			rels = append(rels, rel)
		}
	}
	var inGit map[string]gitEntry // git's view of the changed paths, in a git project
	if p.git && len(rels) > 0 {
		es, err := gitListFiles(ctx, p.root, rels...)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("update files: %w", ctx.Err())
			}
			p.log.Warn("codegraph update: git ls-files failed, using .gitignore rules", "root", p.root, "err", err)
		} else {
			inGit = make(map[string]gitEntry, len(es))
			for _, e := range es {
				inGit[e.rel] = e
			}
		}
	}
	for _, rel := range rels {
		wf, keep, gone := p.classify(rel, inGit)
		if keep || gone {
			p.forgetWalkProblemLocked(rel)
			delete(p.stamps, rel)
		}
		if keep {
			p.stamps[rel] = stampOf(wf)
		}
		if gone {
			if _, had := p.files[rel]; had {
				removed[rel] = true
			}
			delete(p.problems, rel)
			continue
		}
		if !keep {
			continue
		}
		jobs = append(jobs, job{wf: wf, cached: p.files[rel], keep: true})
	}
	results, err := p.process(ctx, jobs)
	if err != nil {
		return nil, fmt.Errorf("update files: %w", err)
	}
	changed := len(removed) > 0
	puts := map[string]*fileData{}
	parsed := 0
	for i, r := range results {
		rel := jobs[i].wf.rel
		delete(p.problems, rel)
		if r.problem != nil {
			p.problems[rel] = *r.problem
		}
		if r.fd == nil {
			if _, had := p.files[rel]; had {
				removed[rel] = true
				changed = true
			}
			continue
		}
		if old := p.files[rel]; old == nil || old.Sum != r.fd.Sum || old.Size != r.fd.Size {
			changed = true
		}
		if r.parsed {
			parsed++
		}
		p.files[rel] = r.fd
		p.markUnbuiltLocked(rel)
		puts[rel] = r.fd
	}
	var deletes []string
	for rel := range removed {
		delete(p.files, rel)
		p.markUnbuiltLocked(rel)
		deletes = append(deletes, rel)
		switch path.Base(rel) {
		case "go.mod":
			delete(p.info.goModules, relDir(rel))
		case "__init__.py":
			delete(p.info.initDirs, relDir(rel))
		}
	}
	var cacheErr error
	if len(puts) > 0 || len(deletes) > 0 {
		cacheErr = p.saveCache(puts, deletes, false)
	}
	p.hook("update-cache-saved")
	g := p.graph.Load()
	if changed {
		if p.b != nil {
			// Only these files' entries changed since the last build: the
			// builder compares those instead of every file.
			p.b.hint, p.b.checkHint = p.unbuilt, p.checkHint
			p.rawHint = p.unbuilt
		}
		unbuilt := p.unbuilt
		p.unbuilt = nil
		ng, err := p.buildLocked()
		if err != nil {
			p.unbuilt = unbuilt // still to build: the graph is the one before
			return g, err
		}
		g = ng
		p.graph.Store(g)
	}
	if len(jobs) > 0 || len(removed) > 0 {
		p.scheduleSnapshotLocked()
	}
	p.report.Stats = g.stats
	p.report.Parsed = parsed
	p.report.Cached = len(p.files) - parsed
	p.report.Duration = time.Since(start)
	p.report.CacheErr = ""
	if cacheErr != nil {
		p.report.CacheErr = cacheErr.Error()
		p.log.Warn("codegraph cache", "root", p.root, "err", cacheErr)
	}
	p.fillProblemsLocked()
	return g, nil
}

// markRawPathsLocked is markRawPaths for a build of p.files. After a build
// whose files' paths were all UTF-8, only the hinted paths (see rawHint)
// are checked: checking every path was 1.6 ms of a 28 ms one-file edit on
// pyenv.
func (p *Project) markRawPathsLocked(g *Graph) {
	hint := p.rawHint
	p.rawHint = nil
	if hint != nil && p.rawNone {
		valid := true
		for rel := range hint {
			if _, ok := p.files[rel]; ok && !utf8.ValidString(rel) {
				valid = false
				break
			}
		}
		if valid {
			return
		}
	}
	p.rawNone = !markRawPaths(g, p.files)
}

// markUnbuiltLocked records that rel's entry in p.files changed (see
// unbuilt).
func (p *Project) markUnbuiltLocked(rel string) {
	if p.unbuilt == nil {
		p.unbuilt = map[string]bool{}
	}
	p.unbuilt[rel] = true
}

// classify decides what to do with one changed path: index it (keep), drop
// it (gone: deleted, or now a directory/ignored), or leave it (neither).
//
// inGit, when not nil, is git's list of the changed paths (a git project):
// a path git does not list is ignored, a tracked one is never skipped.
func (p *Project) classify(rel string, inGit map[string]gitEntry) (wf walkFile, keep, gone bool) {
	ge, listed := inGit[rel]
	if inGit != nil && !listed {
		return wf, false, true
	}
	dir := ""
	for _, part := range strings.Split(path.Dir(rel), "/") {
		if ge.tracked || part == "." {
			break
		}
		dir = path.Join(dir, part)
		if skipDirs[part] || isVirtualenv(filepath.Join(p.root, filepath.FromSlash(dir))) {
			return wf, false, true
		}
	}
	name := path.Base(rel)
	lang := p.byExt[path.Ext(name)]
	eco := manifestEco[name]
	if lang == nil && eco == "" {
		return wf, false, false
	}
	abs := filepath.Join(p.root, filepath.FromSlash(rel))
	st, err := os.Lstat(abs)
	if err != nil {
		return wf, false, true
	}
	if !st.Mode().IsRegular() {
		return wf, false, true
	}
	if inGit == nil && p.gitIgnored(rel) {
		return wf, false, true
	}
	if st.Size() > p.opts.MaxFileSize {
		p.problems[rel] = Problem{Path: rel, Reason: fmt.Sprintf("too big: %d bytes (limit %d)", st.Size(), p.opts.MaxFileSize), Skipped: true}
		return wf, false, true
	}
	if name == "go.mod" {
		if b, err := readProjectFile(abs, p.opts.MaxFileSize); err == nil {
			if m := goModulePath(b); m != "" {
				p.info.goModules[relDir(rel)] = m
			}
		}
	}
	if name == "__init__.py" {
		p.info.initDirs[relDir(rel)] = true
	}
	return walkFile{rel: rel, size: st.Size(), modTime: st.ModTime().UnixNano(), lang: lang, eco: eco}, true, false
}

// gitIgnored checks rel against the .gitignore files on its way from the root.
func (p *Project) gitIgnored(rel string) bool {
	var levels []ignoreLevel
	dir := ""
	parts := strings.Split(rel, "/")
	for i := 0; i < len(parts); i++ {
		if gi, err := compileIgnore(filepath.Join(p.root, filepath.FromSlash(dir), ".gitignore")); err == nil {
			levels = append(levels, ignoreLevel{dir: dir, gi: gi})
		}
		if i == len(parts)-1 {
			break
		}
		dir = path.Join(dir, parts[i])
		if ignored(levels, dir, true) {
			return true
		}
	}
	return ignored(levels, rel, false)
}
