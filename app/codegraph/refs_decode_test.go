package codegraph

import (
	"hash/fnv"
	"slices"
	"testing"
)

// fnvParts must give hash/fnv's FNV-1a of the parts each followed by a 0
// byte: interface hashes written by earlier builds (the cache) compare
// against it.
func TestFnvPartsIsFNV1a(t *testing.T) {
	parts := []string{"", "d", "function", "a.b.c\x00x", "ünïcode", "r"}
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	if got, want := fnvParts(fnvOffset64, parts...), h.Sum64(); got != want {
		t.Fatalf("fnvParts = %x, hash/fnv = %x", got, want)
	}
	// In two calls, as fillFileBuild's hs does.
	if got := fnvParts(fnvParts(fnvOffset64, parts[:3]...), parts[3:]...); got != h.Sum64() {
		t.Fatalf("fnvParts in two calls = %x, want %x", got, h.Sum64())
	}
}

// decodeRefs must yield exactly what the packed list does, also when its
// pooled buffer served a longer file before.
func TestDecodeRefsMatchesAll(t *testing.T) {
	b := newBuilder("", nil)
	long := make([]refRec, 300)
	for i := range long {
		long[i] = refRec{Kind: refCall, Name: "f" + string(rune('a'+i%26)), Object: "o", Def: int32(i%7) - 1, Line: int32(i * 3 % 50)}
	}
	short := []refRec{{Kind: refArg, Name: "0\x00x", Object: "g", Def: 2, Line: 9}, {Kind: refInherit, Name: "Base", Def: 0, Line: 1}}
	for _, rs := range [][]refRec{long, short, nil} {
		l := packRefs(rs)
		buf := b.decodeRefs(l)
		if !slices.Equal(buf.rs, l.Unpack()) || len(buf.rs) != len(rs) {
			t.Fatalf("decodeRefs = %v, want %v", buf.rs, rs)
		}
		b.putRefs(buf)
	}
}
