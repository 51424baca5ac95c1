package codegraph

// nameFilter is a Bloom filter of the names a file's scope tables hold as
// keys (nested definitions, locals, flow and type-hint variables, not the
// "self.x" attribute keys). Binding a name walks the scopes from the inner
// definition out and looks (scope, name) up in each table at each level;
// most names a file reads (modules, built-ins, module-level definitions of
// other files) are in none of them, and those struct-keyed lookups, each
// hashing the name again, were the largest single cost of the value-flow
// evaluation (name, lookupName and hintFor: 2.1 of 16 CPU-s over 30 builds
// of python3.11). A name the filter says is absent skips the walk; one it
// may hold walks as before, so the answers are the same.
type nameFilter struct {
	bits []uint64
	mask uint64 // number of bits - 1 (a power of two)
}

// newNameFilter returns the filter of fb's tables as they are after
// fillFileBuild (nothing adds to them later; the final build's assembly
// drops them, and a lookup in a dropped table finds nothing either way).
func newNameFilter(fb *fileBuild) *nameFilter {
	n := len(fb.nested) + len(fb.locals) + len(fb.flow) + len(fb.hints)
	nbits := uint64(64)
	for nbits < uint64(n)*16 { // 16 bits a name, two probes: ~1.5 % false positives
		nbits *= 2
	}
	f := &nameFilter{bits: make([]uint64, nbits/64), mask: nbits - 1}
	for k := range fb.nested {
		f.add(k.name)
	}
	for k := range fb.locals {
		f.add(k.name)
	}
	for k := range fb.flow {
		if !k.attr {
			f.add(k.name)
		}
	}
	for k := range fb.hints {
		if !k.attr {
			f.add(k.name)
		}
	}
	return f
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

func (f *nameFilter) add(name string) {
	h := nameHash(name)
	a, b := h&f.mask, (h>>32)&f.mask
	f.bits[a/64] |= 1 << (a % 64)
	f.bits[b/64] |= 1 << (b % 64)
}

// mayHave reports that name may be a key of the tables; false means it is
// in none of them. A nil filter (none built) may have every name.
func (f *nameFilter) mayHave(name string) bool {
	if f == nil {
		return true
	}
	h := nameHash(name)
	a, b := h&f.mask, (h>>32)&f.mask
	return f.bits[a/64]&(1<<(a%64)) != 0 && f.bits[b/64]&(1<<(b%64)) != 0
}
