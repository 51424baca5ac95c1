package codegraph

import (
	"cmp"
	"hash/maphash"
	"math/bits"
	"slices"
)

// tableFill builds a file's scope tables while fillFileBuild fills them
// (fb.fill; nil once finished into fb.tab and the slabs). Rows are made as
// names are recorded, found again through a hash index of their keys; flow
// sources and hints are kept in the order they are recorded, with their
// row. finishTables lays it all out as the file's scopeTab (flow_names.go),
// which needs no row index: what the fill leaves is garbage.
type tableFill struct {
	t     *scopeTab // its names, symIx and in; rows are in fill.rows
	rows  []fillRow
	rowIx []int32 // tabKey(scope, attr, symbol) → row + 1 (as symIx)
	flows []rowSrc
	hints []rowHint
}

// fillRow is a row while the tables are filled.
type fillRow struct {
	scope  int32
	sym    int32
	nested int32 // definition index + 1 (0: none)
	attr   bool
	local  bool
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
	t.symIx = make([]int32, ixSize(n/2))
	return &tableFill{t: t, rows: make([]fillRow, 0, n), rowIx: make([]int32, ixSize(n))}
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

// fillRowOf returns the index of the row of key k.
func (f *tableFill) fillRowOf(k uint64) (int32, bool) {
	mask := uint64(len(f.rowIx) - 1)
	shift := 64 - bits.Len64(mask)
	for i := hashKey(k) >> shift & mask; ; i = (i + 1) & mask {
		j := f.rowIx[i]
		if j == 0 {
			return 0, false
		}
		if r := &f.rows[j-1]; tabKey(r.scope, r.attr, r.sym) == k {
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

// addRow adds a row for (scope, attr, symbol s) (not in f).
func (f *tableFill) addRow(scope int32, attr bool, s int32) int32 {
	i := int32(len(f.rows))
	f.rows = append(f.rows, fillRow{scope: scope, sym: s, attr: attr})
	if 2*len(f.rows) > len(f.rowIx) {
		f.rowIx = make([]int32, 2*len(f.rowIx))
		for j := range f.rows {
			f.placeRow(int32(j))
		}
	} else {
		f.placeRow(i)
	}
	return i
}

func (f *tableFill) placeRow(j int32) {
	r := &f.rows[j]
	mask := uint64(len(f.rowIx) - 1)
	shift := 64 - bits.Len64(mask)
	i := hashKey(tabKey(r.scope, r.attr, r.sym)) >> shift & mask
	for f.rowIx[i] != 0 {
		i = (i + 1) & mask
	}
	f.rowIx[i] = j + 1
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
	i, ok := f.fillRowOf(tabKey(scope, attr, s))
	if !ok {
		i = f.addRow(scope, attr, s)
	}
	return i
}

// addNested records definition i as name nested in parent (the first of
// several wins).
func (f *tableFill) addNested(parent int32, name string, i int32) {
	if r := &f.rows[f.row(parent, false, name, inNested)]; r.nested == 0 {
		r.nested = i + 1
	}
}

// addLocal records name as bound locally in definition def.
func (f *tableFill) addLocal(def int32, name string) {
	f.rows[f.row(def, false, name, inLocal)].local = true
}

// isLocal reports that name is bound locally in definition def.
func (f *tableFill) isLocal(def int32, name string) bool {
	t := f.t
	s, ok := t.symOf(name)
	if !ok || t.in[s]&inLocal == 0 {
		return false
	}
	i, ok := f.fillRowOf(tabKey(def, false, s))
	return ok && f.rows[i].local
}

// addSrc records that src flows into variable k.
func (f *tableFill) addSrc(k hintKey, src flowSrc) {
	f.flows = append(f.flows, rowSrc{f.row(k.scope, k.attr, k.name, inFlow), src})
}

// addHint records typ as a type of variable k.
func (f *tableFill) addHint(k hintKey, typ string) {
	f.hints = append(f.hints, rowHint{f.row(k.scope, k.attr, k.name, inHint), typ})
}

// rowOf returns the plain row of (scope, name) made so far, or nil.
func (f *tableFill) rowOf(scope int32, name string) *fillRow {
	s, ok := f.t.symOf(name)
	if !ok {
		return nil
	}
	i, ok := f.fillRowOf(tabKey(scope, false, s))
	if !ok {
		return nil
	}
	return &f.rows[i]
}

// finishTables lays out fb's scope tables (fb.tab) from its fill: the rows
// grouped by symbol and ordered by key within a symbol, and the flow
// sources and hints row by row (each row's in the order recorded; a type
// recorded twice for a row is kept once) into fb.flow and fb.hints.
func (fb *fileBuild) finishTables() {
	f := fb.fill
	fb.fill = nil
	if f == nil || len(f.rows) == 0 {
		return
	}
	t := f.t
	nsym := len(t.names)
	// Rows by symbol (a counting sort keeps the order made within one),
	// then by key within a symbol.
	symRow := make([]int32, nsym+1)
	for i := range f.rows {
		symRow[f.rows[i].sym+1]++
	}
	for s := 1; s <= nsym; s++ {
		symRow[s] += symRow[s-1]
	}
	order := make([]int32, len(f.rows)) // new position → fill row
	next := slices.Clone(symRow[:nsym])
	for i := range f.rows {
		s := f.rows[i].sym
		order[next[s]] = int32(i)
		next[s]++
	}
	keyOf := func(j int32) uint32 { r := &f.rows[j]; return entKey(r.scope, r.attr) }
	for s := 0; s < nsym; s++ {
		if g := order[symRow[s]:symRow[s+1]]; len(g) > 1 {
			slices.SortFunc(g, func(a, b int32) int { return cmp.Compare(keyOf(a), keyOf(b)) })
		}
	}
	pos := make([]int32, len(f.rows)) // fill row → new position
	for p, j := range order {
		pos[j] = int32(p)
	}
	rows := make([]tabEntry, len(f.rows))
	for p, j := range order {
		r := &f.rows[j]
		rows[p] = tabEntry{key: entKey(r.scope, r.attr), nested: r.nested}
		if r.local {
			rows[p].key |= entLocal
		}
	}
	// Flow sources: counted per row into flowEnd, made cumulative, then
	// placed from each row's start.
	if len(f.flows) > 0 {
		for _, p := range f.flows {
			rows[pos[p.row]].flowEnd++
		}
		at := make([]uint32, len(rows)) // where each row's next source goes
		var n uint32
		for i := range rows {
			at[i] = n
			n += rows[i].flowEnd
			rows[i].flowEnd = n
		}
		fb.flow = make([]flowSrc, len(f.flows))
		for _, p := range f.flows {
			i := pos[p.row]
			fb.flow[at[i]] = p.src
			at[i]++
		}
	}
	if len(f.hints) > 0 {
		for _, p := range f.hints {
			rows[pos[p.row]].hintEnd++
		}
		h := &hintLayout{f: f, pos: pos, start: make([]uint32, len(rows)), at: make([]uint32, len(rows))}
		var n uint32
		for i := range rows {
			h.start[i], h.at[i] = n, n
			n += rows[i].hintEnd
		}
		h.hs = make([]string, len(f.hints))
		for _, p := range f.hints {
			i := pos[p.row]
			if slices.Contains(h.hs[h.start[i]:h.at[i]], p.typ) {
				h.gaps = true
				continue
			}
			h.hs[h.at[i]] = p.typ
			h.at[i]++
		}
		if fb.lang != nil && fb.lang.family == "go" {
			fb.goDropLiteralValues(h) // flow_go_generics.go
		}
		// Close the gaps the duplicates left (none: each row ends where
		// the next starts).
		hs := h.hs
		n = 0
		for i := range rows {
			if h.gaps {
				n += uint32(copy(hs[n:], hs[h.start[i]:h.at[i]]))
			} else {
				n = h.at[i]
			}
			rows[i].hintEnd = n
		}
		if h.gaps {
			clear(hs[n:]) // (a kept tail would keep the references' text alive, refs_keep.go)
			hs = trimSlack(hs[:n])
		}
		fb.hints = hs
	}
	t.rows, t.symRow = rows, symRow
	t.names = trimSlack(t.names)
	t.in = trimSlack(t.in)
	if n := ixSize(len(t.names)); n < len(t.symIx) {
		t.symIx = make([]int32, n)
		for i, name := range t.names {
			t.placeSym(name, int32(i))
		}
	}
	fb.tab = t
}

// hintLayout is a file's hints while finishTables lays them out: row i's
// (a position in the finished rows) are hs[start[i]:at[i]].
type hintLayout struct {
	f         *tableFill
	pos       []int32 // fill row → position
	hs        []string
	start, at []uint32
	gaps      bool // some row ends before the next one starts
}

// rowOf returns the position of the plain row of (scope, name).
func (h *hintLayout) rowOf(scope int32, name string) (int32, bool) {
	s, ok := h.f.t.symOf(name)
	if !ok {
		return 0, false
	}
	j, ok := h.f.fillRowOf(tabKey(scope, false, s))
	if !ok {
		return 0, false
	}
	return h.pos[j], true
}

// of returns row i's types.
func (h *hintLayout) of(i int32) []string { return h.hs[h.start[i]:h.at[i]] }

// drop removes row i's type j.
func (h *hintLayout) drop(i int32, j int) {
	ts := h.of(i)
	copy(ts[j:], ts[j+1:])
	h.at[i]--
	h.gaps = true
}
