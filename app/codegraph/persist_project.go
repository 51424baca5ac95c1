package codegraph

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"codeloom/app/memory"
)

// snapFile is the persisted graph inside the project's data folder (its
// cache/ folder is git-ignored by the store's .gitignore).
const snapFile = "graph.snap"

// snapDelay is how long after an update the persisted graph is rewritten:
// a burst of edits costs one write, off the update's path.
const snapDelay = time.Second

// maxSnapSize bounds the persisted graph read at open.
const maxSnapSize = 8 << 30

// SnapshotPath returns where the persisted graph of the project at root is kept.
func SnapshotPath(root string) string {
	return filepath.Join(memory.DataDir(root), "cache", snapFile)
}

// snapVersion identifies what a snapshot depends on besides the files: the
// extractor (queries, record layout), the snapshot layout and the size limit.
func (p *Project) snapVersion() string {
	return fmt.Sprintf("%s/%s/max=%d", p.cacheVersion(), snapMagic, p.opts.MaxFileSize)
}

func stampOf(wf walkFile) fileStamp {
	return fileStamp{rel: wf.rel, size: wf.size, modTime: wf.modTime, lang: langName(wf.lang), eco: wf.eco}
}

// envStampOf stats the project's .env, whose values slices show.
func envStampOf(root string) fileStamp {
	st, err := os.Stat(filepath.Join(root, ".env"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fileStamp{}
		}
		return fileStamp{rel: ".env", size: -1} // unreadable: never equal to a later readable state
	}
	return fileStamp{rel: ".env", size: st.Size(), modTime: st.ModTime().UnixNano(), lang: st.Mode().Type().String()}
}

// headerLocked describes the project's current state as the next walk
// will find it.
func (p *Project) headerLocked() *snapHeader {
	h := &snapHeader{version: p.snapVersion(), env: p.envStamp}
	h.stamps = make([]fileStamp, 0, len(p.stamps))
	for _, s := range p.stamps {
		h.stamps = append(h.stamps, s)
	}
	sort.Slice(h.stamps, func(i, j int) bool { return h.stamps[i].rel < h.stamps[j].rel })
	h.walkProb = append([]Problem(nil), p.walkProb...)
	sortProblems(h.walkProb)
	return h
}

func sortProblems(ps []Problem) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Path != ps[j].Path {
			return ps[i].Path < ps[j].Path
		}
		return ps[i].Reason < ps[j].Reason
	})
}

// headerFromWalk describes the state a walk found.
func (p *Project) headerFromWalk(wr *walkResult) *snapHeader {
	h := &snapHeader{version: p.snapVersion(), env: envStampOf(p.root)}
	h.stamps = make([]fileStamp, len(wr.files))
	for i, wf := range wr.files {
		h.stamps[i] = stampOf(wf)
	}
	sort.Slice(h.stamps, func(i, j int) bool { return h.stamps[i].rel < h.stamps[j].rel })
	h.walkProb = make([]Problem, len(wr.problems))
	for i, pr := range wr.problems {
		h.walkProb[i] = Problem{Path: pr.Path, Reason: pr.Reason, Skipped: pr.Skipped}
	}
	sortProblems(h.walkProb)
	return h
}

func sameHeader(a, b *snapHeader) bool {
	if a.version != b.version || a.env != b.env || len(a.stamps) != len(b.stamps) || len(a.walkProb) != len(b.walkProb) {
		return false
	}
	for i := range a.stamps {
		if a.stamps[i] != b.stamps[i] {
			return false
		}
	}
	for i := range a.walkProb {
		x, y := a.walkProb[i], b.walkProb[i]
		if x.Path != y.Path || x.Reason != y.Reason || x.Skipped != y.Skipped {
			return false
		}
	}
	return true
}

// loadSnapshot returns the persisted graph when it was built from exactly
// the state want describes; nil and no error when there is none or it is
// stale; an error when it is unreadable (damaged, cut off).
func (p *Project) loadSnapshot(want *snapHeader) (*snapshot, error) {
	path := SnapshotPath(p.root)
	data, err := readProjectFile(path, maxSnapSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load persisted graph %s: %w", path, err)
	}
	secs, err := parseSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("load persisted graph %s: %w", path, err)
	}
	h, err := snapshotHeader(secs)
	if err != nil {
		return nil, fmt.Errorf("load persisted graph %s: %w", path, err)
	}
	if !sameHeader(h, want) {
		return nil, nil
	}
	snap, err := decodeSnapshot(p.root, secs)
	if err != nil {
		return nil, fmt.Errorf("load persisted graph %s: %w", path, err)
	}
	snap.header = *h
	return snap, nil
}

// installSnapshotLocked makes a loaded snapshot the project's state. The
// per-file records and the incremental builder are not loaded: the first
// update does that (materializeLocked).
func (p *Project) installSnapshotLocked(snap *snapshot, wr *walkResult, start time.Time) {
	g := snap.graph
	p.info = wr.info
	p.git = wr.git
	p.files = nil
	p.loaded = true
	p.stamps = make(map[string]fileStamp, len(snap.header.stamps))
	for _, s := range snap.header.stamps {
		p.stamps[s.rel] = s
	}
	p.walkProb = snap.header.walkProb
	p.envStamp = snap.header.env
	p.problems = make(map[string]Problem, len(snap.problems))
	for _, pr := range snap.problems {
		p.problems[pr.Path] = pr
	}
	p.ranks, p.rankG = snap.ranks, g
	p.graph.Store(g)
	p.report = Report{Root: p.root, Stats: g.stats, Cached: g.stats.Files, Duration: time.Since(start), FromSnapshot: true}
	p.fillProblemsLocked()
}

// releaseBuildStateLocked drops the per-file records and the incremental
// builder (Options.NoUpdates) and marks the project as one whose first
// update loads them again (materializeLocked), as after a load from the
// persisted graph. On go/src they are about three quarters of what a
// freshly built project holds (445 MB with them, 117 MB for the graph).
//
// It then collects them at once: left to the collector's pace, they would
// stay on the heap while ranking and encoding allocate on top of them (the
// collector's goal is twice the heap it last marked, and the build's was
// the largest), and the snapshot's write would become the process's peak.
func (p *Project) releaseBuildStateLocked() {
	p.files, p.b, p.loaded = nil, nil, true
	runtime.GC()
}

// setStampsFromWalkLocked records the state a full index was built from.
func (p *Project) setStampsFromWalkLocked(wr *walkResult) {
	p.stamps = make(map[string]fileStamp, len(wr.files))
	for _, wf := range wr.files {
		p.stamps[wf.rel] = stampOf(wf)
	}
	p.walkProb = make([]Problem, len(wr.problems))
	for i, pr := range wr.problems {
		p.walkProb[i] = Problem{Path: pr.Path, Reason: pr.Reason, Skipped: pr.Skipped}
	}
}

// forgetWalkProblemLocked drops a walk problem of a path an update looked
// at again (its state is now the update's).
func (p *Project) forgetWalkProblemLocked(rel string) {
	out := p.walkProb[:0]
	for _, pr := range p.walkProb {
		if pr.Path != rel {
			out = append(out, pr)
		}
	}
	p.walkProb = out
}

// snapJob is one state to persist: a graph and the file state it stands for.
type snapJob struct {
	gen      uint64
	header   *snapHeader
	graph    *Graph
	problems []Problem
	// edits: a rewrite after updates (flushSnapshot), which continues the
	// last such write's encoding (encCache); the index's own write starts
	// afresh and drops that state.
	edits bool
}

// snapJobLocked captures the current state for writing.
func (p *Project) snapJobLocked() *snapJob {
	ps := make([]Problem, 0, len(p.problems))
	for _, pr := range p.problems {
		ps = append(ps, Problem{Path: pr.Path, Reason: pr.Reason, Skipped: pr.Skipped})
	}
	sortProblems(ps)
	return &snapJob{gen: p.snapGen, header: p.headerLocked(), graph: p.graph.Load(), problems: ps}
}

// writeSnapshot persists one state with its global ranks: the file is
// written beside the old one, synced and renamed over it, so a reader (or a
// kill at any moment) sees either the old or the new complete file.
func (p *Project) writeSnapshot(j *snapJob) error {
	start := time.Now()
	if h := p.opts.testHook; h != nil {
		h("snapshot-start")
	}
	if !j.edits {
		p.enc = nil
	} else if p.enc == nil {
		p.enc = newEncCache()
	}
	defer p.keepWriterStateLocked()
	path := SnapshotPath(p.root)
	// Each section is written as soon as it is encoded and then dropped
	// (persist_sink.go): the file (131 MB for pyenv's standard library and
	// site-packages) is never held in memory, not even as its sections.
	// The ranks come last, when the encoder's string table is gone.
	ranks, err := writeSnapshotFile(path, j.header, j.graph, j.problems, p.globalRanksWriter, p.enc, p.opts.testHook)
	if err != nil {
		p.enc = nil // whatever it holds may be half updated
		return fmt.Errorf("persist graph %s: %w", path, err)
	}
	p.mu.Lock()
	if p.graph.Load() == j.graph {
		p.ranks, p.rankG = ranks, j.graph
	}
	if p.b != nil {
		p.b.adoptCompacted(j.graph) // update_assemble.go
	}
	if j.gen > p.snapDone {
		p.snapDone = j.gen
	}
	p.snapEnd = time.Now()
	p.snapCost = p.snapEnd.Sub(start)
	p.mu.Unlock()
	return nil
}

// defaultEncKeep is how long the writer's state kept between rewrites (the
// encoder's, encCache, and the last ranks with their arcs: about 110 MB on
// pyenv) outlives the last rewrite: an editing session keeps it, an idle
// project gives that memory back (the next rewrite then starts afresh).
const defaultEncKeep = 2 * time.Minute

// keepWriterStateLocked (snapWriteMu held) schedules the release of the
// writer's state encKeep from now, unless another rewrite comes first.
func (p *Project) keepWriterStateLocked() {
	p.encWrites++
	n := p.encWrites
	keep := p.encKeep
	if keep <= 0 {
		keep = defaultEncKeep
	}
	if p.encTimer != nil {
		p.encTimer.Stop()
	}
	p.encTimer = time.AfterFunc(keep, func() {
		p.snapWriteMu.Lock()
		defer p.snapWriteMu.Unlock()
		if p.encWrites == n {
			p.releaseWriterStateLocked()
		}
	})
}

// releaseWriterStateLocked (snapWriteMu held) drops the writer's state.
func (p *Project) releaseWriterStateLocked() {
	if p.encTimer != nil {
		p.encTimer.Stop()
	}
	p.enc, p.rankArcsLast, p.rankArcsRanks = nil, nil, nil
}

// globalRanksWriter is globalRanks for the snapshot writer (snapWriteMu
// held): when g's ranking arcs equal those of the last ranks computed (an
// edit that changed no reference, or only lines), those ranks are reused:
// PageRank over equal arcs gives bit-identical scores. Otherwise they are
// computed, and kept with their arcs for the next write.
func (p *Project) globalRanksWriter(g *Graph) []float64 {
	if len(g.nodes) == 0 {
		return []float64{}
	}
	arcs := g.rankArcs()
	if sameArcs(arcs, p.rankArcsLast) && len(p.rankArcsRanks) == len(g.nodes) {
		p.rankArcsLast = arcs // the same; the older can go
		p.hook("snapshot-ranks-reused")
		return p.rankArcsRanks
	}
	p.rankArcsLast, p.rankArcsRanks = nil, nil // collectable while the new ones are computed
	ranks := arcs.scores(g.byID, nil)
	p.rankArcsLast, p.rankArcsRanks = arcs, ranks
	return ranks
}

// globalRanks returns the global PageRank of every node, by node index
// (Graph.Rank(nil)'s scores, without its sorted copy).
func globalRanks(g *Graph) []float64 {
	if len(g.nodes) == 0 {
		return []float64{}
	}
	return g.rankScores(nil)
}

// snapSpacing bounds the share of time spent rewriting the persisted graph
// while updates keep coming: the next write starts no sooner than
// snapSpacing times the last write's duration after it ended (at most
// snapMaxDelay after the last update), so rewriting takes at most about a
// quarter of one core however often files are saved.
const (
	snapSpacing  = 3
	snapMaxDelay = 30 * time.Second
)

// snapDelayLocked is how long after an update the persisted graph is
// rewritten: snapDelay, or longer while the last write is recent (see
// snapSpacing).
func (p *Project) snapDelayLocked(now time.Time) time.Duration {
	d := snapDelay
	if !p.snapEnd.IsZero() {
		if w := p.snapEnd.Add(snapSpacing * p.snapCost).Sub(now); w > d {
			d = w
		}
	}
	return min(d, snapMaxDelay)
}

// scheduleSnapshotLocked asks for the current state to be persisted soon
// (snapDelayLocked after the last update).
func (p *Project) scheduleSnapshotLocked() {
	if p.opts.NoCache {
		return
	}
	p.snapGen++
	d := p.snapDelayLocked(time.Now())
	if p.snapTimer == nil {
		p.snapTimer = time.AfterFunc(d, p.flushSnapshot)
		return
	}
	p.snapTimer.Reset(d)
}

// flushSnapshot persists the current state if it is newer than the last
// one written. Writers are serialised.
func (p *Project) flushSnapshot() {
	p.snapWriteMu.Lock()
	defer p.snapWriteMu.Unlock()
	p.mu.Lock()
	if p.snapGen == p.snapDone || p.loaded {
		p.mu.Unlock()
		return
	}
	j := p.snapJobLocked()
	j.edits = true
	p.mu.Unlock()
	if err := p.writeSnapshot(j); err != nil {
		p.log.Warn("codegraph persist", "root", p.root, "err", err)
	}
}

// GlobalRank returns every node ordered by global PageRank, as
// Graph.Rank(nil), from the persisted ranks when they belong to the current
// graph (no computation), else computed.
func (p *Project) GlobalRank() []Ranked {
	g := p.Graph()
	p.mu.Lock()
	ranks := p.ranks
	if p.rankG != g {
		ranks = nil
	}
	p.mu.Unlock()
	if ranks == nil || len(ranks) != len(g.nodes) {
		return g.Rank(nil)
	}
	out := make([]Ranked, len(g.nodes))
	for i, n := range g.nodes {
		out[i] = Ranked{Node: n, Score: ranks[i]}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}
