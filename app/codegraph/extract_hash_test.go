package codegraph

import (
	"hash/fnv"
	"math/rand"
	"slices"
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
