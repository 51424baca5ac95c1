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
//	magic "CLGSNAP2"
//	header  (uvarint length, then: version, the file stamps it was built from,
//	         walk problems, .env stamp) — compared before the body is decoded
//	body    (uvarint length, then: string table, nodes, edges, children,
//	         files, env, imports, globals, problems, stats, global ranks)
//	crc32c of everything before it (4 bytes, little endian)
//
// Every string is stored once in the string table; records refer to strings
// and nodes by integer index. Loading reads the file into one buffer and makes
// every string of the graph a view of it (no per-string allocation); nodes are
// one slab and edges one slice.
const snapMagic = "CLGSNAP2"

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

// snapWriter is a growable buffer with varint helpers.
type snapWriter struct{ b []byte }

func (w *snapWriter) uv(v uint64)  { w.b = binary.AppendUvarint(w.b, v) }
func (w *snapWriter) iv(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *snapWriter) str(s string) { w.uv(uint64(len(s))); w.b = append(w.b, s...) }
func (w *snapWriter) byte1(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

// strTable interns strings while encoding.
type strTable struct {
	idx  map[string]uint32
	strs []string
}

func (t *strTable) id(s string) uint64 {
	if i, ok := t.idx[s]; ok {
		return uint64(i)
	}
	i := uint32(len(t.strs))
	t.idx[s] = i
	t.strs = append(t.strs, s)
	return uint64(i)
}

func encodeHeader(w *snapWriter, h *snapHeader) {
	w.str(h.version)
	w.uv(uint64(len(h.stamps)))
	for _, s := range h.stamps {
		encodeStamp(w, s)
	}
	w.uv(uint64(len(h.walkProb)))
	for _, p := range h.walkProb {
		w.str(p.Path)
		w.str(p.Reason)
		w.byte1(p.Skipped)
	}
	encodeStamp(w, h.env)
}

func encodeStamp(w *snapWriter, s fileStamp) {
	w.str(s.rel)
	w.iv(s.size)
	w.iv(s.modTime)
	w.str(s.lang)
	w.str(s.eco)
}

// encodeSnapshot serialises a graph with the header it stands for.
func encodeSnapshot(h *snapHeader, g *Graph, problems []Problem, ranks []float64) ([]byte, error) {
	var hw snapWriter
	encodeHeader(&hw, h)

	st := &strTable{idx: make(map[string]uint32, len(g.nodes)*4)}
	nodeIdx := make(map[*Node]uint32, len(g.nodes))
	for i, n := range g.nodes {
		nodeIdx[n] = uint32(i)
	}
	// Records first (into rec), the string table is written before them.
	var rw snapWriter
	rw.b = make([]byte, 0, len(g.nodes)*24+len(g.edges)*8)
	rw.uv(uint64(len(g.nodes)))
	for _, n := range g.nodes {
		for _, s := range [...]string{n.ID, string(n.Kind), n.Name, n.QualName, n.Path, n.Language, n.Signature, n.Doc, n.Hash, n.Parent, n.PathB64} {
			rw.uv(st.id(s))
		}
		rw.iv(int64(n.StartLine))
		rw.iv(int64(n.EndLine))
		rw.iv(int64(n.StartByte))
		rw.iv(int64(n.EndByte))
	}
	// Edge endpoints: a node index (even) or, for an ID that is not a node,
	// a string index (odd).
	end := func(id string) uint64 {
		if i, ok := g.byID[id]; ok {
			return uint64(i) << 1
		}
		return st.id(id)<<1 | 1
	}
	rw.uv(uint64(len(g.edges)))
	for _, e := range g.edges {
		rw.uv(end(e.From))
		rw.uv(end(e.To))
		rw.uv(st.id(string(e.Kind)))
		rw.iv(int64(e.Line))
	}
	nodeList := func(ns []*Node) error {
		if ns == nil {
			rw.uv(0)
			return nil
		}
		rw.uv(uint64(len(ns)) + 1)
		for _, n := range ns {
			i, ok := nodeIdx[n]
			if !ok {
				return fmt.Errorf("encode graph: node %q is listed but not in the node list", n.ID)
			}
			rw.uv(uint64(i))
		}
		return nil
	}
	for _, m := range []map[string][]*Node{g.children, g.byFile} {
		rw.uv(uint64(len(m)))
		for _, k := range sortedKeys(m) {
			rw.uv(st.id(k))
			if err := nodeList(m[k]); err != nil {
				return nil, err
			}
		}
	}
	rw.uv(uint64(len(g.fileNode)))
	for _, k := range sortedKeys(g.fileNode) {
		i, ok := nodeIdx[g.fileNode[k]]
		if !ok {
			return nil, fmt.Errorf("encode graph: file node of %q not in the node list", k)
		}
		rw.uv(st.id(k))
		rw.uv(uint64(i))
	}
	rw.uv(uint64(len(g.envNames)))
	for _, k := range sortedKeys(g.envNames) {
		rw.uv(st.id(k))
		rw.uv(uint64(len(g.envNames[k])))
		for _, s := range g.envNames[k] {
			rw.uv(st.id(s))
		}
	}
	rw.byte1(g.envVals != nil)
	rw.uv(uint64(len(g.envVals)))
	for _, k := range sortedKeys(g.envVals) {
		rw.uv(st.id(k))
		rw.uv(st.id(g.envVals[k]))
	}
	rw.uv(uint64(len(g.imports)))
	for _, k := range sortedKeys(g.imports) {
		rw.uv(st.id(k))
		sp := g.imports[k]
		if sp == nil {
			rw.uv(0)
			continue
		}
		rw.uv(uint64(len(sp)) + 1)
		for _, s := range sp {
			rw.uv(uint64(s.start))
			rw.uv(uint64(s.end))
			rw.byte1(s.external)
		}
	}
	rw.uv(uint64(len(g.globals)))
	for _, k := range sortedKeys(g.globals) {
		rw.uv(st.id(k))
		gl := g.globals[k]
		rw.uv(uint64(len(gl)))
		for _, r := range gl {
			rw.uv(st.id(r.Name))
			rw.uv(uint64(r.Start))
			rw.uv(uint64(r.End))
		}
	}
	rw.uv(uint64(len(problems)))
	for _, p := range problems {
		rw.uv(st.id(p.Path))
		rw.uv(st.id(p.Reason))
		rw.byte1(p.Skipped)
	}
	sj, err := json.Marshal(g.stats)
	if err != nil {
		return nil, fmt.Errorf("encode graph stats: %w", err)
	}
	rw.str(string(sj))
	if ranks != nil && len(ranks) == len(g.nodes) {
		rw.uv(uint64(len(ranks)))
		for _, r := range ranks {
			rw.b = binary.LittleEndian.AppendUint64(rw.b, math.Float64bits(r))
		}
	} else {
		rw.uv(0)
	}

	// Assemble: magic, header, body (string table + records), checksum.
	total := 0
	for _, s := range st.strs {
		total += len(s)
	}
	var bw snapWriter
	bw.b = make([]byte, 0, total+len(st.strs)*2+len(rw.b)+16)
	bw.uv(uint64(len(st.strs)))
	bw.uv(uint64(total))
	for _, s := range st.strs {
		bw.uv(uint64(len(s)))
	}
	for _, s := range st.strs {
		bw.b = append(bw.b, s...)
	}
	bw.b = append(bw.b, rw.b...)

	out := make([]byte, 0, len(snapMagic)+len(hw.b)+len(bw.b)+24)
	out = append(out, snapMagic...)
	out = binary.AppendUvarint(out, uint64(len(hw.b)))
	out = append(out, hw.b...)
	out = binary.AppendUvarint(out, uint64(len(bw.b)))
	out = append(out, bw.b...)
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
	return out, nil
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

func (r *snapReader) uv() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail("number")
		return 0
	}
	r.off += n
	return v
}

func (r *snapReader) iv() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
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

// splitSnapshot checks the magic and checksum and returns the header and
// body bytes.
func splitSnapshot(data []byte) (header, body []byte, err error) {
	if len(data) < len(snapMagic)+4 || string(data[:len(snapMagic)]) != snapMagic {
		return nil, nil, fmt.Errorf("%w: not a snapshot of this version", errSnapshot)
	}
	payload := data[:len(data)-4]
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, nil, fmt.Errorf("%w: checksum mismatch (damaged or cut off)", errSnapshot)
	}
	r := &snapReader{b: payload, off: len(snapMagic)}
	header = r.bytesN(r.count(1))
	body = r.bytesN(r.count(1))
	if r.err == nil && r.off != len(payload) {
		r.fail("trailing bytes")
	}
	return header, body, r.err
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

// decodeBody rebuilds the graph of root from a snapshot body. The graph's
// strings are views of body, which must not change afterwards.
func decodeBody(root string, body []byte) (*snapshot, error) {
	r := &snapReader{b: body}
	nStr := r.count(1)
	total := r.count(1)
	lens := make([]int, nStr)
	for i := range lens {
		lens[i] = r.count(1)
	}
	data := r.bytesN(total)
	if r.err != nil {
		return nil, r.err
	}
	strs := make([]string, nStr)
	off := 0
	for i, n := range lens {
		if n > len(data)-off {
			return nil, fmt.Errorf("%w: string table overruns", errSnapshot)
		}
		strs[i] = bstr(data[off : off+n])
		off += n
	}
	s := func() string {
		i := r.uv()
		if i >= uint64(len(strs)) {
			r.fail("string index")
			return ""
		}
		return strs[i]
	}
	nNodes := r.count(15)
	slab := make([]Node, nNodes)
	nodes := make([]*Node, nNodes)
	for i := range slab {
		n := &slab[i]
		n.ID, n.Kind, n.Name, n.QualName, n.Path, n.Language = s(), Kind(s()), s(), s(), s(), s()
		n.Signature, n.Doc, n.Hash, n.Parent, n.PathB64 = s(), s(), s(), s(), s()
		n.StartLine, n.EndLine, n.StartByte, n.EndByte = int(r.iv()), int(r.iv()), int(r.iv()), int(r.iv())
		nodes[i] = n
	}
	node := func() *Node {
		i := r.uv()
		if i >= uint64(nNodes) {
			r.fail("node index")
			return nil
		}
		return nodes[i]
	}
	end := func() (string, int32) {
		v := r.uv()
		if v&1 == 0 {
			if v>>1 >= uint64(nNodes) {
				r.fail("edge end")
				return "", -1
			}
			return nodes[v>>1].ID, int32(v >> 1)
		}
		if v>>1 >= uint64(len(strs)) {
			r.fail("edge end")
			return "", -1
		}
		return strs[v>>1], -1
	}
	nEdges := r.count(4)
	edges := make([]Edge, nEdges)
	from, to := make([]int32, nEdges), make([]int32, nEdges)
	for i := range edges {
		e := &edges[i]
		e.From, from[i] = end()
		e.To, to[i] = end()
		e.Kind, e.Line = EdgeKind(s()), int(r.iv())
	}
	if r.err != nil {
		return nil, r.err
	}
	readLists := func() map[string][]*Node {
		n := r.count(2)
		m := make(map[string][]*Node, n)
		for k := 0; k < n && r.err == nil; k++ {
			key := s()
			c := r.count(1)
			if c == 0 {
				m[key] = nil
				continue
			}
			ns := make([]*Node, c-1)
			for j := range ns {
				ns[j] = node()
			}
			m[key] = ns
		}
		return m
	}
	g := &graphParts{root: root, nodes: nodes, edges: edges, from: from, to: to}
	g.children = readLists()
	g.byFile = readLists()
	nf := r.count(2)
	g.fileNode = make(map[string]*Node, nf)
	for k := 0; k < nf && r.err == nil; k++ {
		key := s()
		g.fileNode[key] = node()
	}
	ne := r.count(2)
	g.envNames = make(map[string][]string, ne)
	for k := 0; k < ne && r.err == nil; k++ {
		key := s()
		names := make([]string, r.count(1))
		for j := range names {
			names[j] = s()
		}
		g.envNames[key] = names
	}
	hasVals := r.flag()
	nv := r.count(2)
	if hasVals {
		g.envVals = make(map[string]string, nv)
	}
	for k := 0; k < nv && r.err == nil; k++ {
		key := s()
		v := s()
		if g.envVals != nil {
			g.envVals[key] = v
		}
	}
	ni := r.count(2)
	g.imports = make(map[string][]importSpan, ni)
	for k := 0; k < ni && r.err == nil; k++ {
		key := s()
		c := r.count(3)
		if c == 0 {
			g.imports[key] = nil
			continue
		}
		sp := make([]importSpan, c-1)
		for j := range sp {
			sp[j] = importSpan{start: uint32(r.uv()), end: uint32(r.uv()), external: r.flag()}
		}
		g.imports[key] = sp
	}
	ng := r.count(2)
	g.globals = make(map[string][]globalRec, ng)
	for k := 0; k < ng && r.err == nil; k++ {
		key := s()
		gl := make([]globalRec, r.count(3))
		for j := range gl {
			gl[j] = globalRec{Name: s(), Start: uint32(r.uv()), End: uint32(r.uv())}
		}
		g.globals[key] = gl
	}
	snap := &snapshot{}
	snap.problems = make([]Problem, r.count(3))
	for j := range snap.problems {
		snap.problems[j] = Problem{Path: s(), Reason: s(), Skipped: r.flag()}
	}
	sj := r.bytesN(r.count(1))
	if r.err == nil {
		if err := json.Unmarshal(sj, &g.stats); err != nil {
			return nil, fmt.Errorf("%w: stats: %v", errSnapshot, err)
		}
	}
	if nr := r.count(8); nr > 0 {
		if nr != nNodes {
			r.fail("rank count")
		}
		raw := r.bytesN(nr * 8)
		if r.err == nil {
			snap.ranks = make([]float64, nr)
			for j := range snap.ranks {
				snap.ranks[j] = math.Float64frombits(binary.LittleEndian.Uint64(raw[j*8:]))
			}
		}
	}
	if r.err == nil && r.off != len(body) {
		r.fail("body end")
	}
	if r.err != nil {
		return nil, r.err
	}
	snap.graph = newGraphFromParts(g)
	return snap, nil
}
