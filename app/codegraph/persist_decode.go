package codegraph

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"unsafe"
)

// snapSections is a snapshot's directory over its bytes (a heap buffer or a
// read-only mapping). Each section's checksum is verified on its first use,
// so a reader that needs a few sections reads only those. Not safe for
// concurrent use.
type snapSections struct {
	data    []byte
	off, n  [numSections + 1]int
	crc     [numSections + 1]uint32
	checked [numSections + 1]bool
}

// parseSnapshot checks the magic and the directory (its checksum, and that
// every section lies inside data) without reading any section.
func parseSnapshot(data []byte) (*snapSections, error) {
	dirEnd := len(snapMagic) + 4 + numSections*dirEntrySize
	if len(data) < dirEnd+4 || string(data[:len(snapMagic)]) != snapMagic {
		return nil, fmt.Errorf("%w: not a snapshot of this version (or cut off)", errSnapshot)
	}
	if binary.LittleEndian.Uint32(data[len(snapMagic):]) != numSections {
		return nil, fmt.Errorf("%w: section count", errSnapshot)
	}
	if crc32.Checksum(data[:dirEnd], castagnoli) != binary.LittleEndian.Uint32(data[dirEnd:]) {
		return nil, fmt.Errorf("%w: directory checksum mismatch (damaged)", errSnapshot)
	}
	s := &snapSections{data: data}
	p := len(snapMagic) + 4
	for i := 1; i <= numSections; i++ {
		e := data[p : p+dirEntrySize]
		p += dirEntrySize
		off, n := binary.LittleEndian.Uint64(e[8:]), binary.LittleEndian.Uint64(e[16:])
		if binary.LittleEndian.Uint32(e) != uint32(i) || off%8 != 0 || off > uint64(len(data)) || n > uint64(len(data))-off {
			return nil, fmt.Errorf("%w: section %d out of bounds (cut off?)", errSnapshot, i)
		}
		s.off[i], s.n[i], s.crc[i] = int(off), int(n), binary.LittleEndian.Uint32(e[4:])
	}
	return s, nil
}

// section returns section id's bytes after checking its checksum once.
func (s *snapSections) section(id int) ([]byte, error) {
	b := s.data[s.off[id] : s.off[id]+s.n[id]]
	if !s.checked[id] {
		if crc32.Checksum(b, castagnoli) != s.crc[id] {
			return nil, fmt.Errorf("%w: section %d checksum mismatch (damaged)", errSnapshot, id)
		}
		s.checked[id] = true
	}
	return b, nil
}

// words returns section id as uint32s (in place when the machine is little
// endian and the bytes aligned, else a copy).
func (s *snapSections) words(id int) ([]uint32, error) {
	b, err := s.section(id)
	if err != nil {
		return nil, err
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: section %d length", errSnapshot, id)
	}
	return u32View(b), nil
}

// littleEndian reports whether the machine stores integers little endian.
func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

func u32View(b []byte) []uint32 {
	if len(b) == 0 {
		return nil
	}
	if littleEndian() && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
	}
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[i*4:])
	}
	return out
}

// i32s reinterprets words checked to be below 2^31.
func i32s(w []uint32) []int32 {
	if len(w) == 0 {
		return []int32{}
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&w[0])), len(w))
}

// checkRows checks compressed rows: n+1 non-decreasing offsets ending at
// len(list), and every list entry below limit.
func checkRows(off, list []uint32, n int, limit uint32) bool {
	if len(off) != n+1 || off[0] != 0 || int(off[n]) != len(list) {
		return false
	}
	for i := 1; i <= n; i++ {
		if off[i] < off[i-1] {
			return false
		}
	}
	for _, x := range list {
		if x >= limit {
			return false
		}
	}
	return true
}

// snapStrings returns the string table as offsets and bytes, checked.
func snapStrings(s *snapSections) (off []uint32, data []byte, err error) {
	if off, err = s.words(secStrOff); err != nil {
		return nil, nil, err
	}
	if data, err = s.section(secStrData); err != nil {
		return nil, nil, err
	}
	if len(off) == 0 || off[0] != 0 || int(off[len(off)-1]) != len(data) {
		return nil, nil, fmt.Errorf("%w: string table", errSnapshot)
	}
	for i := 1; i < len(off); i++ {
		if off[i] < off[i-1] {
			return nil, nil, fmt.Errorf("%w: string table", errSnapshot)
		}
	}
	return off, data, nil
}

// decodeSnapshot rebuilds the whole graph of root (every node, edge and
// index), for Open. The graph's strings are views of s.data, which must not
// change afterwards.
func decodeSnapshot(root string, s *snapSections) (*snapshot, error) {
	// Every section is checked, also those only a Reader uses: a damaged
	// file is rebuilt before a query could read it.
	for id := 1; id <= numSections; id++ {
		if _, err := s.section(id); err != nil {
			return nil, err
		}
	}
	soff, sdata, err := snapStrings(s)
	if err != nil {
		return nil, err
	}
	strs := make([]string, len(soff)-1)
	for i := range strs {
		strs[i] = bstr(sdata[soff[i]:soff[i+1]])
	}
	nw, err := s.words(secNodes)
	if err != nil {
		return nil, err
	}
	if len(nw)%nodeWords != 0 {
		return nil, fmt.Errorf("%w: node records", errSnapshot)
	}
	nNodes := len(nw) / nodeWords
	for i := 0; i < nNodes; i++ {
		for f := 0; f < nfStartLine; f++ {
			if nw[i*nodeWords+f] >= uint32(len(strs)) {
				return nil, fmt.Errorf("%w: node %d string index", errSnapshot, i)
			}
		}
	}
	slab := make([]Node, nNodes)
	nodes := make([]*Node, nNodes)
	for i := range slab {
		fillNode(&slab[i], nw[i*nodeWords:(i+1)*nodeWords], func(j uint32) string { return strs[j] })
		nodes[i] = &slab[i]
	}
	ew, err := s.words(secEdges)
	if err != nil {
		return nil, err
	}
	if len(ew)%edgeWords != 0 {
		return nil, fmt.Errorf("%w: edge records", errSnapshot)
	}
	nEdges := len(ew) / edgeWords
	edges := make([]Edge, nEdges)
	adj := &adjacency{}
	end := func(v uint32, i int, out bool) (string, bool) {
		if v&1 == 0 {
			if int(v>>1) >= nNodes {
				return "", false
			}
			return nodes[v>>1].ID, true
		}
		if int(v>>1) >= len(strs) {
			return "", false
		}
		id := strs[v>>1]
		m := &adj.extraIn
		if out {
			m = &adj.extraOut
		}
		if *m == nil {
			*m = map[string][]int32{}
		}
		(*m)[id] = append((*m)[id], int32(i))
		return id, true
	}
	for i := range edges {
		w := ew[i*edgeWords : (i+1)*edgeWords]
		var ok1, ok2 bool
		edges[i].From, ok1 = end(w[0], i, true)
		edges[i].To, ok2 = end(w[1], i, false)
		if !ok1 || !ok2 || w[2] >= uint32(len(strs)) {
			return nil, fmt.Errorf("%w: edge %d", errSnapshot, i)
		}
		edges[i].Kind, edges[i].Line = EdgeKind(strs[w[2]]), int(w[3])
	}
	var rows [4][]uint32
	for k, id := range [...]int{secOutOff, secOutEdges, secInOff, secInEdges} {
		if rows[k], err = s.words(id); err != nil {
			return nil, err
		}
	}
	if !checkRows(rows[0], rows[1], nNodes, uint32(nEdges)) || !checkRows(rows[2], rows[3], nNodes, uint32(nEdges)) {
		return nil, fmt.Errorf("%w: edge index", errSnapshot)
	}
	adj.outOff, adj.outEdges, adj.inOff, adj.inEdges = i32s(rows[0]), i32s(rows[1]), i32s(rows[2]), i32s(rows[3])

	rest, err := s.section(secRest)
	if err != nil {
		return nil, err
	}
	g := &graphParts{root: root, nodes: nodes, edges: edges, adj: adj}
	snap := &snapshot{}
	if err := decodeRest(rest, strs, nodes, g, snap); err != nil {
		return nil, err
	}
	rb, err := s.section(secRanks)
	if err != nil {
		return nil, err
	}
	if len(rb) > 0 {
		if len(rb) != nNodes*8 {
			return nil, fmt.Errorf("%w: rank count", errSnapshot)
		}
		snap.ranks = make([]float64, nNodes)
		for j := range snap.ranks {
			snap.ranks[j] = math.Float64frombits(binary.LittleEndian.Uint64(rb[j*8:]))
		}
	}
	snap.graph = newGraphFromParts(g)
	return snap, nil
}

// fillNode sets a node from its record; str maps a checked string index.
func fillNode(n *Node, w []uint32, str func(uint32) string) {
	n.ID, n.Kind, n.Name, n.QualName = str(w[nfID]), Kind(str(w[nfKind])), str(w[nfName]), str(w[nfQual])
	n.Path, n.Language, n.Signature, n.Doc = str(w[nfPath]), str(w[nfLang]), str(w[nfSig]), str(w[nfDoc])
	n.Hash, n.Parent, n.PathB64 = str(w[nfHash]), str(w[nfParent]), str(w[nfPathB64])
	n.StartLine, n.EndLine, n.StartByte, n.EndByte = int(w[nfStartLine]), int(w[nfEndLine]), int(w[nfStartByte]), int(w[nfEndByte])
}

// decodeRest reads the varint section: children, byFile, fileNode, env,
// imports, globals, problems and stats.
func decodeRest(body []byte, strs []string, nodes []*Node, g *graphParts, snap *snapshot) error {
	r := &snapReader{b: body}
	s := func() string {
		i := r.uv()
		if i >= uint64(len(strs)) {
			r.fail("string index")
			return ""
		}
		return strs[i]
	}
	node := func() *Node {
		i := r.uv()
		if i >= uint64(len(nodes)) {
			r.fail("node index")
			return nil
		}
		return nodes[i]
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
	snap.problems = make([]Problem, r.count(3))
	for j := range snap.problems {
		snap.problems[j] = Problem{Path: s(), Reason: s(), Skipped: r.flag()}
	}
	sj := r.bytesN(r.count(1))
	if r.err == nil {
		if err := json.Unmarshal(sj, &g.stats); err != nil {
			return fmt.Errorf("%w: stats: %v", errSnapshot, err)
		}
	}
	if r.err == nil && r.off != len(body) {
		r.fail("end of records")
	}
	return r.err
}

// snapshotHeader decodes the header section.
func snapshotHeader(s *snapSections) (*snapHeader, error) {
	hb, err := s.section(secHeader)
	if err != nil {
		return nil, err
	}
	return decodeHeader(hb)
}

// f64View returns little-endian float64s (in place when possible).
func f64View(b []byte) []float64 {
	if len(b) < 8 {
		return nil
	}
	if littleEndian() && uintptr(unsafe.Pointer(&b[0]))%8 == 0 {
		return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8)
	}
	out := make([]float64, len(b)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[i*8:]))
	}
	return out
}
