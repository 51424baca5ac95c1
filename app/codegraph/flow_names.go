package codegraph

import (
	"hash/maphash"
	"iter"
	"math/bits"
	"slices"
)

// A file's scope tables (nested definitions, locals, flow sources and type
// hints), keyed by integers: each name the tables hold is interned once
// into a per-file symbol, and one table of rows is keyed by the packed
// (scope, attr, symbol). Binding a name walks the scopes from the inner
// definition out and asks each level for its definition, local, flow
// sources and hints: that was up to four map lookups hashing the name
// each time (struct keys holding the name; Bloom filters skipped the
// tables that could not hold it), and the string-keyed maps, a slice per
// key, were a third of the live heap at the end of a pyenv resolution.
// Now the name is hashed once (a miss answers "not here" for every table:
// no walk), each level is one probe of an integer-keyed map, and the flow
// sources and hints are stored in one flat slab each per file (fb.flow,
// fb.hints), which the rows index.

// tableFill builds a file's scope tables while fillFileBuild fills them
// (fb.fill; nil once finished into fb.tab and the slabs). Rows are made as
// names are recorded; flow sources and hints are kept in the order they
// are recorded, with their row, and laid out row by row at the end.
type tableFill struct {
	t     *scopeTab
	flows []rowSrc
	hints []rowHint
}

// rowSrc is a flow source recorded for a row.
type rowSrc struct {
	row int32
	src flowSrc
}

// rowHint is a type recorded for a row.
type rowHint struct {
	row int32
	typ string
}

// scopeTab is a file's scope tables. Its two indexes are open-addressing
// hash tables of int32 slots (index + 1, 0 empty; linear probing, at most
// half full): 4 bytes a slot where a Go map took 24 (map[uint64]int32) and
// 40 (map[string]int32) bytes an entry at its usual load, as the key is
// read from the row or name it indexes.
type scopeTab struct {
	names []string // symbol → name
	in    []uint8  // symbol → the tables holding it at some scope (inNested, …)
	rows  []tabRow
	symIx []int32 // name → symbol + 1
	rowIx []int32 // tabKey(scope, attr, symbol) → row + 1
	seed  maphash.Seed
}

// The tables a symbol is in (scopeTab.in), at some scope; flow and hints
// count plain variables only (not the "self.x" attribute keys).
const (
	inNested uint8 = 1 << iota
	inLocal
	inFlow
	inHint
)

// tabRow is what a file's tables hold for one (scope, attr, name).
type tabRow struct {
	scope  int32
	sym    int32
	nested int32  // definition index + 1 (0: none)
	flow0  uint32 // first flow source in fb.flow
	flowN  uint32 // number of flow sources (0: none)
	hint0  uint32 // first type in fb.hints
	hintN  uint32 // number of types (0: none)
	attr   bool
	local  bool
}

// tabKey packs a row's key: the scope (-1 for the module), the attribute
// bit and the symbol.
func tabKey(scope int32, attr bool, sym int32) uint64 {
	k := uint64(uint32(scope))<<32 | uint64(uint32(sym))<<1
	if attr {
		k |= 1
	}
	return k
}

// newTableFill returns an empty fill sized for about n rows.
func newTableFill(n int) *tableFill {
	t := &scopeTab{seed: maphash.MakeSeed()}
	t.rows = make([]tabRow, 0, n)
	t.rowIx = make([]int32, ixSize(n))
	t.symIx = make([]int32, ixSize(n/2))
	return &tableFill{t: t}
}

// ixSize returns the index size (a power of two) that holds n entries at
// most half full.
func ixSize(n int) int {
	size := 8
	for size < 2*n {
		size *= 2
	}
	return size
}

// hashKey spreads a row key over the index's bits (Fibonacci hashing:
// the high bits of the product are the well mixed ones).
func hashKey(k uint64) uint64 { return (k ^ k>>29) * 0x9e3779b97f4a7c15 }

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

// rowOf returns the index of the row of key k.
func (t *scopeTab) rowOf(k uint64) (int32, bool) {
	mask := uint64(len(t.rowIx) - 1)
	shift := 64 - bits.Len64(mask)
	for i := hashKey(k) >> shift & mask; ; i = (i + 1) & mask {
		j := t.rowIx[i]
		if j == 0 {
			return 0, false
		}
		if r := &t.rows[j-1]; tabKey(r.scope, r.attr, r.sym) == k {
			return j - 1, true
		}
	}
}

// addSym adds name (not in t) as a new symbol.
func (t *scopeTab) addSym(name string) int32 {
	s := int32(len(t.names))
	t.names = append(t.names, name)
	t.in = append(t.in, 0)
	if 2*len(t.names) > len(t.symIx) {
		t.symIx = make([]int32, 2*len(t.symIx))
		for i, n := range t.names {
			t.placeSym(n, int32(i))
		}
	} else {
		t.placeSym(name, s)
	}
	return s
}

func (t *scopeTab) placeSym(name string, s int32) {
	mask := uint64(len(t.symIx) - 1)
	i := maphash.String(t.seed, name) & mask
	for t.symIx[i] != 0 {
		i = (i + 1) & mask
	}
	t.symIx[i] = s + 1
}

// addRow adds a row for (scope, attr, symbol s) (not in t).
func (t *scopeTab) addRow(scope int32, attr bool, s int32) int32 {
	i := int32(len(t.rows))
	t.rows = append(t.rows, tabRow{scope: scope, sym: s, attr: attr})
	if 2*len(t.rows) > len(t.rowIx) {
		t.rowIx = make([]int32, 2*len(t.rowIx))
		for j := range t.rows {
			t.placeRow(int32(j))
		}
	} else {
		t.placeRow(i)
	}
	return i
}

func (t *scopeTab) placeRow(j int32) {
	r := &t.rows[j]
	mask := uint64(len(t.rowIx) - 1)
	shift := 64 - bits.Len64(mask)
	i := hashKey(tabKey(r.scope, r.attr, r.sym)) >> shift & mask
	for t.rowIx[i] != 0 {
		i = (i + 1) & mask
	}
	t.rowIx[i] = j + 1
}

// row returns the index of the row of (scope, attr, name), made if new;
// in marks the tables the name is recorded in (for plain names).
func (f *tableFill) row(scope int32, attr bool, name string, in uint8) int32 {
	t := f.t
	s, ok := t.symOf(name)
	if !ok {
		s = t.addSym(name)
	}
	if !attr {
		t.in[s] |= in
	}
	i, ok := t.rowOf(tabKey(scope, attr, s))
	if !ok {
		i = t.addRow(scope, attr, s)
	}
	return i
}

// addNested records definition i as name nested in parent (the first of
// several wins).
func (f *tableFill) addNested(parent int32, name string, i int32) {
	if r := &f.t.rows[f.row(parent, false, name, inNested)]; r.nested == 0 {
		r.nested = i + 1
	}
}

// addLocal records name as bound locally in definition def.
func (f *tableFill) addLocal(def int32, name string) {
	f.t.rows[f.row(def, false, name, inLocal)].local = true
}

// isLocal reports that name is bound locally in definition def.
func (f *tableFill) isLocal(def int32, name string) bool {
	t := f.t
	s, ok := t.symOf(name)
	if !ok || t.in[s]&inLocal == 0 {
		return false
	}
	i, ok := t.rowOf(tabKey(def, false, s))
	return ok && t.rows[i].local
}

// addSrc records that src flows into variable k.
func (f *tableFill) addSrc(k hintKey, src flowSrc) {
	f.flows = append(f.flows, rowSrc{f.row(k.scope, k.attr, k.name, inFlow), src})
}

// addHint records typ as a type of variable k.
func (f *tableFill) addHint(k hintKey, typ string) {
	f.hints = append(f.hints, rowHint{f.row(k.scope, k.attr, k.name, inHint), typ})
}

// finish lays out fb's flow sources and hints row by row (each row's in the
// order recorded; a type recorded twice for a row is kept once) and makes
// fb.tab the table.
func (fb *fileBuild) finishTables() {
	f := fb.fill
	fb.fill = nil
	if f == nil || len(f.t.rows) == 0 {
		return
	}
	t := f.t
	rows := t.rows
	if len(f.flows) > 0 {
		var at uint32
		for _, p := range f.flows {
			rows[p.row].flowN++
		}
		for i := range rows {
			rows[i].flow0 = at
			at += rows[i].flowN
			rows[i].flowN = 0
		}
		fb.flow = make([]flowSrc, len(f.flows))
		for _, p := range f.flows {
			r := &rows[p.row]
			fb.flow[r.flow0+r.flowN] = p.src
			r.flowN++
		}
	}
	if len(f.hints) > 0 {
		var at uint32
		for _, p := range f.hints {
			rows[p.row].hintN++
		}
		for i := range rows {
			rows[i].hint0 = at
			at += rows[i].hintN
			rows[i].hintN = 0
		}
		hs := make([]string, len(f.hints))
		dup := false
		for _, p := range f.hints {
			r := &rows[p.row]
			if slices.Contains(hs[r.hint0:r.hint0+r.hintN], p.typ) {
				dup = true
				continue
			}
			hs[r.hint0+r.hintN] = p.typ
			r.hintN++
		}
		if dup { // close the gaps the duplicates left
			n := uint32(0)
			for i := range rows {
				r := &rows[i]
				copy(hs[n:], hs[r.hint0:r.hint0+r.hintN])
				r.hint0 = n
				n += r.hintN
			}
			hs = trimSlack(hs[:n])
		}
		fb.hints = hs
	}
	t.rows = trimSlack(rows)
	t.names = trimSlack(t.names)
	t.in = trimSlack(t.in)
	if n := ixSize(len(t.rows)); n < len(t.rowIx) { // sized for more rows than were made
		t.rowIx = make([]int32, n)
		for j := range t.rows {
			t.placeRow(int32(j))
		}
	}
	if n := ixSize(len(t.names)); n < len(t.symIx) {
		t.symIx = make([]int32, n)
		for i, name := range t.names {
			t.placeSym(name, int32(i))
		}
	}
	fb.tab = t
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

// rowAt returns the row of (scope, attr, symbol s), or nil.
func (fb *fileBuild) rowAt(scope int32, attr bool, s int32) *tabRow {
	i, ok := fb.tab.rowOf(tabKey(scope, attr, s))
	if !ok {
		return nil
	}
	return &fb.tab.rows[i]
}

// row returns the row of (scope, attr, name), or nil.
func (fb *fileBuild) row(scope int32, attr bool, name string) *tabRow {
	s, _, ok := fb.sym(name)
	if !ok {
		return nil
	}
	return fb.rowAt(scope, attr, s)
}

// srcsOf returns the flow sources of row r (nil r: none).
func (fb *fileBuild) srcsOf(r *tabRow) []flowSrc {
	if r == nil || r.flowN == 0 {
		return nil
	}
	return fb.flow[r.flow0 : r.flow0+r.flowN : r.flow0+r.flowN]
}

// hintsOf returns the types recorded in row r (nil r: none).
func (fb *fileBuild) hintsOf(r *tabRow) []string {
	if r == nil || r.hintN == 0 {
		return nil
	}
	return fb.hints[r.hint0 : r.hint0+r.hintN : r.hint0+r.hintN]
}

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
	if r := fb.row(scope, false, name); r != nil && r.nested > 0 {
		return r.nested - 1, true
	}
	return 0, false
}

// localAt reports that name is bound locally in definition scope.
func (fb *fileBuild) localAt(scope int32, name string) bool {
	r := fb.row(scope, false, name)
	return r != nil && r.local
}

// keyOf returns row r's key.
func (t *scopeTab) keyOf(r *tabRow) hintKey {
	return hintKey{scope: r.scope, attr: r.attr, name: t.names[r.sym]}
}

// changedTabScopes marks in scopes the scopes whose flow sources, hints or
// locals differ between versions o and fb of a file.
func changedTabScopes(scopes map[int32]bool, o, fb *fileBuild) {
	diff := func(a, b *fileBuild) {
		if a.tab == nil {
			return
		}
		for i := range a.tab.rows {
			r := &a.tab.rows[i]
			var other *tabRow
			if b.tab != nil {
				other = b.row(r.scope, r.attr, a.tab.names[r.sym])
			}
			switch {
			case other == nil:
				if r.flowN > 0 || r.hintN > 0 || r.local {
					scopes[r.scope] = true
				}
			case r.local != other.local,
				!slices.Equal(a.srcsOf(r), b.srcsOf(other)),
				!slices.Equal(a.hintsOf(r), b.hintsOf(other)):
				scopes[r.scope] = true
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
		if fb.tab == nil {
			return
		}
		for i := range fb.tab.rows {
			r := &fb.tab.rows[i]
			if r.flowN > 0 && !yield(fb.tab.keyOf(r), fb.srcsOf(r)) {
				return
			}
		}
	}
}

// rowOf returns the plain row of (scope, name) made so far, or nil.
func (f *tableFill) rowOf(scope int32, name string) *tabRow {
	s, ok := f.t.symOf(name)
	if !ok {
		return nil
	}
	i, ok := f.t.rowOf(tabKey(scope, false, s))
	if !ok {
		return nil
	}
	return &f.t.rows[i]
}
