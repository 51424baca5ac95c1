package codegraph

// hashDefs sets every definition's Hash to the FNV-1a (64-bit) hash of its
// source, src[Start:End], as hash/fnv computes it, and with file returns that
// of the whole of src (0 without).
//
// FNV-1a is one multiply per byte, each waiting for the previous one, and a
// definition's range holds those of the definitions nested in it, so a file's
// definitions hash several times its size. Four ranges are hashed side by
// side (four independent multiply chains, which the processor overlaps): each
// lane takes the next range as soon as its own is done, so all four stay busy
// until the last ranges (the file, the longest, goes first).
func hashDefs(src []byte, defs []defRec, file bool) uint64 {
	type lane struct {
		b []byte // what is left of the range
		h uint64
		i int // the range: -1 the file, else a definition; -2 idle
	}
	next := 0 // the next definition to start
	if file {
		next = -1
	}
	start := func(l *lane) {
		switch {
		case next == -1:
			*l = lane{src, fnvOffset64, -1}
		case next < len(defs):
			*l = lane{src[defs[next].Start:defs[next].End], fnvOffset64, next}
		default:
			*l = lane{i: -2}
			return
		}
		next++
	}
	var ln [4]lane
	for k := range ln {
		start(&ln[k])
	}
	var sum uint64
	for {
		busy, m := -1, 0
		for k := range ln {
			if ln[k].i == -2 {
				continue
			}
			if busy < 0 || len(ln[k].b) < m {
				m = len(ln[k].b)
			}
			busy = k
		}
		if busy < 0 {
			return sum
		}
		if m > 0 {
			// An idle lane hashes a busy one's bytes again, for nothing.
			var in [4][]byte
			for k := range ln {
				if ln[k].i == -2 {
					in[k] = ln[busy].b[:m]
				} else {
					in[k] = ln[k].b[:m]
				}
			}
			h0, h1, h2, h3 := fnv4(ln[0].h, ln[1].h, ln[2].h, ln[3].h, in[0], in[1], in[2], in[3])
			ln[0].h, ln[1].h, ln[2].h, ln[3].h = h0, h1, h2, h3
			for k := range ln {
				if ln[k].i != -2 {
					ln[k].b = ln[k].b[m:]
				}
			}
		}
		for k := range ln {
			for ln[k].i != -2 && len(ln[k].b) == 0 {
				if ln[k].i == -1 {
					sum = ln[k].h
				} else {
					defs[ln[k].i].Hash = ln[k].h
				}
				start(&ln[k])
			}
		}
	}
}

// fnv4 continues the FNV-1a hashes h0..h3 over a0..a3, which have the same
// length. A function of its own, so that the four hashes stay in registers.
//
//go:noinline
func fnv4(h0, h1, h2, h3 uint64, a0, a1, a2, a3 []byte) (uint64, uint64, uint64, uint64) {
	a1, a2, a3 = a1[:len(a0)], a2[:len(a0)], a3[:len(a0)]
	for k, c := range a0 {
		h0 = (h0 ^ uint64(c)) * fnvPrime64
		h1 = (h1 ^ uint64(a1[k])) * fnvPrime64
		h2 = (h2 ^ uint64(a2[k])) * fnvPrime64
		h3 = (h3 ^ uint64(a3[k])) * fnvPrime64
	}
	return h0, h1, h2, h3
}
