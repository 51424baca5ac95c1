package codegraph

import "slices"

// hashDefs sets every definition's Hash to the FNV-1a (64-bit) hash of its
// source, src[Start:End], as hash/fnv computes it.
//
// FNV-1a is one multiply per byte, each waiting for the previous one, and a
// definition's range holds those of the definitions nested in it, so a file's
// definitions hash several times its size. Four ranges are hashed side by
// side (four independent multiply chains, which the processor overlaps),
// longest first so that the four of a group are of similar length.
func hashDefs(src []byte, defs []defRec) {
	order := make([]int32, len(defs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return int(defs[b].End-defs[b].Start) - int(defs[a].End-defs[a].Start)
	})
	i := 0
	for ; i+4 <= len(order); i += 4 {
		d0, d1, d2, d3 := &defs[order[i]], &defs[order[i+1]], &defs[order[i+2]], &defs[order[i+3]]
		s0, s1, s2, s3 := src[d0.Start:d0.End], src[d1.Start:d1.End], src[d2.Start:d2.End], src[d3.Start:d3.End]
		n := min(len(s0), len(s1), len(s2), len(s3))
		h0, h1, h2, h3 := fnv4(s0[:n], s1[:n], s2[:n], s3[:n])
		d0.Hash, d1.Hash, d2.Hash, d3.Hash = fnvRest(h0, s0[n:]), fnvRest(h1, s1[n:]), fnvRest(h2, s2[n:]), fnvRest(h3, s3[n:])
	}
	for ; i < len(order); i++ {
		d := &defs[order[i]]
		d.Hash = fnvRest(fnvOffset64, src[d.Start:d.End])
	}
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
