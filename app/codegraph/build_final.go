package codegraph

import (
	"slices"
	"sort"
	"strings"
	"sync"
)

// finalTrim releases, while the last build (builder.final) resolves, what
// each resolved file's result holds beyond what the assembly of that build
// reads. The end of resolution is the peak of a cold index: every file's
// tables are still held there, so what is dropped file by file as the
// files are done is memory the peak does not need.
//
//   - The result's edge list is copied to its length: grown by append, it
//     had up to twice the room (pyenv's stdlib: ≈ 30 MB of slack).
//   - Outside Go, the edges are held packed (packedEdge, 16 bytes where an
//     Edge takes 56: its ends as node numbers) until assemble unpacks them:
//     ≈ 1.2 M edges on pyenv's stdlib.
//   - The sample of unresolved references is dropped once the files before
//     the file, in the order the graph is assembled in, hold the report's
//     whole sample (maxUnresolvedSample): assemble takes the first ones in
//     that order, so later files' samples are never read. Each file kept
//     up to maxUnresolvedSample of them (pyenv: ≈ 16 MB in all).
//
// The graph is the same; only a build that resolves every file (a full
// build, files in assembly order) uses it.
type finalTrim struct {
	mu     sync.Mutex
	files  []*fileBuild
	at     map[*fileBuild]int
	doneAt []bool
	nums   *nodeNums // the numbers packed edges' ends take (nil: none, edges not packed)
	next   int       // files[:next] are all done
	count  int       // unresolved samples in files[:next]
	full   bool      // files[:next] hold the whole sample: later files' are not read
	left   int       // files not done yet
	refs   *refSpill // the files' references until their turn (nil: in memory)
	err    error     // the first read back of the spill that failed (load)
}

// newFinalTrim returns the trim of a resolution of files, given in the
// order assemble reads them; locs is the build's table of nodes
// (builder.locs), which packed edges' ends are numbered with.
func newFinalTrim(files []*fileBuild, locs *nodeLocs) *finalTrim {
	t := &finalTrim{files: files, at: make(map[*fileBuild]int, len(files)), doneAt: make([]bool, len(files)), left: len(files)}
	for i, fb := range files {
		t.at[fb] = i
	}
	if locs != nil && len(files) >= packNumsMinFiles {
		t.nums = newNodeNums(files, t.at, locs)
	}
	return t
}

// packNumsMinFiles is the project size (files) from which a final build
// packs its edges: numbering them cost ≈ 2 % of python3.11's cold index
// (2 k files, 130 MB peak, where the memory does not matter), against
// ≈ 21 MB less live heap at the end of pyenv's resolution (14 k files).
const packNumsMinFiles = 4096

// done is called once fb is resolved (from any goroutine; t may be nil).
func (t *finalTrim) done(fb *fileBuild) {
	if t == nil {
		return
	}
	// Go's edges are read again after resolution (iface_go.go's dispatch).
	pack := fb.lang != nil && fb.lang.family != "go"
	for _, r := range []*fileResult{fb.inh, fb.res} {
		switch {
		case r == nil:
		case pack && r.packEdges(t.nums):
		case cap(r.edges)-len(r.edges) > len(r.edges)/8:
			r.edges = slices.Clone(r.edges)
		}
	}
	// Nothing reads the file's references any more: its own resolution is
	// done, and other files' argument sites read fb.argRefs (the index was
	// built with them apart, argIndexSplit). The cache was written before
	// the build.
	if fb.fd != nil {
		t.refs.release(fb) // (read back from the spill file: its array is reused)
		fb.fd.Refs = refList{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.at[fb]
	t.doneAt[i] = true
	if t.refs != nil && !t.full && fb.res != nil {
		// The sample's names are parts of the references read back: a
		// kept one would keep them all (refs_spill.go).
		for j := range fb.res.sample {
			fb.res.sample[j].Name = strings.Clone(fb.res.sample[j].Name)
		}
	}
	if t.left--; t.left == 0 {
		t.refs.close()
		t.refs = nil
		t.nums.doneNumbering()
	}
	if t.full {
		dropSample(fb)
		return
	}
	for t.next < len(t.files) && t.doneAt[t.next] {
		f := t.files[t.next]
		t.next++
		for _, r := range []*fileResult{f.inh, f.res} {
			if r != nil {
				t.count += len(r.sample)
			}
		}
		if t.count >= maxUnresolvedSample {
			t.full = true
			// Files done out of order, after this prefix: not read either.
			for j := t.next; j < len(t.files); j++ {
				if t.doneAt[j] {
					dropSample(t.files[j])
				}
			}
			return
		}
	}
}

// spill moves the files' references to a spill file in the project's
// .codeloom folder under root, from which load reads each back (refs_spill.go);
// they stay in memory when there is no such folder or it cannot be
// written. Called once every pass that reads other files' references is
// done (t may be nil: no spill).
func (t *finalTrim) spill(root string) {
	if t == nil {
		return
	}
	if d := spillDir(root); d != "" {
		t.refs = spillRefs(d, t.files)
	}
}

// failure is the error that makes the resolution incomplete (a spilled
// file's references that could not be read back), once every file is done;
// nil when there is none (t may be nil).
func (t *finalTrim) failure() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// load reads fb's references back before it is resolved (t may be nil),
// keeping the first failure for failure.
func (t *finalTrim) load(fb *fileBuild) {
	if t == nil {
		return
	}
	if err := t.refs.load(fb); err != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.err == nil {
			t.err = err
		}
	}
}

// dropSample drops fb's samples of unresolved references (their counts stay).
func dropSample(fb *fileBuild) {
	for _, r := range []*fileResult{fb.inh, fb.res} {
		if r != nil {
			r.sample = nil
		}
	}
}

// packedEdge is a resolved edge held from the end of its file's resolution
// to the assembly of the last build: its ends as node numbers (nodeNums),
// its kind as a small code (edgeKindCode) and its line as 32 bits
// (references' lines are). 16 bytes, where two ID strings made 40: pyenv's
// stdlib holds ≈ 1.2 M of them at the end of resolution.
type packedEdge struct {
	from, to uint32
	line     int32
	kind     uint8
}

// edgePack is what a result's packed edges are read with: the build's node
// numbers, and the ends that are not a node of a file (a package, an
// external node), which an edge's end numbers extNum|i (ext[i]).
type edgePack struct {
	nums *nodeNums
	ext  []string
}

// extNum marks an end number as an index into edgePack.ext.
const extNum = 1 << 31

// nodeNums numbers the nodes of the files of the last build: file i's node
// is start[i], its definition d is start[i]+1+d. It keeps each file's ID
// list (the same arrays as fileBuild.ids, which the assembly drops before
// it reads the edges) to turn numbers back into IDs.
type nodeNums struct {
	locs   *nodeLocs          // the build's (builder.locs): ID → file and definition
	at     map[*fileBuild]int // file → index (finalTrim's)
	start  []uint32           // per file, then the total
	fileID []string
	ids    [][]string
}

// newNodeNums numbers the nodes of files (nil: too many for 31 bits).
func newNodeNums(files []*fileBuild, at map[*fileBuild]int, locs *nodeLocs) *nodeNums {
	n := &nodeNums{locs: locs, at: at, start: make([]uint32, len(files)+1),
		fileID: make([]string, len(files)), ids: make([][]string, len(files))}
	total := 0
	for i, fb := range files {
		n.start[i] = uint32(total)
		n.fileID[i], n.ids[i] = fb.fileID, fb.ids
		total += len(fb.ids) + 1
		if total >= extNum {
			return nil
		}
	}
	n.start[len(files)] = uint32(total)
	return n
}

// num returns id's number (false: not a node of these files).
func (n *nodeNums) num(id string) (uint32, bool) {
	l, ok := n.locs.get(id)
	if !ok || l.fb == nil {
		return 0, false
	}
	i, ok := n.at[l.fb]
	if !ok || int(l.idx) >= len(n.ids[i]) || (l.idx >= 0 && n.ids[i][l.idx] != id) || (l.idx < 0 && n.fileID[i] != id) {
		return 0, false // (not this build's file or definition: kept as a string)
	}
	return n.start[i] + uint32(l.idx+1), true
}

// doneNumbering lets go of what only num reads (the builder's node table):
// once every file is packed, only id is called, at the assembly, after the
// builder has dropped that table (n may be nil).
func (n *nodeNums) doneNumbering() {
	if n != nil {
		n.locs, n.at = nil, nil
	}
}

// id returns the ID of node number v.
func (n *nodeNums) id(v uint32) string {
	i := sort.Search(len(n.start)-1, func(i int) bool { return n.start[i+1] > v }) // the file whose range holds v
	if d := int(v-n.start[i]) - 1; d >= 0 {
		return n.ids[i][d]
	}
	return n.fileID[i]
}

// edgeKinds lists the kinds a packedEdge can hold, by code.
func edgeKinds() [8]EdgeKind {
	return [8]EdgeKind{EdgeContains, EdgeImports, EdgeCalls, EdgeInherits, EdgeUses, EdgeRequires, EdgeDispatches, EdgeImplements}
}

// edgeKindCode returns k's code in edgeKinds (false: another kind).
func edgeKindCode(k EdgeKind) (uint8, bool) {
	for i, c := range edgeKinds() {
		if c == k {
			return uint8(i), true
		}
	}
	return 0, false
}

// packEdges replaces r's edges by their packed form, in the same order,
// numbered by nums; it changes nothing and returns false when an edge does
// not fit one (a kind or line a packedEdge cannot hold).
func (r *fileResult) packEdges(nums *nodeNums) bool {
	if len(r.edges) == 0 {
		r.edges = nil
		return true
	}
	if nums == nil {
		return false
	}
	pk := &edgePack{nums: nums}
	var lastFrom string // edges from one definition come together
	var lastNum uint32
	end := func(id string) uint32 {
		if v, ok := nums.num(id); ok {
			return v
		}
		pk.ext = append(pk.ext, id)
		return extNum | uint32(len(pk.ext)-1)
	}
	p := make([]packedEdge, len(r.edges))
	for i, e := range r.edges {
		k, ok := edgeKindCode(e.Kind)
		if !ok || e.Line != int(int32(e.Line)) || len(pk.ext) >= extNum-2 {
			return false
		}
		if i == 0 || e.From != lastFrom {
			lastFrom, lastNum = e.From, end(e.From)
		}
		p[i] = packedEdge{from: lastNum, to: end(e.To), line: int32(e.Line), kind: k}
	}
	if len(pk.ext) > 0 {
		pk.ext = slices.Clip(pk.ext)
	}
	r.packed, r.pk, r.edges = p, pk, nil
	return true
}

// idOf returns the ID of an end number of r's packed edges.
func (pk *edgePack) idOf(v uint32) string {
	if v&extNum != 0 {
		return pk.ext[v&^extNum]
	}
	return pk.nums.id(v)
}

// appendEdges appends r's edges, packed or not, to edges.
func (r *fileResult) appendEdges(edges []Edge) []Edge {
	edges = append(edges, r.edges...)
	if len(r.packed) == 0 {
		return edges
	}
	kinds := edgeKinds()
	pk := r.pk
	var lastFrom uint32
	var from string
	for i, p := range r.packed {
		if i == 0 || p.from != lastFrom {
			lastFrom, from = p.from, pk.idOf(p.from)
		}
		edges = append(edges, Edge{From: from, To: pk.idOf(p.to), Kind: kinds[p.kind], Line: int(p.line)})
	}
	return edges
}
