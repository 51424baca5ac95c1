package codegraph

// scopeNames are Bloom filters of the names a file's scope tables hold as
// keys: nested definitions, locals, flow and type-hint variables (not the
// "self.x" attribute keys). Binding a name walks the scopes from the inner
// definition out and looks (scope, name) up in each table at each level;
// most names a file reads (modules, built-ins, module-level definitions of
// other files) are in none of them, and those struct-keyed lookups, each
// hashing the name again, were the largest single cost of the value-flow
// evaluation (name, lookupName and hintFor: 2.1 of 16 CPU-s over 30 builds
// of python3.11). A table the filter says cannot hold the name is not
// looked up; one that may is looked up as before, so the answers are the
// same.
type scopeNames struct {
	defs, locals, flow, hints nameFilter
}

// nameFilter is one Bloom filter (two probes).
type nameFilter struct {
	bits []uint64
	mask uint64 // number of bits - 1 (a power of two)
}

// newScopeNames returns the filters of fb's tables as they are after
// fillFileBuild (nothing adds to them later; the final build's assembly
// drops them with these filters). They take 1–3 bytes a table entry
// (python3.11: 117k entries, 0.3 MB), a few per cent of the tables.
func newScopeNames(fb *fileBuild) *scopeNames {
	s := &scopeNames{
		defs:   newNameFilter(len(fb.nested)),
		locals: newNameFilter(len(fb.locals)),
		flow:   newNameFilter(len(fb.flow)),
		hints:  newNameFilter(len(fb.hints)),
	}
	for k := range fb.nested {
		s.defs.add(nameHash(k.name))
	}
	for k := range fb.locals {
		s.locals.add(nameHash(k.name))
	}
	for k := range fb.flow {
		if !k.attr {
			s.flow.add(nameHash(k.name))
		}
	}
	for k := range fb.hints {
		if !k.attr {
			s.hints.add(nameHash(k.name))
		}
	}
	return s
}

// newNameFilter returns an empty filter sized for n names.
func newNameFilter(n int) nameFilter {
	nbits := uint64(64)
	for nbits < uint64(n)*8 { // 8 to 16 bits a name, two probes: 1.5–5 % false positives
		nbits *= 2
	}
	return nameFilter{bits: make([]uint64, nbits/64), mask: nbits - 1}
}

// nameHash is FNV-1a over s.
func nameHash(s string) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

func (f *nameFilter) add(h uint64) {
	a, b := h&f.mask, (h>>32)&f.mask
	f.bits[a/64] |= 1 << (a % 64)
	f.bits[b/64] |= 1 << (b % 64)
}

// has reports that the name of hash h may be in the table; false means it
// is not.
func (f *nameFilter) has(h uint64) bool {
	a, b := h&f.mask, (h>>32)&f.mask
	return f.bits[a/64]&(1<<(a%64)) != 0 && f.bits[b/64]&(1<<(b%64)) != 0
}

// nameTables says which of fb's scope tables may hold name (all of them
// when fb has no filters).
type nameTables struct{ def, local, flow bool }

// tablesFor returns which of fb's nested, locals and flow tables may hold
// name.
func (fb *fileBuild) tablesFor(name string) nameTables {
	s := fb.names
	if s == nil {
		return nameTables{true, true, true}
	}
	h := nameHash(name)
	return nameTables{s.defs.has(h), s.locals.has(h), s.flow.has(h)}
}

// mayHint reports that fb's hints may hold variable name (not an attribute).
func (fb *fileBuild) mayHint(name string) bool {
	return fb.names == nil || fb.names.hints.has(nameHash(name))
}
