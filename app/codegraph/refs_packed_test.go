package codegraph

import (
	"reflect"
	"strconv"
	"testing"
)

// TestRefListRoundTrip packs references with every field at its edges
// (empty strings, Def -1, lines going backwards, indices and values past
// one varint byte) and reads back exactly what was packed, in order.
func TestRefListRoundTrip(t *testing.T) {
	var in []refRec
	for i := 0; i < 600; i++ {
		in = append(in, refRec{
			Kind:   refKind(i % int(refImplicit+1)),
			Name:   "n" + strconv.Itoa(i%300), // 300 distinct: two-byte indices
			Object: []string{"", "self", "a.b", "x" + strconv.Itoa(i)}[i%4],
			Def:    int32(i%7) - 1,
			Line:   int32((i * 7919) % 100003), // jumps back and forth
		})
	}
	in = append(in, refRec{Kind: refArg, Name: "0" + argSep + "v", Def: 1 << 20, Line: 1 << 30})
	l := packRefs(in)
	if l.Len() != len(in) {
		t.Fatalf("Len %d, want %d", l.Len(), len(in))
	}
	if got := l.Unpack(); !reflect.DeepEqual(got, in) {
		for i := range in {
			if got[i] != in[i] {
				t.Fatalf("ref %d: got %+v, want %+v", i, got[i], in[i])
			}
		}
		t.Fatalf("unpacked %d refs, want %d", len(got), len(in))
	}
	// All stops when the loop breaks, and indices count from 0.
	n := 0
	for i, r := range l.All() {
		if i != n || r != in[i] {
			t.Fatalf("All yields %d %+v at step %d", i, r, n)
		}
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Fatalf("loop ran %d times, want 3", n)
	}
	// A cursor kept from Cursors decodes that one reference again, out of
	// order (argument sites keep cursors: flow_args.go).
	var curs []refCursor
	for c := range l.Cursors() {
		curs = append(curs, c)
	}
	if len(curs) != len(in) {
		t.Fatalf("Cursors yields %d, want %d", len(curs), len(in))
	}
	for _, i := range []int{len(in) - 1, 0, 299, 300, 17} {
		if r, _ := l.at(curs[i]); r != in[i] {
			t.Fatalf("at(cursor %d) = %+v, want %+v", i, r, in[i])
		}
	}
	// KindCursors yields the cursors Cursors yields for that kind, in order
	// (the list has indices and lines past one varint byte to step over).
	for k := refKind(0); k <= refImplicit; k++ {
		var want, got []refCursor
		for i, c := range curs {
			if in[i].Kind == k {
				want = append(want, c)
			}
		}
		for c := range l.KindCursors(k) {
			got = append(got, c)
		}
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("KindCursors(%d) yields %d cursors, want the %d of Cursors", k, len(got), len(want))
		}
	}
	if (refList{}).Len() != 0 || packRefs(nil).Unpack() != nil {
		t.Fatal("empty list is not empty")
	}
	// Distinct strings are stored once.
	if l.strCount() > 300+600/4+4 {
		t.Errorf("%d strings in the table, want each distinct one once", l.strCount())
	}
}

// TestRefPackerReuse packs two files with one packer (as an extractor
// does): the second list holds only its own references and strings, and
// the first is not changed by the reuse.
func TestRefPackerReuse(t *testing.T) {
	var p refPacker
	a := []refRec{{Kind: refCall, Name: "f", Object: "os", Def: -1, Line: 3}, {Kind: refUse, Name: "g", Def: 0, Line: 2}}
	b := []refRec{{Kind: refInherit, Name: "Base", Def: 2, Line: 10}}
	p.reset(len(a))
	for _, r := range a {
		p.add(r)
	}
	la := p.list()
	p.reset(len(b))
	for _, r := range b {
		p.add(r)
	}
	lb := p.list()
	if got := la.Unpack(); !reflect.DeepEqual(got, a) {
		t.Errorf("first file after reuse: %+v, want %+v", got, a)
	}
	if got := lb.Unpack(); !reflect.DeepEqual(got, b) {
		t.Errorf("second file: %+v, want %+v", got, b)
	}
	if lb.strCount() != 2 || lb.text != "Base" { // "" and "Base"
		t.Errorf("second file's table %q (%d strings) holds strings of the first", lb.text, lb.strCount())
	}
}
