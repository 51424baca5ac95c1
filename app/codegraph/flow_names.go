package codegraph

import (
	"hash/maphash"
	"iter"
	"slices"
)

// A file's scope tables (nested definitions, locals, flow sources and type
// hints), keyed by integers: each name the tables hold is interned once
// into a per-file symbol, and one table of rows is keyed by (symbol,
// scope, attr). Binding a name walks the scopes from the inner
// definition out and asks each level for its definition, local, flow
// sources and hints: that was up to four map lookups hashing the name
// each time (struct keys holding the name; Bloom filters skipped the
// tables that could not hold it), and the string-keyed maps, a slice per
// key, were a third of the live heap at the end of a pyenv resolution.
// Now the name is hashed once (a miss answers "not here" for every table:
// no walk), each level is one search among the symbol's rows, and the flow
// sources and hints are stored in one flat slab each per file (fb.flow,
// fb.hints), laid out row by row.

// scopeTab is a file's scope tables. Its rows are grouped by symbol
// (symbol s's are rows[symRow[s]:symRow[s+1]], ordered by key): a row is
// found by the symbol of its name, then among that symbol's rows (one for
// most symbols: pyenv's stdlib has 1.2 M rows of 0.64 M symbols, 2 400
// symbols with more than 32). The name index is an open-addressing hash
// table of int32 slots (index + 1, 0 empty; linear probing, at most half
// full): 4 bytes a slot where a Go map took 40 (map[string]int32) bytes
// an entry at its usual load, as the key is read from the name it indexes.
// A row is 16 bytes: it was 32 with its symbol, start and count of each
// slab's range, and a row index of 4-byte slots beside it (53 MB of a
// pyenv resolution's live heap; now 22).
type scopeTab struct {
	names  []string // symbol → name
	in     []uint8  // symbol → the tables holding it at some scope (inNested, …)
	symIx  []int32  // name → symbol + 1
	symRow []int32  // symbol → its first row (len(names)+1 entries)
	rows   []tabEntry
	seed   maphash.Seed
}

// The tables a symbol is in (scopeTab.in), at some scope; flow and hints
// count plain variables only (not the "self.x" attribute keys).
const (
	inNested uint8 = 1 << iota
	inLocal
	inFlow
	inHint
)

// tabEntry is one stored row: what a file's tables hold for one (scope,
// attr, name). Its flow sources and hints run from the previous row's ends
// (0 for the first row) to its own.
type tabEntry struct {
	key     uint32 // entKey(scope, attr), with entLocal when the name is bound locally there
	nested  int32  // definition index + 1 (0: none)
	flowEnd uint32 // end of its flow sources in fb.flow
	hintEnd uint32 // end of its types in fb.hints
}

// entLocal marks a row whose name is bound locally in its scope.
const entLocal = 1

// entKey packs a row's scope (-1 for the module; definition indexes are
// below 2^29) and attribute bit, above the local bit.
func entKey(scope int32, attr bool) uint32 {
	k := uint32(scope+1) << 2
	if attr {
		k |= 2
	}
	return k
}

// tabRow is a row of a file's scope tables as its readers see it; the
// zero value (found false) is no row.
type tabRow struct {
	found  bool
	local  bool
	nested int32 // definition index + 1 (0: none)
	flow   []flowSrc
	hints  []string
}

// symOf returns the symbol of name.
func (t *scopeTab) symOf(name string) (int32, bool) {
	mask := uint64(len(t.symIx) - 1)
	for i := maphash.String(t.seed, name) & mask; ; i = (i + 1) & mask {
		j := t.symIx[i]
		if j == 0 {
			return 0, false
		}
		if t.names[j-1] == name {
			return j - 1, true
		}
	}
}

// entOf returns the index of the row of (key k, symbol s).
func (t *scopeTab) entOf(k uint32, s int32) (int32, bool) {
	lo, hi := t.symRow[s], t.symRow[s+1]
	if hi-lo <= 8 {
		for i := lo; i < hi; i++ {
			if t.rows[i].key&^entLocal == k {
				return i, true
			}
		}
		return 0, false
	}
	for lo < hi {
		m := int32(uint32(lo+hi) >> 1)
		switch c := t.rows[m].key &^ entLocal; {
		case c == k:
			return m, true
		case c < k:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false
}

// view returns row i as its readers see it.
func (fb *fileBuild) view(i int32) tabRow {
	rs := fb.tab.rows
	e := &rs[i]
	var f0, h0 uint32
	if i > 0 {
		f0, h0 = rs[i-1].flowEnd, rs[i-1].hintEnd
	}
	r := tabRow{found: true, local: e.key&entLocal != 0, nested: e.nested}
	if e.flowEnd > f0 {
		r.flow = fb.flow[f0:e.flowEnd:e.flowEnd]
	}
	if e.hintEnd > h0 {
		r.hints = fb.hints[h0:e.hintEnd:e.hintEnd]
	}
	return r
}

// sym returns the symbol of name and the tables holding it (false: none
// of fb's tables holds it, at any scope).
func (fb *fileBuild) sym(name string) (int32, uint8, bool) {
	t := fb.tab
	if t == nil {
		return 0, 0, false
	}
	s, ok := t.symOf(name)
	if !ok {
		return 0, 0, false
	}
	return s, t.in[s], true
}

// rowAt returns the row of (scope, attr, symbol s) (found false: none).
func (fb *fileBuild) rowAt(scope int32, attr bool, s int32) tabRow {
	i, ok := fb.tab.entOf(entKey(scope, attr), s)
	if !ok {
		return tabRow{}
	}
	return fb.view(i)
}

// row returns the row of (scope, attr, name) (found false: none).
func (fb *fileBuild) row(scope int32, attr bool, name string) tabRow {
	s, _, ok := fb.sym(name)
	if !ok {
		return tabRow{}
	}
	return fb.rowAt(scope, attr, s)
}

// srcsOf returns the flow sources of row r (nil: none).
func (fb *fileBuild) srcsOf(r tabRow) []flowSrc { return r.flow }

// hintsOf returns the types recorded in row r (nil: none).
func (fb *fileBuild) hintsOf(r tabRow) []string { return r.hints }

// flowAt returns the flow sources into variable (scope, attr, name) and
// whether it has any.
func (fb *fileBuild) flowAt(scope int32, attr bool, name string) ([]flowSrc, bool) {
	ss := fb.srcsOf(fb.row(scope, attr, name))
	return ss, ss != nil
}

// hintsAt returns the types recorded for variable (scope, attr, name) and
// whether it has any.
func (fb *fileBuild) hintsAt(scope int32, attr bool, name string) ([]string, bool) {
	ts := fb.hintsOf(fb.row(scope, attr, name))
	return ts, ts != nil
}

// nestedAt returns the definition named name nested directly in scope.
func (fb *fileBuild) nestedAt(scope int32, name string) (int32, bool) {
	if r := fb.row(scope, false, name); r.nested > 0 {
		return r.nested - 1, true
	}
	return 0, false
}

// localAt reports that name is bound locally in definition scope.
func (fb *fileBuild) localAt(scope int32, name string) bool {
	return fb.row(scope, false, name).local
}

// tabRows yields every row of fb's tables with its key, in no particular
// order.
func (fb *fileBuild) tabRows() iter.Seq2[hintKey, tabRow] {
	return func(yield func(hintKey, tabRow) bool) {
		t := fb.tab
		if t == nil {
			return
		}
		for s := range t.names {
			for i := t.symRow[s]; i < t.symRow[s+1]; i++ {
				k := t.rows[i].key
				hk := hintKey{scope: int32(k>>2) - 1, attr: k&2 != 0, name: t.names[s]}
				if !yield(hk, fb.view(i)) {
					return
				}
			}
		}
	}
}

// changedTabScopes marks in scopes the scopes whose flow sources, hints or
// locals differ between versions o and fb of a file.
func changedTabScopes(scopes map[int32]bool, o, fb *fileBuild) {
	diff := func(a, b *fileBuild) {
		for k, r := range a.tabRows() {
			var other tabRow
			if b.tab != nil {
				other = b.row(k.scope, k.attr, k.name)
			}
			switch {
			case !other.found:
				if len(r.flow) > 0 || len(r.hints) > 0 || r.local {
					scopes[k.scope] = true
				}
			case r.local != other.local,
				!slices.Equal(r.flow, other.flow),
				!slices.Equal(r.hints, other.hints):
				scopes[k.scope] = true
			}
		}
	}
	diff(fb, o)
	diff(o, fb)
}

// flowVars yields every variable of fb's flow table with its sources, in
// no particular order.
func (fb *fileBuild) flowVars() iter.Seq2[hintKey, []flowSrc] {
	return func(yield func(hintKey, []flowSrc) bool) {
		for k, r := range fb.tabRows() {
			if len(r.flow) > 0 && !yield(k, r.flow) {
				return
			}
		}
	}
}
