package codegraph

import "hash/maphash"

// internTable interns the short texts of one file (names, argument keys)
// for extract: names repeat a lot within a file, and one copy each is all
// the records need. It replaces a map[string]string, which cost python3.11
// ~45 ms of CPU a cold index in the map's lookups, inserts and clears
// (BENCHMARKS.md, cost5): an open-addressing table whose slots carry the
// generation they were written in, so that emptying it for the next file is
// one increment, not a clear of the whole table. Not safe for concurrent
// use (one per extractor).
type internTable struct {
	seed  maphash.Seed
	slots []internSlot // a power of two, at most half full
	gen   uint32       // the current file's generation (0: never used)
	n     int          // slots of the current generation
}

// internSlot is one interned string, valid when gen is the table's.
type internSlot struct {
	gen  uint32
	hash uint32
	s    string
}

// Sizes of internTable: the slots it starts with, and the most it keeps
// from one file for the next (a huge file's table is dropped after it).
const (
	internMinSlots  = 512
	internKeepSlots = 1 << 15
)

// reset empties the table for a new file.
func (t *internTable) reset() {
	if t.slots == nil || len(t.slots) > internKeepSlots {
		if t.slots == nil {
			t.seed = maphash.MakeSeed()
		}
		t.slots = make([]internSlot, internMinSlots)
		t.gen = 1
		t.n = 0
		return
	}
	t.gen++
	if t.gen == 0 { // wrapped: old generations would look current
		clear(t.slots)
		t.gen = 1
	}
	t.n = 0
}

// find returns the interned string equal to b, if any, and b's hash (for
// add).
func (t *internTable) find(b []byte) (string, uint32, bool) {
	h := uint32(maphash.Bytes(t.seed, b))
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.gen != t.gen {
			return "", h, false
		}
		if sl.hash == h && sl.s == string(b) {
			return sl.s, h, true
		}
	}
}

// add interns s, whose hash find returned and which is not interned yet.
func (t *internTable) add(s string, h uint32) {
	if (t.n+1)*2 > len(t.slots) {
		t.grow()
	}
	t.put(internSlot{gen: t.gen, hash: h, s: s})
	t.n++
}

// put stores sl in the first free slot from its hash.
func (t *internTable) put(sl internSlot) {
	mask := len(t.slots) - 1
	i := int(sl.hash) & mask
	for t.slots[i].gen == t.gen {
		i = (i + 1) & mask
	}
	t.slots[i] = sl
}

// grow doubles the slots, keeping the current generation's strings.
func (t *internTable) grow() {
	old := t.slots
	t.slots = make([]internSlot, 2*len(old))
	for _, sl := range old {
		if sl.gen == t.gen {
			t.put(sl)
		}
	}
}
