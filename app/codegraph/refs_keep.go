package codegraph

import (
	"math/bits"
	"strings"
	"unsafe"
)

// A file's packed references (refList) hold their strings in one per-file
// text, and the strings decoded from it are substrings of it. The tables
// fillFileBuild makes keep some of them (scope names, flow sources, type
// hints, base names, parameter uses, decorators; and the inheritance
// pass's sample of unresolved names) for the whole resolution,
// and each kept substring kept the whole text alive: after finalTrim had
// dropped every file's references, pyenv's stdlib still held all 14 k texts
// (38 MB) through ≈ 1.7 M kept strings. Before a last build's references
// are spilled (refs_spill.go), ownTexts moves what fb's tables keep out of
// the text, into one smaller text of their own: only the bytes some kept
// string covers (≈ 60 % of the text), so that the references' text goes
// when the references do.

// keptStrings calls f with every string fb's tables keep that can come
// from its references (the rest of a table does not matter: f leaves
// strings outside the references' text as they are).
func (fb *fileBuild) keptStrings(f func(*string)) {
	if t := fb.tab; t != nil {
		for i := range t.names {
			f(&t.names[i])
		}
	}
	for i := range fb.flow {
		f(&fb.flow[i].expr)
	}
	for i := range fb.hints {
		f(&fb.hints[i])
	}
	for i := range fb.inherits {
		f(&fb.inherits[i].name)
	}
	if fb.inh != nil { // (the inheritance pass's sample of unresolved bases)
		for i := range fb.inh.sample {
			f(&fb.inh.sample[i].Name)
		}
	}
	if ff := fb.facts; ff != nil {
		for i := range ff.uses.items {
			f(&ff.uses.items[i].param)
			f(&ff.uses.items[i].member)
		}
		for i := range ff.decos.items {
			f(&ff.decos.items[i].expr)
		}
	}
}

// textKeep maps the bytes of a text that kept strings cover onto a text of
// their own: bit i of bits is set when byte i is kept, rank[w] counts the
// kept bytes before word w, and a kept byte's place in the new text is the
// count of kept bytes before it. A kept string's bytes are all kept, so
// they stay contiguous, in order, in the new text (overlapping strings
// share bytes there as they did in the old one).
type textKeep struct {
	base uintptr
	n    int
	bits []uint64
	rank []uint32
	text string
}

// at returns where s starts in the text (false: s is elsewhere or empty).
func (k *textKeep) at(s string) (int, bool) {
	if len(s) == 0 {
		return 0, false
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if p < k.base || p >= k.base+uintptr(k.n) {
		return 0, false
	}
	return int(p - k.base), true
}

// mark keeps the bytes of s (when it is in the text).
func (k *textKeep) mark(s *string) {
	o, ok := k.at(*s)
	if !ok {
		return
	}
	end := o + len(*s)
	for o < end {
		w, b := o>>6, uint(o&63)
		n := min(end-o, 64-int(b))
		m := ^uint64(0)
		if n < 64 {
			m = (uint64(1)<<uint(n) - 1) << b
		}
		k.bits[w] |= m
		o += n
	}
}

// move points s to its copy in the new text (when it is in the old one).
func (k *textKeep) move(s *string) {
	o, ok := k.at(*s)
	if !ok {
		return
	}
	w, b := o>>6, uint(o&63)
	r := int(k.rank[w]) + bits.OnesCount64(k.bits[w]&(uint64(1)<<b-1))
	*s = k.text[r : r+len(*s)]
}

// ownTexts moves the strings fb's tables keep out of its references' text
// (see above). Only a build that spills its references does this: one that
// keeps them in memory keeps their text anyway.
func (fb *fileBuild) ownTexts() {
	if fb.fd == nil || len(fb.fd.Refs.text) == 0 {
		return
	}
	text := fb.fd.Refs.text
	k := &textKeep{
		base: uintptr(unsafe.Pointer(unsafe.StringData(text))),
		n:    len(text),
		bits: make([]uint64, (len(text)+63)/64),
	}
	fb.keptStrings(k.mark)
	k.rank = make([]uint32, len(k.bits))
	var n uint32
	for w, x := range k.bits {
		k.rank[w] = n
		n += uint32(bits.OnesCount64(x))
	}
	if n == 0 {
		return
	}
	var sb strings.Builder // its String does not copy
	sb.Grow(int(n))
	for w, x := range k.bits {
		for x != 0 {
			b := bits.TrailingZeros64(x)
			e := b + bits.TrailingZeros64(^(x >> uint(b))) // end of this run of ones (≤ 64: x>>b has b zeros on top)
			sb.WriteString(text[w*64+b : w*64+e])
			if e == 64 {
				x = 0
			} else {
				x &^= (uint64(1)<<uint(e) - 1)
			}
		}
	}
	k.text = sb.String()
	fb.keptStrings(k.move)
}
