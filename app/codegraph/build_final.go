package codegraph

import (
	"slices"
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
//   - Outside Go, the edges are held packed (packedEdge, 40 bytes where an
//     Edge takes 56) until assemble unpacks them: ≈ 1 M edges on pyenv's
//     stdlib.
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
	next   int  // files[:next] are all done
	count  int  // unresolved samples in files[:next]
	full   bool // files[:next] hold the whole sample: later files' are not read
}

// newFinalTrim returns the trim of a resolution of files, given in the
// order assemble reads them.
func newFinalTrim(files []*fileBuild) *finalTrim {
	t := &finalTrim{files: files, at: make(map[*fileBuild]int, len(files)), doneAt: make([]bool, len(files))}
	for i, fb := range files {
		t.at[fb] = i
	}
	return t
}

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
		case pack && r.packEdges():
		case cap(r.edges)-len(r.edges) > len(r.edges)/8:
			r.edges = slices.Clone(r.edges)
		}
	}
	// Nothing reads the file's references any more: its own resolution is
	// done, and other files' argument sites read fb.argRefs (the index was
	// built with them apart, argIndexSplit). The cache was written before
	// the build.
	if fb.fd != nil {
		fb.fd.Refs = refList{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.at[fb]
	t.doneAt[i] = true
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

// dropSample drops fb's samples of unresolved references (their counts stay).
func dropSample(fb *fileBuild) {
	for _, r := range []*fileResult{fb.inh, fb.res} {
		if r != nil {
			r.sample = nil
		}
	}
}

// packedEdge is a resolved edge held from the end of its file's resolution
// to the assembly of the last build: its kind as a small code (edgeKindCode)
// and its line as 32 bits (references' lines are).
type packedEdge struct {
	from, to string
	line     int32
	kind     uint8
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

// packEdges replaces r's edges by their packed form, in the same order;
// it changes nothing and returns false when an edge does not fit one (a
// kind or line a packedEdge cannot hold).
func (r *fileResult) packEdges() bool {
	if len(r.edges) == 0 {
		r.edges = nil
		return true
	}
	p := make([]packedEdge, len(r.edges))
	for i, e := range r.edges {
		k, ok := edgeKindCode(e.Kind)
		if !ok || e.Line != int(int32(e.Line)) {
			return false
		}
		p[i] = packedEdge{from: e.From, to: e.To, line: int32(e.Line), kind: k}
	}
	r.packed, r.edges = p, nil
	return true
}

// appendEdges appends r's edges, packed or not, to edges.
func (r *fileResult) appendEdges(edges []Edge) []Edge {
	edges = append(edges, r.edges...)
	kinds := edgeKinds()
	for _, p := range r.packed {
		edges = append(edges, Edge{From: p.from, To: p.to, Kind: kinds[p.kind], Line: int(p.line)})
	}
	return edges
}
