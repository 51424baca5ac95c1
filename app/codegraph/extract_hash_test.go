package codegraph

import (
	"hash/fnv"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestNewLineIndex: the line starts are those a loop over every byte finds.
func TestNewLineIndex(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	srcs := [][]byte{nil, []byte("\n"), []byte("a"), []byte("a\n"), []byte("\n\n\na"), []byte("ab\ncd\n\n")}
	for i := 0; i < 200; i++ {
		b := make([]byte, rng.Intn(300))
		for j := range b {
			b[j] = "ab\n"[rng.Intn(3)]
		}
		srcs = append(srcs, b)
	}
	for _, src := range srcs {
		want := lineIndex{0}
		for i, c := range src {
			if c == '\n' {
				want = append(want, uint32(i+1))
			}
		}
		if got := newLineIndex(src); !slices.Equal(got, want) {
			t.Fatalf("newLineIndex(%q) = %v, want %v", src, got, want)
		}
	}
}

// TestHashDefs: every definition's hash is hash/fnv's FNV-1a of its range,
// whatever the number of definitions (groups of four and the rest) and their
// lengths (empty, equal, nested, very different).
func TestHashDefs(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	src := make([]byte, 5000)
	rng.Read(src)
	for n := 0; n < 12; n++ {
		for trial := 0; trial < 20; trial++ {
			defs := make([]defRec, n)
			for i := range defs {
				s := uint32(rng.Intn(len(src)))
				e := s + uint32(rng.Intn(len(src)-int(s)+1))
				if trial%3 == 0 {
					e = s + uint32(min(i, len(src)-int(s))) // short, some empty
				}
				defs[i] = defRec{Start: s, End: e}
			}
			hashDefs(src, defs)
			for _, d := range defs {
				h := fnv.New64a()
				h.Write(src[d.Start:d.End])
				if d.Hash != h.Sum64() {
					t.Fatalf("%d defs: hash of [%d,%d) = %x, want %x", n, d.Start, d.End, d.Hash, h.Sum64())
				}
			}
		}
	}
}

// TestCollapseSpace: collapseSpace is strings.Join(strings.Fields(s), " "),
// for ASCII (its own loop) and non-ASCII text (Fields' Unicode spaces).
func TestCollapseSpace(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	srcs := []string{"", " ", "a", " a ", "def f(a,\n\t b):\n    ", "a\u00a0b", "é  x", "\u0085a b\u2003c", "a\v\fb\r\n"}
	for i := 0; i < 500; i++ {
		b := make([]byte, rng.Intn(40))
		for j := range b {
			b[j] = "ab \t\n\r\v\f("[rng.Intn(9)]
		}
		srcs = append(srcs, string(b))
	}
	for _, s := range srcs {
		want := strings.Join(strings.Fields(s), " ")
		if got := collapseSpace(s); got != want {
			t.Fatalf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestLineAndEnclosingSearch: lineIndex.line and enclosing find what
// sort.Search finds.
func TestLineAndEnclosingSearch(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for trial := 0; trial < 100; trial++ {
		li := lineIndex{0}
		var defs []defRec
		for k := 0; k < rng.Intn(30); k++ {
			li = append(li, li[len(li)-1]+uint32(1+rng.Intn(20)))
			defs = append(defs, defRec{Start: li[len(li)-1], End: li[len(li)-1] + uint32(rng.Intn(10)), Parent: -1})
		}
		for off := uint32(0); off < li[len(li)-1]+30; off++ {
			if got, want := li.line(off), int32(sort.Search(len(li), func(i int) bool { return li[i] > off })); got != want {
				t.Fatalf("line(%d) = %d, want %d (%v)", off, got, want, li)
			}
			i := sort.Search(len(defs), func(i int) bool { return defs[i].Start > off }) - 1
			want := int32(-1)
			if i >= 0 && defs[i].End > off {
				want = int32(i)
			}
			if got := enclosing(defs, off); got != want {
				t.Fatalf("enclosing(%d) = %d, want %d", off, got, want)
			}
		}
	}
}
