package codegraph

import "slices"

// hashDefs sets every definition's Hash to the FNV-1a (64-bit) hash of its
// source, src[Start:End], as hash/fnv computes it, and with file returns that
// of the whole of src (0 without).
//
// FNV-1a is one multiply per byte, each waiting for the previous one, and a
// definition's range holds those of the definitions nested in it, so a file's
// definitions hash several times its size. Four ranges are hashed side by
// side (four independent multiply chains, which the processor overlaps),
// longest first so that the four of a group are of similar length; the file
// itself is one more range.
func hashDefs(src []byte, defs []defRec, file bool) uint64 {
	// Ranges 0..len(defs)-1 are the definitions', len(defs) the file's.
	n := len(defs)
	rangeOf := func(i int32) []byte {
		if int(i) == len(defs) {
			return src
		}
		return src[defs[i].Start:defs[i].End]
	}
	if file {
		n++
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return len(rangeOf(b)) - len(rangeOf(a)) })
	sums := make([]uint64, n)
	i := 0
	for ; i+4 <= n; i += 4 {
		s0, s1, s2, s3 := rangeOf(order[i]), rangeOf(order[i+1]), rangeOf(order[i+2]), rangeOf(order[i+3])
		k := min(len(s0), len(s1), len(s2), len(s3))
		h0, h1, h2, h3 := fnv4(s0[:k], s1[:k], s2[:k], s3[:k])
		sums[order[i]], sums[order[i+1]], sums[order[i+2]], sums[order[i+3]] = fnvRest(h0, s0[k:]), fnvRest(h1, s1[k:]), fnvRest(h2, s2[k:]), fnvRest(h3, s3[k:])
	}
	for ; i < n; i++ {
		sums[order[i]] = fnvRest(fnvOffset64, rangeOf(order[i]))
	}
	for i := range defs {
		defs[i].Hash = sums[i]
	}
	if file {
		return sums[len(defs)]
	}
	return 0
}

// fnv4 returns the FNV-1a hashes of a0..a3, which have the same length. A
// function of its own, so that the four hashes stay in registers.
//
//go:noinline
func fnv4(a0, a1, a2, a3 []byte) (h0, h1, h2, h3 uint64) {
	h0, h1, h2, h3 = fnvOffset64, fnvOffset64, fnvOffset64, fnvOffset64
	a1, a2, a3 = a1[:len(a0)], a2[:len(a0)], a3[:len(a0)]
	for k, c := range a0 {
		h0 = (h0 ^ uint64(c)) * fnvPrime64
		h1 = (h1 ^ uint64(a1[k])) * fnvPrime64
		h2 = (h2 ^ uint64(a2[k])) * fnvPrime64
		h3 = (h3 ^ uint64(a3[k])) * fnvPrime64
	}
	return h0, h1, h2, h3
}

// fnvRest continues FNV-1a hash h over b.
func fnvRest(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime64
	}
	return h
}
