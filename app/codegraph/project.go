package codegraph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"codeloom/app/memory"
)

// DefaultMaxFileSize is the size above which a source file is skipped.
const DefaultMaxFileSize = 1 << 20

// Options control indexing.
type Options struct {
	MaxFileSize int64                 // files larger than this are skipped (default DefaultMaxFileSize)
	Workers     int                   // parallel parsers (default: number of CPUs)
	Progress    func(done, total int) // called as files are processed, from one goroutine
	NoCache     bool                  // neither read nor write the graph cache
	// Store, when set, is the cache store to use (kept open by the caller);
	// otherwise the project's store is opened briefly when needed.
	Store BlobStore
	// Logger receives debug and warning logs (default slog.Default()).
	Logger *slog.Logger
	// NoUpdates tells Open that the project will not be updated (a CLI
	// command that reads the graph and exits): a full index releases the
	// per-file records and the incremental builder as soon as the graph is
	// built, before persisting it. An update would still work: it loads
	// them again, as after opening from the persisted graph.
	NoUpdates bool

	// testHook, when set (tests only), is called at named moments of
	// indexing, updating and persisting, so a test can kill the process there.
	testHook func(stage string)
	// testResolved, when set (tests only), is given the builder when a
	// build has resolved its files, before anything is dropped for the
	// assembly.
	testResolved func(b *builder)
	// testSpilled, when set (tests only), is given a final build's spill
	// of references before they are read back.
	testSpilled func(s *refSpill)
}

// Report describes the last indexing run.
type Report struct {
	Root     string    `json:"root"`
	Stats    Stats     `json:"stats"`
	Parsed   int       `json:"parsed"` // files parsed in this run
	Cached   int       `json:"cached"` // files taken from the cache unchanged
	Problems []Problem `json:"problems"`
	Skipped  int       `json:"skipped"` // problems that kept a file out of the graph
	CacheErr string    `json:"cache_error,omitempty"`
	// FromSnapshot is set when the graph was loaded from the persisted graph
	// (nothing changed since it was written): no file was read or resolved.
	FromSnapshot bool          `json:"from_snapshot,omitempty"`
	Duration     time.Duration `json:"duration_ns"`
}

// Project is an indexed project folder: the current graph plus what is needed
// to update it incrementally. Methods are safe for concurrent use; updates
// are serialised.
type Project struct {
	root   string
	opts   Options
	log    *slog.Logger
	langs  []*language
	byExt  map[string]*language
	byName map[string]*language

	mu       sync.Mutex // guards the fields below and serialises updates
	files    map[string]*fileData
	problems map[string]Problem
	info     *projectInfo
	git      bool // the file set is git's (see gitListFiles)
	report   Report
	closed   bool

	graph atomic.Pointer[Graph]
	b     *builder // incremental graph builder (guarded by mu)

	// Persisted graph (persist_project.go), guarded by mu.
	loaded      bool                 // graph came from the snapshot: files and b not loaded yet
	prep        *prepared            // loading files and b for updates, under way or done (update_prepare.go)
	stamps      map[string]fileStamp // every walked file's state the graph stands for
	walkProb    []Problem            // the walk's problems the graph stands for
	envStamp    fileStamp            // the .env read by the last build
	ranks       []float64            // global PageRank of rankG's nodes, by index
	rankG       *Graph
	snapGen     uint64 // state generation; bumped by every change to persist
	snapDone    uint64 // generation last persisted
	snapTimer   *time.Timer
	snapEnd     time.Time     // when the last snapshot write ended
	snapCost    time.Duration // how long it took (wall), which spaces the next (scheduleSnapshotLocked)
	snapWriteMu sync.Mutex    // serialises snapshot writers
	// The last global ranks computed and the arcs they were computed over
	// (guarded by snapWriteMu): a write whose graph has the same arcs
	// reuses them (rank.go, sameArcs).
	rankArcsLast  *rankArcs
	rankArcsRanks []float64
	enc           *encCache     // the encoder's state kept between rewrites after updates (persist_encache.go; snapWriteMu)
	encWrites     uint64        // rewrites so far (snapWriteMu): releaseWriterState frees the state above if no later one came
	encTimer      *time.Timer   // releases it encKeep after the last rewrite
	encKeep       time.Duration // 0: defaultEncKeep (tests shorten it)

	idleMu  sync.Mutex
	idle    []map[*language]*extractor   // parsers with compiled queries, reused across runs
	queries map[*language]*compiledQuery // compiled once, shared by every worker's parser

	treeMu sync.Mutex
	trees  []*keptTreeEntry // syntax trees of recently updated files, most recent last

	// unbuilt holds the paths whose entry in files UpdateFiles changed since
	// the last build it made (guarded by mu): the next one's hint to the
	// builder (builder.diffFiles). checkHint (tests) has the builder check
	// the hint against a comparison of every file.
	unbuilt   map[string]bool
	checkHint bool
	// rawHint is the same paths, for markRawPathsLocked (consumed by it);
	// rawNone: the last build's files had no path that is not UTF-8.
	rawHint map[string]bool
	rawNone bool
}

// maxKeptTrees bounds how many files keep their syntax tree between updates
// (the files being edited); a tree costs a few times its file's size.
const maxKeptTrees = 8

type keptTreeEntry struct {
	rel string
	kt  *keptTree
}

// takeTree removes and returns the kept tree of rel for language l, or a new
// empty one (the parse then keeps its tree for the next update).
func (p *Project) takeTree(rel string, l *language) *keptTree {
	p.treeMu.Lock()
	defer p.treeMu.Unlock()
	for i, e := range p.trees {
		if e.rel == rel {
			p.trees = append(p.trees[:i], p.trees[i+1:]...)
			if e.kt.lang == l {
				return e.kt
			}
			e.kt.free()
			break
		}
	}
	return &keptTree{lang: l}
}

// putTree keeps rel's tree, dropping the least recently used beyond
// maxKeptTrees.
func (p *Project) putTree(rel string, kt *keptTree) {
	p.treeMu.Lock()
	defer p.treeMu.Unlock()
	if kt.tree == nil || p.closed {
		kt.free()
		return
	}
	p.trees = append(p.trees, &keptTreeEntry{rel: rel, kt: kt})
	for len(p.trees) > maxKeptTrees {
		p.trees[0].kt.free()
		p.trees = p.trees[1:]
	}
}

// dropTrees frees every kept tree.
func (p *Project) dropTrees() {
	p.treeMu.Lock()
	defer p.treeMu.Unlock()
	for _, e := range p.trees {
		e.kt.free()
	}
	p.trees = nil
}

// takeExtractors returns a set of per-language extractors for one worker.
func (p *Project) takeExtractors() map[*language]*extractor {
	p.idleMu.Lock()
	defer p.idleMu.Unlock()
	if n := len(p.idle); n > 0 {
		e := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return e
	}
	return map[*language]*extractor{}
}

// newExtractor returns a parser for l running l's query, compiled on first
// use and shared by the workers.
func (p *Project) newExtractor(l *language) (*extractor, error) {
	p.idleMu.Lock()
	q := p.queries[l]
	if q == nil {
		var err error
		q, err = compileQuery(l.grammar(), l.query)
		if err != nil {
			p.idleMu.Unlock()
			return nil, fmt.Errorf("compile %s query: %w", l.name, err)
		}
		if p.queries == nil {
			p.queries = map[*language]*compiledQuery{}
		}
		p.queries[l] = q
	}
	p.idleMu.Unlock()
	return newSharedExtractor(l, q)
}

// putExtractors gives a worker's extractors back for the next run.
func (p *Project) putExtractors(e map[*language]*extractor) {
	p.idleMu.Lock()
	defer p.idleMu.Unlock()
	p.idle = append(p.idle, e)
}

// projectDir returns root as an absolute path, or an error when it is not
// an existing directory.
func projectDir(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", root, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", root, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("open %s: not a directory", root)
	}
	return abs, nil
}

// Open indexes the project at root: it walks the folder, reuses cached parse
// results for unchanged files, parses the rest in parallel and builds the
// graph. Cancelling ctx stops it with ctx's error.
func Open(ctx context.Context, root string, opts Options) (*Project, error) {
	start := time.Now()
	abs, err := projectDir(root)
	if err != nil {
		return nil, err
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.NumCPU()
	}
	p := &Project{root: abs, opts: opts, log: opts.Logger, langs: registry(), files: map[string]*fileData{}}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.byExt = langByExt(p.langs)
	p.byName = map[string]*language{}
	for _, l := range p.langs {
		p.byName[l.name] = l
	}
	if !opts.NoCache {
		p.removeStaleTemps()
	}
	if err := p.index(ctx, start); err != nil {
		return nil, err
	}
	return p, nil
}

// Graph returns the current graph snapshot.
func (p *Project) Graph() *Graph { return p.graph.Load() }

// Root returns the absolute project root.
func (p *Project) Root() string { return p.root }

// Report returns the report of the last index or update.
func (p *Project) Report() Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.report
	r.Problems = append([]Problem(nil), r.Problems...)
	return r
}

// Close releases the project. The last graph stays readable.
func (p *Project) Close() error {
	p.mu.Lock()
	if p.snapTimer != nil {
		p.snapTimer.Stop()
	}
	p.mu.Unlock()
	p.flushSnapshot() // an update not persisted yet
	p.snapWriteMu.Lock()
	p.releaseWriterStateLocked()
	p.snapWriteMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.idleMu.Lock()
	defer p.idleMu.Unlock()
	p.closeExtractorsLocked()
	p.dropTrees()
	return nil
}

// closeExtractorsLocked (idleMu held) frees the idle workers' parsers and
// the compiled queries (their memory is C's); the next parse makes new ones.
func (p *Project) closeExtractorsLocked() {
	for _, set := range p.idle {
		for _, e := range set {
			e.Close()
		}
	}
	p.idle = nil
	for _, q := range p.queries {
		q.close()
	}
	p.queries = nil
}

// job is one file to process.
type job struct {
	wf     walkFile
	cached *fileData
	keep   bool // an update: parse incrementally from the file's kept tree, keep the new one
}

// result of processing one file.
type result struct {
	fd      *fileData
	problem *Problem // nil when none
	parsed  bool
}

// index runs a full (re-)index.
func (p *Project) index(ctx context.Context, start time.Time) error {
	wr, err := walk(ctx, p.root, p.opts.MaxFileSize, p.byExt)
	if err != nil {
		return err
	}
	var snapErr error
	if !p.opts.NoCache {
		// Nothing changed since the graph was persisted: load it, build nothing.
		snap, err := p.loadSnapshot(p.headerFromWalk(wr))
		if snap != nil {
			if p.opts.Store == nil {
				// The store is not needed to load, but a damaged one is
				// still found and reported (cheap when it is as its last
				// writer left it).
				if _, err := memory.CheckProject(p.root); err != nil {
					p.log.Warn("codegraph store check", "root", p.root, "err", err)
				}
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, n := range wr.notes {
				p.log.Warn("codegraph walk", "root", p.root, "note", n)
			}
			p.installSnapshotLocked(snap, wr, start)
			return nil
		}
		if err != nil {
			snapErr = fmt.Errorf("%w (rebuilt)", err) // reported with the cache's errors
		}
	}
	var srcBytes int64
	for _, wf := range wr.files {
		srcBytes += wf.size
	}
	defer loosenGCIfSmall(srcBytes)() // build_gc.go
	cached, cacheErr := p.loadCache()
	fullSave := cached == nil
	jobs := make([]job, len(wr.files))
	for i, wf := range wr.files {
		jobs[i] = job{wf: wf, cached: cached[wf.rel]}
	}
	results, err := p.process(ctx, jobs)
	if err != nil {
		return err
	}
	if p.opts.NoUpdates {
		// No parse follows this one: its parsers, query cursors and
		// compiled queries (C memory) go before the C heap is trimmed
		// (an update would make them again). After pyenv's stdlib,
		// glibc's arenas then hold 24 MiB through the build, not 37.
		p.idleMu.Lock()
		p.closeExtractorsLocked()
		p.idleMu.Unlock()
	}
	releaseCHeap() // the parse's freed trees (build_ctrim_linux.go)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.info = wr.info
	p.git = wr.git
	for _, n := range wr.notes {
		p.log.Warn("codegraph walk", "root", p.root, "note", n)
	}
	p.files = map[string]*fileData{}
	p.problems = map[string]Problem{}
	for _, pr := range wr.problems {
		p.problems[pr.Path] = pr
	}
	parsed, reused := 0, 0
	puts := map[string]*fileData{}
	for _, r := range results {
		if r.problem != nil {
			p.problems[r.problem.Path] = *r.problem
		}
		if r.fd == nil {
			continue
		}
		p.files[r.fd.Path] = r.fd
		if r.parsed {
			parsed++
		} else {
			reused++
		}
		if c := cached[r.fd.Path]; c != r.fd {
			puts[r.fd.Path] = r.fd
		}
	}
	var deletes []string
	for k := range cached {
		if _, ok := p.files[k]; !ok {
			deletes = append(deletes, k)
		}
	}
	if cacheErr == nil && (len(puts) > 0 || len(deletes) > 0 || fullSave) {
		cacheErr = p.saveCache(puts, deletes, fullSave)
	}
	p.hook("cache-saved")
	// The collector stays tight through the build and the snapshot write of
	// a large project: restored right after the build, it would let the
	// snapshot's buffers pile on the build's uncollected garbage. (Not during
	// the cache write before it: its garbage made 14 more collections for a
	// heap that stays below the build's peak.)
	defer tightenGCIfLarge()() // build_gc.go
	g, err := p.buildLocked()
	if err != nil {
		return err
	}
	p.graph.Store(g)
	p.setStampsFromWalkLocked(wr)
	p.report = Report{Root: p.root, Stats: g.stats, Parsed: parsed, Cached: reused, Duration: time.Since(start)}
	if cacheErr == nil && snapErr != nil {
		cacheErr = snapErr
	}
	if p.opts.NoUpdates {
		p.releaseBuildStateLocked()
	}
	if !p.opts.NoCache {
		p.snapGen++
		if err := p.writeSnapshotHeld(); err != nil && cacheErr == nil {
			cacheErr = err
		}
	}
	if cacheErr != nil {
		p.report.CacheErr = cacheErr.Error()
		p.log.Warn("codegraph cache", "root", p.root, "err", cacheErr)
	}
	p.fillProblemsLocked()
	return nil
}

// hook calls the test hook, if any.
func (p *Project) hook(stage string) {
	if p.opts.testHook != nil {
		p.opts.testHook(stage)
	}
}

// writeSnapshotHeld persists the current state while mu is held (the
// writer re-takes mu briefly, so it is released around the write).
func (p *Project) writeSnapshotHeld() error {
	j := p.snapJobLocked()
	p.mu.Unlock()
	defer p.mu.Lock()
	p.snapWriteMu.Lock()
	defer p.snapWriteMu.Unlock()
	return p.writeSnapshot(j)
}

func (p *Project) fillProblemsLocked() {
	p.report.Problems = p.report.Problems[:0]
	p.report.Skipped = 0
	for _, pr := range p.problems {
		pr.PathB64 = rawPathB64(pr.Path)
		p.report.Problems = append(p.report.Problems, pr)
		if pr.Skipped {
			p.report.Skipped++
		}
	}
	sort.Slice(p.report.Problems, func(i, j int) bool { return p.report.Problems[i].Path < p.report.Problems[j].Path })
}

// maxDotEnv caps the size of the .env file read for slices' environment.
const maxDotEnv = 1 << 20

// buildLocked builds a graph from the current files.
func (p *Project) buildLocked() (*Graph, error) {
	env := map[string]string{}
	delete(p.problems, ".env")
	p.envStamp = envStampOf(p.root)
	b, err := readProjectFile(filepath.Join(p.root, ".env"), maxDotEnv)
	switch {
	case err == nil:
		env = parseDotEnv(b)
	case !errors.Is(err, fs.ErrNotExist):
		p.problems[".env"] = Problem{Path: ".env", Reason: readReason(err) + " (its values are not used)", Skipped: true}
		p.log.Warn("codegraph .env skipped", "root", p.root, "err", err)
	}
	if p.b == nil {
		p.b = newBuilder(p.root, p.byName)
		// NoUpdates: the graph built now is the last (the builder is
		// released once it is built), so nothing is kept for a next build.
		p.b.final = p.opts.NoUpdates
		p.b.testResolved = p.opts.testResolved
		p.b.testSpilled = p.opts.testSpilled
	}
	g, err := p.b.build(p.files, p.info, env)
	if err != nil {
		p.b = nil // spent: the next build starts afresh
		return nil, fmt.Errorf("build the graph of %s: %w", p.root, err)
	}
	p.markRawPathsLocked(g)
	return g, nil
}

// process reads and parses jobs with opts.Workers goroutines.
func (p *Project) process(ctx context.Context, jobs []job) ([]result, error) {
	results := make([]result, len(jobs))
	var next atomic.Int64
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := min(p.opts.Workers, max(len(jobs), 1))
	var wg sync.WaitGroup
	progress := make(chan struct{}, len(jobs))
	var progWG sync.WaitGroup
	if p.opts.Progress != nil {
		progWG.Add(1)
		go func() {
			defer progWG.Done()
			n := 0
			for range progress {
				n++
				p.opts.Progress(n, len(jobs))
			}
		}()
	}
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// Keep the worker on one OS thread: its C parser's memory then
			// stays with one thread (its malloc arena and CPU cache).
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			exts := p.takeExtractors()
			defer p.putExtractors(exts)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				r, err := p.processOne(ctx, jobs[i], exts)
				if err != nil {
					errs[w] = err
					cancel()
					return
				}
				results[i] = r
				if p.opts.Progress != nil {
					progress <- struct{}{}
				}
			}
		}(w)
	}
	wg.Wait()
	close(progress)
	progWG.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return results, nil
}

// processOne turns one file into fileData, reusing the cached entry when the
// file's size and mtime (or, failing that, its content hash) are unchanged.
// Only cancellation and internal errors are returned; file problems become
// a Problem in the result.
func (p *Project) processOne(ctx context.Context, j job, exts map[*language]*extractor) (result, error) {
	wf := j.wf
	c := j.cached
	if c != nil && c.Size == wf.size && c.ModTime == wf.modTime && c.Lang == langName(wf.lang) {
		return result{fd: c, problem: cachedProblem(c)}, nil
	}
	src, err := readProjectFile(filepath.Join(p.root, filepath.FromSlash(wf.rel)), p.opts.MaxFileSize)
	if err != nil {
		return result{problem: &Problem{Path: wf.rel, Reason: readReason(err), Skipped: true}}, nil
	}
	if int64(len(src)) > p.opts.MaxFileSize {
		return result{problem: &Problem{Path: wf.rel, Reason: fmt.Sprintf("too big: %d bytes (limit %d)", len(src), p.opts.MaxFileSize), Skipped: true}}, nil
	}
	if isBinary(src) {
		return result{problem: &Problem{Path: wf.rel, Reason: "binary content (NUL bytes)", Skipped: true}}, nil
	}
	// With nothing to compare it with, a source file's hash is left to
	// extract, which hashes the file along with its definitions.
	var sum uint64
	sumLater := c == nil && wf.lang != nil
	if !sumLater {
		h := fnv.New64a()
		h.Write(src)
		sum = h.Sum64()
	}
	if c != nil && c.Sum == sum && c.Size == int64(len(src)) && c.Lang == langName(wf.lang) {
		cp := *c
		cp.ModTime = wf.modTime
		return result{fd: &cp, problem: cachedProblem(&cp)}, nil
	}
	fd := &fileData{Path: wf.rel, Lang: langName(wf.lang), Size: int64(len(src)), ModTime: wf.modTime, Sum: sum}
	if wf.lang == nil {
		fd.Eco = wf.eco
		fd.Lines = bytes.Count(src, []byte{'\n'})
		pk, err := parseManifest(wf.rel, src)
		if err != nil {
			return result{fd: fd, problem: &Problem{Path: wf.rel, Reason: "unparsable manifest: " + err.Error()}, parsed: true}, nil
		}
		fd.Packages = pk
		return result{fd: fd, parsed: true}, nil
	}
	ex := exts[wf.lang]
	if ex == nil {
		ex, err = p.newExtractor(wf.lang)
		if err != nil {
			return result{}, err
		}
		exts[wf.lang] = ex
	}
	var kt *keptTree
	if j.keep {
		kt = p.takeTree(wf.rel, wf.lang)
		defer p.putTree(wf.rel, kt)
	}
	if err := ex.extract(ctx, src, fd, kt, sumLater); err != nil {
		if ctx.Err() != nil {
			return result{}, ctx.Err()
		}
		return result{problem: &Problem{Path: wf.rel, Reason: "parse failed: " + err.Error(), Skipped: true}}, nil
	}
	return result{fd: fd, problem: cachedProblem(fd), parsed: true}, nil
}

// cachedProblem returns the caveat recorded for an indexed file, if any.
func cachedProblem(fd *fileData) *Problem {
	var rs []string
	if fd.BadUTF8 {
		rs = append(rs, "invalid UTF-8 (indexed; names shown with replacement characters)")
	}
	if fd.Syntax {
		rs = append(rs, "syntax errors (indexed what parses)")
	}
	if fd.Caveat != "" {
		rs = append(rs, fd.Caveat)
	}
	if len(rs) == 0 {
		return nil
	}
	return &Problem{Path: fd.Path, Reason: strings.Join(rs, "; ")}
}

func langName(l *language) string {
	if l == nil {
		return ""
	}
	return l.name
}

// isBinary reports NUL bytes in the first 8 KiB.
func isBinary(src []byte) bool {
	return bytes.IndexByte(src[:min(len(src), 8192)], 0) >= 0
}

// relPath turns a path (absolute, or relative to the root) into a clean
// slash-separated path relative to the root; ok=false when outside.
func (p *Project) relPath(pth string) (string, bool) {
	if !filepath.IsAbs(pth) {
		pth = filepath.Join(p.root, pth)
	}
	r, err := filepath.Rel(p.root, filepath.Clean(pth))
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// errProjectClosed is returned by updates of a closed project.
var errProjectClosed = errors.New("project is closed")
