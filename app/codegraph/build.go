package codegraph

import (
	"encoding/binary"
	"encoding/hex"
	"hash/maphash"
	"path"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
)

// maxUnresolvedSample bounds the unresolved references kept for the report.
const maxUnresolvedSample = 200

// nodeID is the stable ID of a node: a hash of kind, qualified name, path and
// an ordinal that tells apart duplicates (e.g. a property getter and setter),
// counted in source order. Line numbers are not part of it.
//
// The hash is FNV-1a (64 bits) of kind, 0, qual, 0, p and, when dup > 0,
// 0 and dup in decimal, computed inline (hash/fnv's Write made each part
// escape: four allocations per node).
func nodeID(kind Kind, qual, p string, dup int) string {
	h := fnvParts(fnvOffset64, string(kind), qual)
	h = fnvBytes(h, p)
	if dup > 0 {
		h *= fnvPrime64 // the 0 byte
		var d [20]byte
		h = fnvBytes(h, string(strconv.AppendInt(d[:0], int64(dup), 10)))
	}
	return hex16(h)
}

// fnvBytes continues FNV-1a hash h over s.
func fnvBytes(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// hex16 formats v as 16 lower-case hex digits.
func hex16(v uint64) string {
	var b [8]byte
	var h [16]byte
	binary.BigEndian.PutUint64(b[:], v)
	hex.Encode(h[:], b[:])
	return string(h[:]) // one allocation (EncodeToString makes two)
}

// bindKind says what a name in a file's scope is bound to.
type bindKind uint8

const (
	bDef      bindKind = iota + 1 // a node of the project
	bModule                       // a project module (key in mod)
	bExternal                     // something outside the project
	bLocal                        // a local variable of the enclosing definition
)

type binding struct {
	kind bindKind
	id   string // bDef: node ID; bExternal: package node ID or ""
	mod  string // bModule: module key
}

// fileResult is what resolving one file's imports or references produced.
type fileResult struct {
	edges []Edge
	// seen filters duplicate edges: edge hash → index of the first edge
	// with that hash (a hash, not the edge's strings, keeps the filter a
	// third of the size; a collision is settled by comparing edges).
	seen       map[uint64]int32
	seed       maphash.Seed
	resolved   int
	external   int
	unresolved int
	byKind     []kindCount // unresolved references per kind (a few kinds: no map per file)
	sample     []UnresolvedRef
	bases      [][2]string // resolved base classes: class ID, base ID
	extBases   []string    // classes with a base outside the project
	// packed: the edges, in place of edges, from the end of the file's
	// resolution to the assembly of the last build (build_final.go).
	packed []packedEdge
	pk     *edgePack // what packed's ends are read with (build_final.go)
}

// smallResult is the length below which addEdge searches a result's edges
// for a duplicate instead of keeping the hashed filter.
const smallResult = 16

func newResult() *fileResult {
	return &fileResult{} // seen is made by the first addEdge
}

// kindCount is a count of unresolved references of one kind.
type kindCount struct {
	kind string
	n    int
}

func (r *fileResult) addEdge(from, to string, kind EdgeKind, line int32) {
	if from == to && kind != EdgeCalls {
		return
	}
	if r.seen == nil && len(r.edges) < smallResult {
		// A short list is searched: no filter to allocate (most files'
		// results stay short).
		for i := range r.edges {
			if e := &r.edges[i]; e.From == from && e.To == to && e.Kind == kind {
				return
			}
		}
		r.edges = append(r.edges, Edge{From: from, To: to, Kind: kind, Line: int(line)})
		return
	}
	if r.seen == nil {
		// Not made yet, or dropped once the file was resolved (see
		// doneResolving): (re)build it.
		r.seed = maphash.MakeSeed()
		r.seen = make(map[uint64]int32, len(r.edges)+8)
		for i, e := range r.edges {
			h := r.edgeHash(e.From, e.To, e.Kind)
			if _, ok := r.seen[h]; !ok {
				r.seen[h] = int32(i)
			}
		}
	}
	h := r.edgeHash(from, to, kind)
	if i, ok := r.seen[h]; ok {
		if e := &r.edges[i]; e.From == from && e.To == to && e.Kind == kind {
			return
		}
		// Another edge with the same hash: compare them all.
		for _, e := range r.edges {
			if e.From == from && e.To == to && e.Kind == kind {
				return
			}
		}
	} else {
		r.seen[h] = int32(len(r.edges))
	}
	r.edges = append(r.edges, Edge{From: from, To: to, Kind: kind, Line: int(line)})
}

// edgeHash hashes an edge's ends and kind for the duplicate filter.
func (r *fileResult) edgeHash(from, to string, kind EdgeKind) uint64 {
	var h maphash.Hash
	h.SetSeed(r.seed)
	h.WriteString(from)
	h.WriteByte(0)
	h.WriteString(to)
	h.WriteByte(0)
	h.WriteString(string(kind))
	return h.Sum64()
}

// doneResolving drops the duplicate filter of a resolved file's result: it
// is only needed while edges are added, and was the largest per-edge cost
// kept after a build.
func (r *fileResult) doneResolving() {
	if r != nil {
		r.seen = nil
	}
}

// countKind counts one unresolved reference of kind.
func (r *fileResult) countKind(kind string) {
	for i := range r.byKind {
		if r.byKind[i].kind == kind {
			r.byKind[i].n++
			return
		}
	}
	r.byKind = append(r.byKind, kindCount{kind, 1})
}

func (r *fileResult) unresolvedRef(path, kind, name string, line int32) {
	r.unresolved++
	r.countKind(kind)
	if len(r.sample) < maxUnresolvedSample {
		r.sample = append(r.sample, UnresolvedRef{Path: path, Line: int(line), Kind: kind, Name: name})
	}
}

// fileBuild is the per-file state of the graph builder. It is kept between
// builds: an unchanged file keeps its nodes and its resolved edges.
type fileBuild struct {
	fd       *fileData
	lang     *language
	fileID   string
	key      string   // canonical module key
	keys     []string // every module key
	ids      []string // node ID per definition
	nodes    []*Node  // the file node, then definitions in source order (only the file node while nodesLater)
	iface    uint64   // hash of what other files can see (names, bases, imports, result types)
	hints    []string
	flow     []flowSrc  // value flow into names (flow.go); flow and hints: slabs tab's rows index
	tab      *scopeTab  // the scope tables, keyed by symbols (flow_names.go)
	fill     *tableFill // the scope tables while fillFileBuild builds them (nil after)
	facts    *flowFacts // parameters used by calls, decorators (flow.go)
	envNames map[string][]string
	inherits []nestKey // base classes named by each class (refInherit: Def, Name), in reference order

	scope      map[string]binding // what the file's imports bind; shadows topScope (see scopeLookup)
	topScope   map[string]string  // its module's top-level definitions (the builder's table, shared, never written)
	scopeState uint8              // 0 none, 1 building, 2 built
	spans      []importSpan
	inh        *fileResult // base classes
	res        *fileResult // imports and other references

	// Go only (build_go.go, flow_go.go).
	goBuild      int8                 // 0 unknown, 1 built on this platform, -1 excluded by build constraints
	goHintAt     map[hintKey][]hintAt // where each recorded type of a variable is assigned
	goDisp       []Edge               // dispatches edges from this file's calls (iface_go.go)
	goParamCalls map[nestKey]bool     // (def, parameter) called in that definition (flow_go_values.go)

	argAsked map[string]bool // callee names whose call sites in other files its edges read (flow_args.go)

	// argRefs: the file's argument records alone, which its argument sites
	// point into when argSplit is set (the last build's, argIndexSplit).
	argRefs  refList
	argSplit bool
	// argImports: the paths of the project files it imports, which its
	// argument sites can call into (flow_args.go; nil when none).
	argImports []string

	// nodesLater: nodes holds only the file node; the definitions' are
	// made at the assembly (a final build; build_nodetext.go), and
	// recvParents holds the parents attachReceivers gave Go methods until
	// then (by definition index; only those that differ).
	nodesLater  bool
	recvParents map[int32]string

	locNum int32 // its number in the builder's node table (build_locs.go; 0: none yet)
}

type nestKey struct {
	parent int32
	name   string
}

// hintKey names a variable in a scope: a definition (or -1 for the module),
// or, for "self.x" style attributes, the class definition.
type hintKey struct {
	scope int32
	attr  bool
	name  string
}

// defLocation is a definition's file and index.
type defLocation struct {
	fb  *fileBuild
	idx int32
}

// node returns what the resolution reads of the node of this build with ID
// id (the zero nodeView: none). It and defAt read one table
// (builder.locs): pyenv's stdlib has 370 k nodes, and a second table of
// them took 12 MB more at the peak of a cold index.
func (b *builder) node(id string) nodeView {
	l, ok := b.locs.get(id)
	switch {
	case !ok:
		return nodeView{}
	case l.fb == nil:
		return viewOf(b.pkgs[id])
	case l.idx >= 0 && l.fb.nodesLater:
		return l.fb.defView(l.idx) // (build_nodetext.go)
	}
	return viewOf(l.fb.nodes[l.idx+1])
}

// defAt returns where definition id is defined (false: no definition of
// this build, or a file or package node).
func (b *builder) defAt(id string) (defLocation, bool) {
	l, ok := b.locs.get(id)
	if !ok || l.fb == nil || l.idx < 0 {
		return defLocation{}, false
	}
	return l, true
}

// builder builds graphs incrementally. Tables that join files are rebuilt on
// every build (cheap); parsing results, nodes and resolved edges are reused
// for files that did not change. When no file's interface changed, only the
// changed files' references are resolved again.
type builder struct {
	root  string
	langs map[string]*language
	fbs   map[string]*fileBuild
	pkgs  map[string]*Node // package node cache by ID (stable objects)

	// Rebuilt on every build.
	info     *projectInfo
	modules  map[string][]*fileBuild      // family\x00key → files
	top      map[string]map[string]string // family\x00key → name → node ID
	members  map[string]map[string]string // class ID → member name → node ID
	bases    map[string][]string          // class ID → base class IDs
	subs     map[string][]string          // class ID → direct subclass IDs (flow.go)
	pyNames  map[string]uint8             // Python method names: pyProperty, pyMethod bits (flow_python.go)
	extBase  map[string]bool              // class ID → has a base outside the project
	locs     *nodeLocs                    // node ID → file and definition index (-1: the file node; no file: a package, in pkgs): node, defAt (build_locs.go)
	packages map[string]map[string]string // family → package name → node ID
	requires []Edge
	goEdges  []Edge // Go implements and dispatches edges (iface_go.go)

	last       *Graph       // the previous snapshot
	ordered    []*fileBuild // every file, sorted by path (the last build's)
	goImpl     *goImpls     // Go interface matching of the last build (nil: none)
	lastPkgs   []*Node      // its package nodes
	fastBuilds int          // snapshots made by assemblePatch (for tests)
	overlayMax int          // replaced edges an update's graph may hold before it is compacted (0: overlayMax; tests set it)

	// The scratch pools, allocated apart from the builder: sync.Pool
	// registers each pool's address with the runtime until two collections
	// after its last use, and a pool inside the builder kept the whole
	// builder (every file's tables) alive that long after it was dropped.
	*buildPools

	// final: no build follows this one (Options.NoUpdates): what only
	// later builds read is dropped before the graph is assembled.
	final bool

	pyArgs *pyArgIndex // Python argument sites by callee name (flow_args.go)
	hier   *hierMemo   // hierarchy walks of the resolution pass under way (flow_memo.go)

	// hint, when not nil, holds every path whose entry in the next build's
	// files may differ from the last build's (UpdateFiles sets it; the next
	// build consumes it): see diffFiles. checkHint (tests) makes diffFiles
	// compare it with the full comparison; hinted counts the builds that
	// used it (tests).
	hint      map[string]bool
	checkHint bool
	hinted    int
	// refilled: the paths whose fileBuild holds another *fileData than
	// files (fillFileBuild replaced it: JavaScript), which every build
	// processes again (diffFiles).
	refilled map[string]bool

	// testResolved (tests only; Options.testResolved) is called once the
	// files are resolved.
	testResolved func(b *builder)
	// testSpilled (tests only; Options.testSpilled) is given a final
	// build's spill of references, if any, before they are read back.
	testSpilled func(s *refSpill)
}

func modKey(family, key string) string { return family + "\x00" + key }

// buildPools is the builder's reusable scratch.
type buildPools struct {
	walks     sync.Pool // *classWalk scratch for hierarchy walks (class_walk.go)
	refBufs   sync.Pool // *refBuf: a file's references decoded for one pass (refs_packed.go)
	flowMemos sync.Pool // *flowMemoMaps: memo tables of the last flow evaluation (flow.go)
}

func newBuilder(root string, langs map[string]*language) *builder {
	return &builder{root: root, langs: langs, pkgs: map[string]*Node{}, buildPools: &buildPools{}}
}

// build returns the graph of files. Files whose *fileData is the same object
// as in the previous build are not processed again. It fails only when a
// final build cannot read back the references it spilled (refs_spill.go):
// the builder is then spent.
func (b *builder) build(files map[string]*fileData, info *projectInfo, env map[string]string) (*Graph, error) {
	b.info = info
	d := b.diffFiles(files) // update_build.go
	old, todo, sameFiles := d.old, d.todo, d.sameFiles
	b.fbs = d.next
	var changed []*fileBuild
	structural := old == nil || d.gone
	parallelFiles(todo, b.fillFileBuild)
	b.noteRefilled(files, todo, old == nil) // update_build.go
	// Until a final build's references are spilled, every file's tables
	// and references are live at once (build_gc.go).
	restoreSpillGC := func() {}
	if b.final {
		restoreSpillGC = tightenPreSpillGCIfLarge()
	}
	for _, fb := range todo {
		p := fb.fd.Path
		b.fbs[p] = fb
		changed = append(changed, fb)
		if o := old[p]; o == nil || o.iface != fb.iface {
			structural = true
		}
	}
	ordered := b.orderedFiles(sameFiles, changed) // update_build.go
	if structural || b.locs == nil {
		b.tables(ordered)
	} else {
		b.patchTables(old, changed)
	}
	b.pyArgs = b.nextArgIndex(old, changed, sameFiles) // flow_args.go
	affected := changed
	switch {
	case structural && sameFiles:
		// An interface changed: re-resolve the changed files and every file
		// that can see them (importers, transitively; Go package siblings).
		affected = b.dependents(changed, ordered)
	case structural:
		affected = ordered
	}
	// Files whose parameters take values from call sites in the affected
	// files (flow_args.go): resolved again, assembled from scratch.
	argDeps := b.argDependents(affected, old)
	affected = append(affected, argDeps...)
	sort.Slice(affected, func(i, j int) bool { return affected[i].fd.Path < affected[j].fd.Path })
	// Every affected file gets its fresh result before any scope is built:
	// building one file's scope can build another's (a re-exported name),
	// whose import edges must land in the result that is kept.
	for _, fb := range affected {
		fb.scopeState = 0
		fb.scope = nil
		fb.topScope = nil
		fb.res = newResult()
	}
	for _, fb := range affected {
		b.ensureScope(fb)
	}
	// Resolution reads the shared tables and writes only per-file results,
	// so files are resolved in parallel.
	parallelFiles(affected, func(fb *fileBuild) {
		fb.inh = newResult()
		b.resolveRefs(fb, fb.inh, true)
	})
	// An edit that changed no interface keeps the project-wide tables
	// derived from every file when the changed files add the same to them
	// (update_build.go); otherwise they are derived again.
	patch := !structural && sameFiles && b.bases != nil
	if !patch || !sameInheritance(changed, old) {
		b.bases = map[string][]string{}
		b.extBase = map[string]bool{}
		for _, fb := range ordered {
			if fb.inh == nil {
				continue
			}
			for _, cb := range fb.inh.bases {
				if !slices.Contains(b.bases[cb[0]], cb[1]) {
					b.bases[cb[0]] = append(b.bases[cb[0]], cb[1])
				}
			}
			for _, c := range fb.inh.extBases {
				b.extBase[c] = true
			}
		}
		b.subs = invertBases(b.bases)
		patch = false
	}
	if !patch || !samePyMethods(changed, old) {
		b.pyNames = pyMemberNames(ordered)
	}
	b.hier = newHierMemo() // hierarchy walks kept while resolving (flow_memo.go)
	var trim *finalTrim
	if b.final && len(affected) == len(ordered) {
		trim = newFinalTrim(affected, b.locs) // build_final.go
		// Built now, with the argument records apart, so that each file's
		// references can go once it is resolved (flow_args.go).
		b.argIndexSplit()
		trim.spill(b.root) // the references wait on disk for their file's turn (refs_spill.go)
		if b.testSpilled != nil && trim.refs != nil {
			b.testSpilled(trim.refs)
		}
	}
	restoreSpillGC()
	// The collector is tightened for the last part of the resolution,
	// where the live heap nears its peak (build_gc.go).
	var resolved atomic.Int64
	var gcOnce sync.Once
	restoreGC := func() {}
	tightenAt := int64(float64(len(affected)) * resolveGCFrom)
	parallelFiles(affected, func(fb *fileBuild) {
		trim.load(fb)
		b.resolveRefs(fb, fb.res, false)
		fb.inh.doneResolving()
		fb.res.doneResolving()
		trim.done(fb)
		if resolved.Add(1) >= tightenAt {
			gcOnce.Do(func() { restoreGC = tightenResolveGCIfLarge() })
		}
	})
	restoreGC()
	if err := trim.failure(); err != nil {
		b.hier = nil
		return nil, err
	}
	if b.testResolved != nil {
		b.testResolved(b)
	}
	b.hier = nil
	prevGo := b.goEdges
	b.goEdges = b.goEdgesFor(ordered, changed, old, patch && sameGoTypes(changed, old)) // update_build.go
	var g *Graph
	if !structural && sameFiles && len(argDeps) == 0 {
		g = b.assemblePatch(b.last, ordered, changed, old, prevGo, env) // update_assemble.go
	}
	if g == nil {
		if b.final {
			b.dropResolveState(ordered) // build_assemble.go
		}
		g = b.assemble(ordered, env)
	} else {
		b.fastBuilds++
	}
	b.last = g
	b.lastPkgs = b.packageNodes()
	return g, nil
}

// dependents returns the changed files plus every file whose resolution can
// depend on them: importers (from their resolved import edges), transitively,
// and files sharing a module key (Go packages).
func (b *builder) dependents(changed, ordered []*fileBuild) []*fileBuild {
	importers := map[string][]*fileBuild{} // imported file ID → importers
	for _, fb := range ordered {
		if fb.res == nil {
			continue
		}
		for _, e := range fb.res.edges {
			if e.Kind == EdgeImports {
				importers[e.To] = append(importers[e.To], fb)
			}
		}
	}
	seen := map[*fileBuild]bool{}
	queue := append([]*fileBuild(nil), changed...)
	for _, fb := range queue {
		seen[fb] = true
	}
	// Files the changed ones import (not their importers): see flowDependents.
	var extra []*fileBuild
	for _, fb := range changed {
		extra = append(extra, b.flowDependents(fb)...)
	}

	for i := 0; i < len(queue); i++ {
		fb := queue[i]
		next := importers[fb.fileID]
		if fb.lang != nil && fb.lang.sharedScope {
			next = append(next, b.modules[modKey(fb.lang.family, fb.key)]...)
		}
		for _, d := range next {
			if !seen[d] {
				seen[d] = true
				queue = append(queue, d)
			}
		}
	}
	for _, fb := range extra {
		if !seen[fb] {
			seen[fb] = true
			queue = append(queue, fb)
		}
	}
	return queue
}

// namesModules reports files whose presence or content changes how other
// files are named as modules.
func namesModules(p string) bool {
	base := path.Base(p)
	return base == "go.mod" || base == "__init__.py" || base == "__init__.pyi"
}

// parallelFiles runs fn for every file on all CPUs (inline when few).
func parallelFiles(fbs []*fileBuild, fn func(*fileBuild)) {
	workers := min(runtime.NumCPU(), len(fbs)/16+1)
	if workers <= 1 {
		for _, fb := range fbs {
			fn(fb)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(fbs) {
					return
				}
				fn(fbs[i])
			}
		}()
	}
	wg.Wait()
}
