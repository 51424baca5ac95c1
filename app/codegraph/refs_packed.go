package codegraph

import (
	"encoding/binary"
	"iter"
	"strings"
)

// refList is a file's references, packed: each distinct Name or Object
// string once in a per-file table, each reference as five varints in one
// byte slice (kind, name index, object index, Def+1, line delta). The
// table is the strings' bytes one after another in one string and where
// each ends (4 bytes a string where a string header took 16: pyenv's
// stdlib has ≈ 1.6 M distinct strings per file in all, ≈ 20 MB less at the
// peak of a cold index); decoded strings share that string's memory. A parsed
// project keeps every file's references for its whole life (to re-resolve a
// file without parsing it again); as []refRec they were 48 bytes each, the
// largest part of the cold index's live heap (5.6 M references, 270 MB, on
// pyenv's stdlib), packed they take about 7 bytes plus the table. Readers
// decode on the fly with All; the zero value is an empty list.
type refList struct {
	text string   // the distinct strings but "", one after another
	ends []uint32 // string i ≥ 1 is text[ends[i-1]:ends[i]]; ends[0] = 0 is "" (when n > 0)
	data []byte
	n    int32
}

// str returns the string at index v of the table.
func (l refList) str(v uint64) string {
	if v == 0 {
		return ""
	}
	return l.text[l.ends[v-1]:l.ends[v]]
}

// strCount is the number of strings in the table, "" included (tests).
func (l refList) strCount() int { return len(l.ends) }

// Len is the number of references.
func (l refList) Len() int { return int(l.n) }

// All yields every reference in order, with its index.
func (l refList) All() iter.Seq2[int, refRec] {
	return func(yield func(int, refRec) bool) {
		var c refCursor
		for i := 0; i < int(l.n); i++ {
			r, next := l.at(c)
			if !yield(i, r) {
				return
			}
			c = next
		}
	}
}

// refCursor is where one packed reference starts: its byte offset and the
// line of the reference before it (lines are stored as deltas). An index
// that keeps a few references of many files (flow_args.go) keeps cursors
// and decodes one reference with at, instead of unpacking whole lists.
type refCursor struct {
	off, prevLine int32
}

// Cursors yields every reference in order with its index and cursor.
func (l refList) Cursors() iter.Seq2[refCursor, refRec] {
	return func(yield func(refCursor, refRec) bool) {
		var c refCursor
		for i := 0; i < int(l.n); i++ {
			r, next := l.at(c)
			if !yield(c, r) {
				return
			}
			c = next
		}
	}
}

// KindCursors yields the cursor of every reference of kind k, in order. The
// others are stepped over without reading their strings (an index of one
// kind of reference over every file, flow_args.go's, decoded them all).
func (l refList) KindCursors(k refKind) iter.Seq[refCursor] {
	return func(yield func(refCursor) bool) {
		var c refCursor
		for i := 0; i < int(l.n); i++ {
			d := l.data[c.off:]
			kind := refKind(d[0])
			n := 1
			for j := 0; j < 3; j++ { // name, object, Def+1
				for d[n] >= 0x80 {
					n++
				}
				n++
			}
			v, k2 := uvarint(d[n:])
			if kind == k && !yield(c) {
				return
			}
			c = refCursor{off: c.off + int32(n+k2), prevLine: c.prevLine + int32(uint32(v>>1)^-uint32(v&1))}
		}
	}
}

// at decodes the reference at c and returns it with the cursor of the next.
func (l refList) at(c refCursor) (refRec, refCursor) {
	d := l.data[c.off:]
	var r refRec
	r.Kind = refKind(d[0])
	k0 := 1
	v, k := uvarint(d[k0:])
	r.Name = l.str(v)
	k0 += k
	v, k = uvarint(d[k0:])
	r.Object = l.str(v)
	k0 += k
	v, k = uvarint(d[k0:])
	r.Def = int32(v) - 1
	k0 += k
	v, k = uvarint(d[k0:])
	r.Line = c.prevLine + int32(uint32(v>>1)^-uint32(v&1)) // zig-zag
	k0 += k
	return r, refCursor{off: c.off + int32(k0), prevLine: r.Line}
}

// Unpack returns the references as a slice (tests and rewrites).
func (l refList) Unpack() []refRec {
	if l.n == 0 {
		return nil
	}
	out := make([]refRec, 0, l.n)
	for _, r := range l.All() {
		out = append(out, r)
	}
	return out
}

// uvarint is binary.Uvarint for data known to be well formed (written by
// refPacker), with the one-byte case first.
func uvarint(b []byte) (uint64, int) {
	if b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// refPacker builds a refList.
type refPacker struct {
	idx  map[string]uint32
	strs []string
	data []byte
	n    int32
	line int32
}

// newRefPacker returns a packer sized for about n references.
func newRefPacker(n int) *refPacker {
	p := &refPacker{}
	p.reset(n)
	return p
}

// reset empties p for about n references, keeping its arrays when they are
// not too large (a packer serves one file after another as scratch).
func (p *refPacker) reset(n int) {
	if p.idx == nil || len(p.idx) > 8192 {
		p.idx = make(map[string]uint32, min(n, 1024))
	} else {
		clear(p.idx)
	}
	if cap(p.strs) == 0 || cap(p.strs) > 8192 {
		p.strs = make([]string, 0, min(n, 1024)+1)
	}
	clear(p.strs[:cap(p.strs)])     // let go of the last file's strings
	p.strs = append(p.strs[:0], "") // "" is index 0
	if cap(p.data) < n*7 || cap(p.data) > 1<<20 {
		p.data = make([]byte, 0, n*7)
	}
	p.data = p.data[:0]
	p.n, p.line = 0, 0
}

func (p *refPacker) str(s string) uint64 {
	if s == "" {
		return 0
	}
	i, ok := p.idx[s]
	if !ok {
		i = uint32(len(p.strs))
		p.idx[s] = i
		p.strs = append(p.strs, s)
	}
	return uint64(i)
}

// strBytes is str for a string given as bytes (a cache entry's): it is
// copied only the first time the file uses it.
func (p *refPacker) strBytes(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	if i, ok := p.idx[string(b)]; ok { // no allocation for the lookup
		return uint64(i)
	}
	return p.str(string(b))
}

// add appends r.
func (p *refPacker) add(r refRec) {
	p.addIdx(r.Kind, p.str(r.Name), p.str(r.Object), r.Def, r.Line)
}

// addIdx appends a reference whose strings are already in the table.
func (p *refPacker) addIdx(kind refKind, name, obj uint64, def, line int32) {
	p.data = append(p.data, byte(kind))
	p.data = binary.AppendUvarint(p.data, name)
	p.data = binary.AppendUvarint(p.data, obj)
	p.data = binary.AppendUvarint(p.data, uint64(uint32(def+1)))
	d := line - p.line
	p.line = line
	p.data = binary.AppendUvarint(p.data, uint64(uint32(d<<1)^uint32(d>>31)))
	p.n++
}

// list returns the packed references in exact-size arrays, the strings'
// bytes copied into the list's own text.
func (p *refPacker) list() refList {
	if p.n == 0 {
		return refList{}
	}
	size := 0
	for _, s := range p.strs {
		size += len(s)
	}
	var text strings.Builder // its String does not copy
	text.Grow(size)
	ends := make([]uint32, len(p.strs))
	for i, s := range p.strs { // p.strs[0] is "": ends[0] = 0
		text.WriteString(s)
		ends[i] = uint32(text.Len())
	}
	return refList{
		text: text.String(),
		ends: ends,
		data: append(make([]byte, 0, len(p.data)), p.data...),
		n:    p.n,
	}
}

// packRefs packs rs.
func packRefs(rs []refRec) refList {
	if len(rs) == 0 {
		return refList{}
	}
	p := newRefPacker(len(rs))
	for _, r := range rs {
		p.add(r)
	}
	return p.list()
}

// refBufKeep bounds the decoded references a pooled buffer keeps between
// files (a huge file's are dropped after it).
const refBufKeep = 1 << 16

// refBuf is a file's references decoded once, for a pass that loops over
// them many times (fillFileBuild's tables, the flow passes of one file's
// resolution): each loop over a refList decodes every varint again.
type refBuf struct{ rs []refRec }

// decodeRefs returns l decoded into a pooled buffer; give it back with
// putRefs once the pass is done (the buffer is the caller's until then).
func (b *builder) decodeRefs(l refList) *refBuf {
	buf, _ := b.refBufs.Get().(*refBuf)
	if buf == nil {
		buf = &refBuf{}
	}
	if cap(buf.rs) < l.Len() {
		buf.rs = make([]refRec, 0, l.Len())
	}
	buf.rs = buf.rs[:l.Len()]
	var c refCursor
	for i := range buf.rs { // (a plain loop: All's yield per reference cost a tenth of the decode)
		buf.rs[i], c = l.at(c)
	}
	return buf
}

// putRefs returns buf to the pool, letting go of its strings.
func (b *builder) putRefs(buf *refBuf) {
	clear(buf.rs)
	if cap(buf.rs) > refBufKeep {
		buf.rs = nil
	}
	buf.rs = buf.rs[:0]
	b.refBufs.Put(buf)
}
