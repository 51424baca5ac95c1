package codegraph

import (
	"encoding/binary"
	"math"
	"math/bits"
	"reflect"
	"sort"
)

// encCache carries the snapshot encoder's work from one rewrite to the
// next while a project is edited (the writes flushSnapshot makes after
// updates). An update that keeps nodes in place shares the unchanged
// files' *Node objects and the ID map with the previous graph (the patch
// path, update_assemble.go), and nodes are never modified once a graph is
// published (markRawPaths only sets PathB64 on nodes of the build that
// makes them). So:
//
//   - the string table is continued: every string keeps its index, new
//     strings are appended. Strings no record uses any longer (a changed
//     file's old hashes, docs, names) stay in the table, unused, until
//     they exceed an eighth of the used ones (at least minGarbage); the
//     write after that starts a fresh table.
//   - a node at the same position as in the last write, the same object,
//     has the same record: its words are copied, not looked up (the
//     table's map lookups were the encoder's main cost: 0.5 of 1.3 CPU-s
//     on pyenv's 315 k nodes).
//   - the ID index section (node positions sorted by ID) is reused while
//     the graph's ID map is the same map.
//
// The file written is then not byte for byte what a fresh encoding gives
// (table order, unused strings), but decodes to the same graph (tested).
// It holds the last table (map and list), node list and records: about
// 75 MB on pyenv while the project is edited; the index's own write does
// not use it and drops it. Guarded by Project.snapWriteMu.
type encCache struct {
	st      *strTable // the last write's table; nil: the next write starts afresh
	nodes   []*Node   // the last write's node list
	recs    []uint32  // and its node records, nodeWords per node
	byIDMap map[string]int32
	byID    []uint32 // secByID made from byIDMap

	ranks     []float64 // the ranks the two sections below were made from (the same slice is reused by the writer)
	rankBytes []byte
	rankOrder []uint32

	minGarbage int // unused strings always tolerated (tests lower it)
	unusedDiv  int // and up to used/unusedDiv of them (tests raise it)
	// What the last write did (tests, logs).
	fresh  bool // started a fresh table
	reused int  // node records copied
	unused int  // strings in its table no record used
}

// newEncCache returns an empty encoder state: unused strings are tolerated
// up to an eighth of the used ones, and 4096 in any case.
func newEncCache() *encCache { return &encCache{minGarbage: 4096, unusedDiv: 8} }

// prevRecs is the last write's node records, for copying unchanged ones.
type prevRecs struct {
	nodes  []*Node
	recs   []uint32
	copied int
}

// words returns the record of node n at position i when the last write
// had the same node there, else nil.
func (p *prevRecs) words(i int, n *Node) []uint32 {
	if p == nil || i >= len(p.nodes) || p.nodes[i] != n {
		return nil
	}
	p.copied++
	return p.recs[i*nodeWords : (i+1)*nodeWords]
}

// begin returns the string table to encode with (continued, with which
// strings are used tracked, or new) and the records to copy from (nil
// for a new table).
func (ec *encCache) begin(nodes int) (*strTable, *prevRecs) {
	if ec == nil || ec.st == nil {
		if ec != nil {
			ec.fresh = true
		}
		return newStrTable(nodes * 4), nil
	}
	ec.fresh = false
	st := ec.st
	st.used = make([]uint64, (len(st.strs)+63)/64)
	return st, &prevRecs{nodes: ec.nodes, recs: ec.recs}
}

// end keeps st, nodes and their records for the next write, unless too
// many of the table's strings are unused (the next write then starts
// afresh). Without a cache the table's map is dropped at once (it is
// not needed while the string bytes are copied).
func (ec *encCache) end(st *strTable, prev *prevRecs, nodes []*Node, recs []uint32) {
	if ec == nil {
		st.slots = nil
		return
	}
	ec.reused, ec.unused = 0, 0
	if prev != nil {
		ec.reused = prev.copied
		// Copied records looked nothing up: mark their strings.
		for i := 0; i+nodeWords <= len(recs); i += nodeWords {
			for _, id := range recs[i : i+nfPathB64+1] {
				st.mark(id)
			}
		}
		used := 0
		for _, w := range st.used {
			used += bits.OnesCount64(w)
		}
		ec.unused = len(st.strs) - used
		st.used = nil
		if ec.unused > max(ec.minGarbage, used/max(ec.unusedDiv, 1)) {
			st.slots = nil
			ec.st, ec.nodes, ec.recs = nil, nil, nil
			return
		}
	}
	ec.st, ec.nodes, ec.recs = st, nodes, recs
}

// byIDSection returns the node positions sorted by ID, reused from the
// last write while m is the same map (maps of a published graph are
// never written).
func (ec *encCache) byIDSection(m map[string]int32) []uint32 {
	if ec != nil && ec.byIDMap != nil && sameMap(ec.byIDMap, m) && len(ec.byID) == len(m) {
		return ec.byID
	}
	ids := sortedKeys(m)
	byID := make([]uint32, len(ids))
	for i, id := range ids {
		byID[i] = uint32(m[id])
	}
	if ec != nil {
		ec.byIDMap, ec.byID = m, byID
	}
	return byID
}

// sameMap reports whether a and b are the same map object.
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// rankSections returns the ranks section and the rank order (node indexes
// by decreasing rank, stable), reused from the last write when ranks is
// the same slice (the writer reuses ranks over unchanged arcs, and ranks
// are never modified).
func (ec *encCache) rankSections(ranks []float64) (rb []byte, order []byte) {
	if ec != nil && len(ec.ranks) == len(ranks) && len(ranks) > 0 && &ec.ranks[0] == &ranks[0] {
		return ec.rankBytes, u32Bytes(ec.rankOrder)
	}
	rb = make([]byte, 0, len(ranks)*8)
	for _, r := range ranks {
		rb = binary.LittleEndian.AppendUint64(rb, math.Float64bits(r))
	}
	ord := make([]uint32, len(ranks))
	for i := range ord {
		ord[i] = uint32(i)
	}
	sort.SliceStable(ord, func(i, j int) bool { return ranks[ord[i]] > ranks[ord[j]] })
	if ec != nil {
		ec.ranks, ec.rankBytes, ec.rankOrder = ranks, rb, ord
	}
	return rb, u32Bytes(ord)
}
