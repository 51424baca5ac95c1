package codegraph

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sort"
	"unsafe"
)

// The persisted graph ("snapshot") is one flat file, .codeloom/cache/graph.snap:
//
//	magic "CLGSNAP3"
//	uint32 number of sections, then per section: uint32 id, uint32 crc32c,
//	       uint64 offset, uint64 length; then a crc32c of all of the above
//	sections, each 8-byte aligned (see secHeader …): the header (the file
//	       stamps the graph was built from, compared before anything else is
//	       read), the string table, fixed-size node and edge records, the
//	       In/Out edge index, children, an ID index, file nodes, global ranks
//	       and their order, and the rest (varints, only for a full load)
//
// Sections may lie in any order; readers go by the directory. The writer
// (persist_sink.go) writes each section as soon as it is encoded, the string
// table last (every other section adds to it), and fills in the directory,
// reserved at the start, at the end.
//
// Every string is stored once; records refer to strings and nodes by integer
// index. A full load (Open) reads the file into one buffer and makes every
// string of the graph a view of it; a query (OpenReader) maps the file and
// reads, in place, only the sections and records its answer needs, each
// section checked against its checksum on first use.
const snapMagic = "CLGSNAP3"

// errSnapshot marks a persisted graph that is unreadable (damaged, truncated,
// or written by another version): it is rebuilt, never trusted.
var errSnapshot = errors.New("persisted graph unreadable")

// fileStamp identifies one walked file's state: the snapshot is valid only
// while every file still has the stamp it had when the graph was built.
type fileStamp struct {
	rel     string
	size    int64
	modTime int64
	lang    string // language name, "" for a manifest
	eco     string // manifest ecosystem
}

// snapHeader is what decides whether a snapshot can stand for the project.
type snapHeader struct {
	version  string
	stamps   []fileStamp // sorted by rel
	walkProb []Problem   // sorted by path
	env      fileStamp   // the .env file (rel "" when absent)
}

// snapshot is a decoded persisted graph.
type snapshot struct {
	header   snapHeader
	graph    *Graph
	problems []Problem // every problem of the indexed state (walk, files, .env)
	ranks    []float64 // global PageRank by node index; nil when not stored
}

func encodeHeader(w *encoder, h *snapHeader) {
	w.s(h.version)
	w.u(uint64(len(h.stamps)))
	for _, s := range h.stamps {
		encodeStamp(w, s)
	}
	w.u(uint64(len(h.walkProb)))
	for _, p := range h.walkProb {
		w.s(p.Path)
		w.s(p.Reason)
		w.bool(p.Skipped)
	}
	encodeStamp(w, h.env)
}

func encodeStamp(w *encoder, s fileStamp) {
	w.s(s.rel)
	w.i(s.size)
	w.i(s.modTime)
	w.s(s.lang)
	w.s(s.eco)
}

// Sections of a snapshot (see the layout above). Arrays of uint32 and
// float64 are little endian and start 8-byte aligned, so a reader can use
// them in place.
const (
	secHeader    = iota + 1 // varint: version, file stamps, walk problems, .env stamp
	secStrOff               // uint32 × (strings+1): where each string starts in secStrData
	secStrData              // the bytes of every string, concatenated
	secNodes                // uint32 × nodeWords per node
	secEdges                // uint32 × edgeWords per edge
	secOutOff               // uint32 × (nodes+1): edges leaving node i are secOutEdges[off[i]:off[i+1]]
	secOutEdges             // uint32 edge indexes
	secInOff                // the same for entering edges
	secInEdges              //
	secChildOff             // uint32 × (nodes+1): children of node i (by ID position)
	secChildList            // uint32 node positions
	secByID                 // uint32 node positions (Graph.byID's) sorted by ID
	secFiles                // uint32 pairs (path string, file node) sorted by path
	secRanks                // float64 global PageRank per node (empty when not computed)
	secRankOrder            // uint32 node indexes by decreasing rank (stable)
	secRest                 // varint: children, byFile, fileNode, env, imports, globals, problems, stats
	numSections  = secRest
)

// A node record: string indexes of ID, Kind, Name, QualName, Path,
// Language, Signature, Doc, Hash, Parent, PathB64, then StartLine, EndLine,
// StartByte, EndByte.
const (
	nfID = iota
	nfKind
	nfName
	nfQual
	nfPath
	nfLang
	nfSig
	nfDoc
	nfHash
	nfParent
	nfPathB64
	nfStartLine
	nfEndLine
	nfStartByte
	nfEndByte
	nodeWords
)

// An edge record: from, to (a node position << 1, or a string index << 1 | 1
// for an ID that is not a node), kind (string index), line.
const edgeWords = 4

// dirEntrySize is one directory entry: id, crc32c (uint32), offset, length (uint64).
const dirEntrySize = 24

// Blocks in which node and edge records are made and written when they
// are not kept (a fresh encoding): the sections are never whole in memory.
const (
	nodeBlock = 1 << 14
	edgeBlock = 1 << 16
	strBlock  = 1 << 16 // bytes of string data
)

// encodeSnapshotTo serialises a graph with the header it stands for into
// w, a section at a time, each dropped once written (w lays them out),
// all but the global ranks (writeRanks). The string table is written
// last: every other section adds to it.
// With ec, it continues from the last write's string table and records
// (persist_encache.go). Some sections are views of the graph's own arrays
// (its edge index), written as they are.
func encodeSnapshotTo(w *snapSink, h *snapHeader, g *Graph, problems []Problem, ec *encCache) error {
	g = g.flatGraph() // an update's graph: its edges in one list (graph_overlay.go)
	if len(g.nodes) >= math.MaxInt32 || len(g.edges) >= math.MaxInt32 {
		return fmt.Errorf("encode graph: too large (%d nodes, %d edges)", len(g.nodes), len(g.edges))
	}
	var hw encoder
	encodeHeader(&hw, h)
	w.add(secHeader, hw.b)
	hw.b = nil

	st, prev := ec.begin(len(g.nodes))
	nodeIdx := newNodeIndex(g)
	var bad error
	u32 := func(v int) uint32 {
		if v < 0 || uint64(v) > math.MaxUint32 {
			bad = fmt.Errorf("encode graph: number %d out of range", v)
			return 0
		}
		return uint32(v)
	}
	// The records are written a block at a time; the encoder's cache
	// keeps them all (the next rewrite copies unchanged ones), else the
	// block is reused.
	keep := ec != nil
	nodes := make([]uint32, 0, min(len(g.nodes), nodeBlock)*nodeWords)
	if keep {
		nodes = make([]uint32, 0, len(g.nodes)*nodeWords)
	}
	flushed := 0
	flushNodes := func() {
		w.add(secNodes, u32Bytes(nodes[flushed:]))
		if flushed = len(nodes); !keep {
			nodes, flushed = nodes[:0], 0
		}
	}
	// Per field, the last string and its index: consecutive nodes share
	// their kind, path, language, parent and empty fields, and the table's
	// lookups (a million strings on a large project) are the encoder's
	// main cost. The indexes are the ones the table gives.
	var last [nfPathB64 + 1]struct {
		s  string
		id uint32
		ok bool
	}
	for i, n := range g.nodes {
		if len(nodes)-flushed >= nodeBlock*nodeWords {
			flushNodes()
		}
		if w := prev.words(i, n); w != nil {
			nodes = append(nodes, w...)
			continue
		}
		for f, s := range [...]string{n.ID, string(n.Kind), n.Name, n.QualName, n.Path, n.Language, n.Signature, n.Doc, n.Hash, n.Parent, n.PathB64} {
			l := &last[f]
			if !l.ok || l.s != s {
				l.s, l.id, l.ok = s, uint32(st.id(s)), true
			}
			nodes = append(nodes, l.id)
		}
		nodes = append(nodes, u32(n.StartLine), u32(n.EndLine), u32(n.StartByte), u32(n.EndByte))
	}
	flushNodes()
	// Edge ends by position, read off the rows (rank.go) rather than
	// looked up by ID.
	from, to := edgeEnds(g)
	end := func(pos int32, id string) uint32 {
		if pos >= 0 {
			return uint32(pos) << 1
		}
		return uint32(st.id(id))<<1 | 1
	}
	edges := make([]uint32, 0, min(len(g.edges), edgeBlock)*edgeWords)
	var lastKind EdgeKind
	kindID, haveKind := uint32(0), false
	for i, e := range g.edges {
		if len(edges) >= edgeBlock*edgeWords {
			w.add(secEdges, u32Bytes(edges))
			edges = edges[:0]
		}
		ef, et := end(from[i], e.From), end(to[i], e.To) // strings in the table's order: From, To, Kind
		if !haveKind || e.Kind != lastKind {
			lastKind, kindID, haveKind = e.Kind, uint32(st.id(string(e.Kind))), true
		}
		edges = append(edges, ef, et, kindID, u32(e.Line))
	}
	w.add(secEdges, u32Bytes(edges))
	from, to, edges = nil, nil, nil

	a := g.adj // made by edgeEnds
	w.add(secOutOff, i32Bytes(a.outOff))
	w.add(secOutEdges, i32Bytes(a.outEdges))
	w.add(secInOff, i32Bytes(a.inOff))
	w.add(secInEdges, i32Bytes(a.inEdges))

	// Children by the parent's ID position, children by their ID position.
	chOff := make([]uint32, len(g.nodes)+1)
	var chList []uint32
	for i, n := range g.nodes {
		chOff[i] = uint32(len(chList))
		if g.byID[n.ID] == int32(i) {
			for _, c := range g.children[n.ID] {
				if j, ok := g.byID[c.ID]; ok {
					chList = append(chList, uint32(j))
				}
			}
		}
	}
	chOff[len(g.nodes)] = uint32(len(chList))
	w.add(secChildOff, u32Bytes(chOff))
	w.add(secChildList, u32Bytes(chList))
	chOff, chList = nil, nil

	w.add(secByID, u32Bytes(ec.byIDSection(g.byID)))
	files := make([]uint32, 0, len(g.fileNode)*2)
	for _, k := range sortedKeys(g.fileNode) {
		i, ok := nodeIdx.of(g.fileNode[k])
		if !ok {
			return fmt.Errorf("encode graph: file node of %q not in the node list", k)
		}
		files = append(files, uint32(st.id(k)), i)
	}
	w.add(secFiles, u32Bytes(files))
	files = nil

	rest, err := encodeRest(g, problems, st, nodeIdx)
	if err != nil {
		return err
	}
	w.add(secRest, rest)
	rest = nil
	if bad != nil {
		return bad
	}
	nodeIdx = nil
	ec.end(st, prev, g.nodes, nodes) // keeps the table and records for the next write, or drops the lookup
	return writeStrings(w, st.strs)
}

// writeRanks writes the global ranks of the n nodes and their order;
// nothing when ranks is not one per node (not computed).
func writeRanks(w *snapSink, ranks []float64, n int, ec *encCache) error {
	if ranks != nil && len(ranks) == n {
		rb, order := ec.rankSections(ranks)
		w.add(secRanks, rb)
		w.add(secRankOrder, order)
	}
	return w.err
}

// writeStrings writes the string table: where each string starts, then
// the bytes of all, a block at a time (never one buffer of all strings:
// 62 MB on pyenv).
func writeStrings(w *snapSink, strs []string) error {
	total := 0
	for _, s := range strs {
		total += len(s)
	}
	if uint64(total) > math.MaxUint32 {
		return fmt.Errorf("encode graph: %d bytes of strings is too many", total)
	}
	offs := make([]uint32, 0, min(len(strs)+1, strBlock))
	at := uint32(0)
	for _, s := range strs {
		if len(offs) == cap(offs) {
			w.add(secStrOff, u32Bytes(offs))
			offs = offs[:0]
		}
		offs = append(offs, at)
		at += uint32(len(s))
	}
	w.add(secStrOff, u32Bytes(append(offs, at)))
	buf := make([]byte, 0, strBlock)
	for _, s := range strs {
		if len(buf)+len(s) > strBlock && len(buf) > 0 {
			w.add(secStrData, buf)
			buf = buf[:0]
		}
		if len(s) > strBlock {
			w.add(secStrData, unsafe.Slice(unsafe.StringData(s), len(s)))
			continue
		}
		buf = append(buf, s...)
	}
	w.add(secStrData, buf)
	return w.err
}

func align8(n int) int { return (n + 7) &^ 7 }

// u32Bytes encodes v little endian: on a little-endian machine a view of v
// (no copy; v must not change while the bytes are used).
func u32Bytes(v []uint32) []byte {
	if littleEndian() {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*4)
	}
	b := make([]byte, 0, len(v)*4)
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

// i32Bytes is u32Bytes for int32 (two's complement).
func i32Bytes(v []int32) []byte {
	if littleEndian() {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*4)
	}
	b := make([]byte, 0, len(v)*4)
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

// encodeRest writes what only the full decode needs, as varints.
func encodeRest(g *Graph, problems []Problem, st *strTable, nodeIdx *nodeIndex) ([]byte, error) {
	var rw encoder
	nodeList := func(ns []*Node) error {
		if ns == nil {
			rw.u(0)
			return nil
		}
		rw.u(uint64(len(ns)) + 1)
		for _, n := range ns {
			i, ok := nodeIdx.of(n)
			if !ok {
				return fmt.Errorf("encode graph: node %q is listed but not in the node list", n.ID)
			}
			rw.u(uint64(i))
		}
		return nil
	}
	for _, m := range []map[string][]*Node{g.children, g.byFile} {
		rw.u(uint64(len(m)))
		for _, k := range sortedKeys(m) {
			rw.u(st.id(k))
			if err := nodeList(m[k]); err != nil {
				return nil, err
			}
		}
	}
	rw.u(uint64(len(g.fileNode)))
	for _, k := range sortedKeys(g.fileNode) {
		i, ok := nodeIdx.of(g.fileNode[k])
		if !ok {
			return nil, fmt.Errorf("encode graph: file node of %q not in the node list", k)
		}
		rw.u(st.id(k))
		rw.u(uint64(i))
	}
	rw.u(uint64(len(g.envNames)))
	for _, k := range sortedKeys(g.envNames) {
		rw.u(st.id(k))
		rw.u(uint64(len(g.envNames[k])))
		for _, s := range g.envNames[k] {
			rw.u(st.id(s))
		}
	}
	rw.bool(g.envVals != nil)
	rw.u(uint64(len(g.envVals)))
	for _, k := range sortedKeys(g.envVals) {
		rw.u(st.id(k))
		rw.u(st.id(g.envVals[k]))
	}
	rw.u(uint64(len(g.imports)))
	for _, k := range sortedKeys(g.imports) {
		rw.u(st.id(k))
		sp := g.imports[k]
		if sp == nil {
			rw.u(0)
			continue
		}
		rw.u(uint64(len(sp)) + 1)
		for _, s := range sp {
			rw.u(uint64(s.start))
			rw.u(uint64(s.end))
			rw.bool(s.external)
		}
	}
	rw.u(uint64(len(g.globals)))
	for _, k := range sortedKeys(g.globals) {
		rw.u(st.id(k))
		gl := g.globals[k]
		rw.u(uint64(len(gl)))
		for _, r := range gl {
			rw.u(st.id(r.Name))
			rw.u(uint64(r.Start))
			rw.u(uint64(r.End))
		}
	}
	rw.u(uint64(len(problems)))
	for _, p := range problems {
		rw.u(st.id(p.Path))
		rw.u(st.id(p.Reason))
		rw.bool(p.Skipped)
	}
	sj, err := json.Marshal(g.stats)
	if err != nil {
		return nil, fmt.Errorf("encode graph stats: %w", err)
	}
	rw.s(string(sj))
	return rw.b, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// snapReader decodes with bounds checks: any inconsistency is errSnapshot.
type snapReader struct {
	b   []byte
	off int
	err error
}

func (r *snapReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: bad %s at byte %d", errSnapshot, what, r.off)
	}
}

func (r *snapReader) uv() uint64 { return readVarint(r, binary.Uvarint) }
func (r *snapReader) iv() int64  { return readVarint(r, binary.Varint) }

// readVarint reads one number with dec (binary.Uvarint or binary.Varint).
func readVarint[T uint64 | int64](r *snapReader, dec func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := dec(r.b[r.off:])
	if n <= 0 {
		r.fail("number")
		return 0
	}
	r.off += n
	return v
}

// count reads a length that must fit in the remaining bytes (each element
// takes at least min bytes), so a damaged length cannot make a huge
// allocation.
func (r *snapReader) count(min int) int {
	v := r.uv()
	if r.err == nil && v > uint64((len(r.b)-r.off)/max(min, 1)+1) {
		r.fail("count")
		return 0
	}
	return int(v)
}

func (r *snapReader) bytesN(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail("length")
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

// str reads a length-prefixed string as a view of the buffer.
func (r *snapReader) str() string {
	n := r.count(1)
	return bstr(r.bytesN(n))
}

func (r *snapReader) flag() bool {
	b := r.bytesN(1)
	return len(b) == 1 && b[0] != 0
}

// bstr makes a string that shares b's memory; b is never modified after
// loading (the snapshot buffer is owned by the graph).
func bstr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func decodeStamp(r *snapReader) fileStamp {
	return fileStamp{rel: r.str(), size: r.iv(), modTime: r.iv(), lang: r.str(), eco: r.str()}
}

func decodeHeader(b []byte) (*snapHeader, error) {
	r := &snapReader{b: b}
	h := &snapHeader{version: r.str()}
	h.stamps = make([]fileStamp, r.count(5))
	for i := range h.stamps {
		h.stamps[i] = decodeStamp(r)
	}
	h.walkProb = make([]Problem, r.count(3))
	for i := range h.walkProb {
		h.walkProb[i] = Problem{Path: r.str(), Reason: r.str(), Skipped: r.flag()}
	}
	h.env = decodeStamp(r)
	if r.err == nil && r.off != len(b) {
		r.fail("header end")
	}
	return h, r.err
}
