package codegraph

import "hash/maphash"

// strTable interns strings while encoding: each distinct string gets the
// next index, in the order first seen.
//
// Its lookup is an open-addressing table of 8-byte slots over strs (the
// string's hash tag and index; linear probing, at most three quarters
// full), about 12 bytes a string where a map[string]uint32 took 42: 17
// instead of 58 MB on pyenv's 1.39 M strings, held through the whole
// snapshot write (and between rewrites while a project is edited,
// encCache).
type strTable struct {
	strs  []string
	slots []uint64 // tag<<32 | index+1 per used slot, 0 when free; nil once lookups are over
	seed  maphash.Seed
	used  []uint64 // when not nil, a bit per string set by id (encCache)
}

// newStrTable returns an empty table sized for about hint strings.
func newStrTable(hint int) *strTable {
	n := 1024
	for n*3/4 < hint {
		n <<= 1
	}
	return &strTable{slots: make([]uint64, n), seed: maphash.MakeSeed()}
}

// id returns the index of s, adding it when new.
func (t *strTable) id(s string) uint64 {
	h := maphash.String(t.seed, s)
	tag := h >> 32
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for {
		sl := t.slots[i]
		if sl == 0 {
			break
		}
		if sl>>32 == tag {
			if x := uint32(sl) - 1; t.strs[x] == s {
				if t.used != nil {
					t.mark(x)
				}
				return uint64(x)
			}
		}
		i = (i + 1) & mask
	}
	x := uint32(len(t.strs))
	t.strs = append(t.strs, s)
	t.slots[i] = tag<<32 | (uint64(x) + 1)
	if len(t.strs) > len(t.slots)/4*3 {
		t.grow()
	}
	if t.used != nil {
		t.mark(x)
	}
	return uint64(x)
}

// grow doubles the slots and places every string again.
func (t *strTable) grow() {
	t.slots = make([]uint64, len(t.slots)*2)
	mask := uint64(len(t.slots) - 1)
	for x, s := range t.strs {
		h := maphash.String(t.seed, s)
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = h>>32<<32 | (uint64(x) + 1)
	}
}

// mark records that string i is used.
func (t *strTable) mark(i uint32) {
	for int(i/64) >= len(t.used) {
		t.used = append(t.used, 0)
	}
	t.used[i/64] |= 1 << (i % 64)
}

// nodeIndex finds a node's position in a graph's node list: the one its
// ID map gives, or for a node another node's ID shadows (several nodes
// may share an ID; the map keeps the last), a small map of those. A map
// of every node by pointer took 10 MB on pyenv while the snapshot was
// written.
type nodeIndex struct {
	byID  map[string]int32
	nodes []*Node
	dup   map[*Node]uint32
}

func newNodeIndex(g *Graph) *nodeIndex {
	x := &nodeIndex{byID: g.byID, nodes: g.nodes}
	for i, n := range g.nodes {
		if j, ok := g.byID[n.ID]; !ok || j != int32(i) {
			if x.dup == nil {
				x.dup = map[*Node]uint32{}
			}
			x.dup[n] = uint32(i)
		}
	}
	return x
}

// of returns n's position, false when n is not in the list.
func (x *nodeIndex) of(n *Node) (uint32, bool) {
	if j, ok := x.byID[n.ID]; ok && int(j) < len(x.nodes) && x.nodes[j] == n {
		return uint32(j), true
	}
	i, ok := x.dup[n]
	return i, ok
}
