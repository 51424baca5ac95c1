package codegraph

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sort"
)

// prepared is the state incremental updates need after a graph came from
// the persisted snapshot: every file's parse record, the problems they
// carry, and a builder with its tables and the graph it built.
type prepared struct {
	done     chan struct{} // closed when the fields below are set
	files    map[string]*fileData
	problems map[string]*Problem // per path: its problem, or nil for none
	envProb  *Problem
	envStamp fileStamp
	b        *builder
	g        *Graph
	rawNone  bool // no path of files is other than UTF-8 (Project.rawNone)
	err      error
}

// PrepareUpdates builds, in the calling goroutine, what the first update
// after a load from the persisted graph would otherwise build on its path
// (the per-file records and the incremental builder: seconds on a large
// project), without holding the project's lock, so queries, Graph, Report
// and readers are never blocked by it. An update arriving meanwhile waits
// for it instead of doing the same work. It does nothing when the project
// was indexed (not loaded) or the work is already done or under way. Watch
// calls it in the background at the first change it sees; the app also
// calls it when the user starts editing or runs a task.
func (p *Project) PrepareUpdates(ctx context.Context) error {
	p.mu.Lock()
	if !p.loaded || p.prep != nil || p.closed {
		p.mu.Unlock()
		return nil
	}
	pr := &prepared{done: make(chan struct{})}
	p.prep = pr
	stamps := make([]fileStamp, 0, len(p.stamps))
	for _, s := range p.stamps {
		stamps = append(stamps, s)
	}
	info := p.info
	p.mu.Unlock()
	p.prepare(ctx, pr, stamps, info)
	p.mu.Lock()
	installed := false
	if p.prep == pr && p.loaded && pr.err == nil {
		p.installPreparedLocked(pr)
		installed = true
	}
	if pr.err != nil && p.prep == pr {
		p.prep = nil // the next update tries again
	}
	p.mu.Unlock()
	if installed {
		releaseAfterPrepare()
	}
	return pr.err
}

// prepareFreeMinLive is the live heap (last marked) from which the end of
// a preparation returns the freed memory to the system instead of
// collecting only when due (collectIfDue).
const prepareFreeMinLive = 256 << 20

// releaseAfterPrepare collects the preparation's garbage and, on a large
// project, gives the freed pages back at once: the app on pyenv's stdlib
// and site-packages otherwise stayed at the preparation's peak (2.06 GB)
// for the rest of the session; with it, 1.77 GB for ≈ 1 CPU-s in the
// background (BENCHMARKS.md, eighth round). A small project keeps
// collectIfDue.
func releaseAfterPrepare() {
	if liveHeapBelow(prepareFreeMinLive) {
		collectIfDue()
		return
	}
	debug.FreeOSMemory()
}

// collectIfDue runs a collection now when the heap has used more than half
// of its way to the collector's next goal. The preparation leaves its
// garbage (the loaded graph it replaced, the build's scratch) on a heap of
// about a cold index's size; on go/src that was 600 MB of a 700 MB goal
// over 350 MB live, and the cycle it was about to start landed on the first
// edits (71–81 ms CPU for a first edit against 27–28 with this collection,
// in the background, before any edit; measured in BENCHMARKS.md, edit50).
// On pyenv it ends at 1.4 GB of a 2.4 GB goal: an edit allocates ~7 MB,
// so no cycle is near and none is forced (one would cost ≈ 1.5 CPU-s).
func collectIfDue() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	for _, v := range s {
		if v.Value.Kind() != metrics.KindUint64 {
			return
		}
	}
	if gcDue(s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()) {
		runtime.GC()
	}
}

// gcDue reports a heap (bytes of objects) past the middle of the way from
// the last marked live heap to the collector's goal.
func gcDue(live, goal, heap uint64) bool {
	return goal > live && heap > live && heap-live > (goal-live)/2
}

// prepare fills pr (and closes pr.done) from the project's cache and files;
// it reads no field of p that an update changes.
func (p *Project) prepare(ctx context.Context, pr *prepared, stamps []fileStamp, info *projectInfo) {
	defer close(pr.done)
	p.hook("prepare-start")
	cached, cacheErr := p.loadCache()
	if cacheErr != nil {
		p.log.Warn("codegraph cache", "root", p.root, "err", cacheErr)
	}
	sort.Slice(stamps, func(i, j int) bool { return stamps[i].rel < stamps[j].rel })
	jobs := make([]job, len(stamps))
	for i, s := range stamps {
		var l *language
		if s.lang != "" {
			l = p.byName[s.lang]
		}
		jobs[i] = job{wf: walkFile{rel: s.rel, size: s.size, modTime: s.modTime, lang: l, eco: s.eco}, cached: cached[s.rel]}
	}
	results, err := p.process(ctx, jobs)
	if err != nil {
		pr.err = fmt.Errorf("load graph state: %w", err)
		return
	}
	p.warmExtractors(stamps)
	pr.files = make(map[string]*fileData, len(results))
	pr.problems = make(map[string]*Problem, len(results))
	puts := map[string]*fileData{}
	for i, r := range results {
		rel := jobs[i].wf.rel
		pr.problems[rel] = r.problem
		if r.fd == nil {
			continue
		}
		pr.files[rel] = r.fd
		if cached[rel] != r.fd {
			puts[rel] = r.fd
		}
	}
	if cacheErr == nil && len(puts) > 0 {
		if err := p.saveCache(puts, nil, cached == nil); err != nil {
			p.log.Warn("codegraph cache", "root", p.root, "err", err)
		}
	}
	// The .env, as buildLocked reads it.
	env := map[string]string{}
	pr.envStamp = envStampOf(p.root)
	b, err := readProjectFile(filepath.Join(p.root, ".env"), maxDotEnv)
	switch {
	case err == nil:
		env = parseDotEnv(b)
	case !errors.Is(err, fs.ErrNotExist):
		pr.envProb = &Problem{Path: ".env", Reason: readReason(err) + " (its values are not used)", Skipped: true}
	}
	pr.b = newBuilder(p.root, p.byName)
	g, err := pr.b.build(pr.files, info, env)
	if err != nil {
		pr.err = fmt.Errorf("build graph state: %w", err)
		return
	}
	pr.g = g
	pr.rawNone = !markRawPaths(pr.g, pr.files)
	p.hook("prepare-built")
}

// installPreparedLocked makes a prepared state the project's: the graph is
// replaced by the rebuilt one, which has the same content.
func (p *Project) installPreparedLocked(pr *prepared) {
	for rel, prob := range pr.problems {
		delete(p.problems, rel)
		if prob != nil {
			p.problems[rel] = *prob
		}
	}
	delete(p.problems, ".env")
	if pr.envProb != nil {
		p.problems[".env"] = *pr.envProb
	}
	p.envStamp = pr.envStamp
	p.files, p.b, p.rawNone = pr.files, pr.b, pr.rawNone
	p.loaded = false
	p.prep = nil
	p.graph.Store(pr.g)
	p.fillProblemsLocked()
}

// materializeLocked loads what incremental updates need after the graph
// came from a snapshot (see PrepareUpdates), or waits for a preparation
// under way and installs it. p.mu is held.
func (p *Project) materializeLocked(ctx context.Context) error {
	if !p.loaded {
		return nil
	}
	pr := p.prep
	if pr != nil {
		select {
		case <-pr.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if pr.err == nil {
			p.installPreparedLocked(pr)
			return nil
		}
		// It failed (cancelled with the watcher's context, say): do it here.
	}
	pr = &prepared{done: make(chan struct{})}
	p.prep = pr
	stamps := make([]fileStamp, 0, len(p.stamps))
	for _, s := range p.stamps {
		stamps = append(stamps, s)
	}
	p.prepare(ctx, pr, stamps, p.info)
	if pr.err != nil {
		p.prep = nil
		return pr.err
	}
	p.installPreparedLocked(pr)
	return nil
}

// warmExtractors readies a parser, with its language's query compiled, for
// every language of the project's files, for the first update to take
// (takeExtractors takes the set put back last). A load from the persisted
// graph parses nothing, so without this the first update compiled its
// language's query on its path: 70 of its 126 ms CPU on pyenv's
// argparse.py (the Python query), against 17 ms for a later file's first
// update.
func (p *Project) warmExtractors(stamps []fileStamp) {
	set := map[*language]*extractor{}
	for _, s := range stamps {
		l := p.byName[s.lang]
		if s.lang == "" || l == nil || set[l] != nil {
			continue
		}
		e, err := p.newExtractor(l)
		if err != nil {
			p.log.Warn("codegraph prepare: parser", "lang", l.name, "err", err)
			continue
		}
		set[l] = e
	}
	if len(set) > 0 {
		p.putExtractors(set)
	}
}
