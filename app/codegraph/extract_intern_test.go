package codegraph

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

// TestLineCursor checks lineCursor.line against lineIndex.line for offsets
// in order, repeated, backwards and at random (the cursor's previous line
// must never make it answer another line than the search).
func TestLineCursor(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for trial := 0; trial < 200; trial++ {
		li := lineIndex{0}
		for k := 0; k < rng.Intn(40); k++ {
			li = append(li, li[len(li)-1]+uint32(1+rng.Intn(12)))
		}
		end := li[len(li)-1] + 20
		var offs []uint32
		for off := uint32(0); off < end; off++ {
			offs = append(offs, off, off) // in order, each twice
		}
		for off := end; off > 0; off-- {
			offs = append(offs, off-1) // backwards
		}
		for k := 0; k < 200; k++ {
			offs = append(offs, uint32(rng.Intn(int(end)+1)))
		}
		c := lineCursor{li: li}
		for _, off := range offs {
			want := int32(sort.Search(len(li), func(i int) bool { return li[i] > off }))
			if got := c.line(off); got != want {
				t.Fatalf("lineCursor.line(%d) = %d, want %d (%v)", off, got, want, li)
			}
		}
	}
}

// TestInternTable checks that the table gives back the string first added
// for equal bytes, finds nothing added for another file (after reset,
// including across a wrap of its generations), and keeps its strings when
// it grows.
func TestInternTable(t *testing.T) {
	var it internTable
	for file := 0; file < 5; file++ {
		it.reset()
		want := map[string]string{}
		for i := 0; i < 3000; i++ {
			k := fmt.Sprintf("n%d_%d", file, i%1500)
			s, h, ok := it.find([]byte(k))
			w, had := want[k]
			if ok != had {
				t.Fatalf("file %d: find(%q) found %v, want %v", file, k, ok, had)
			}
			if !ok {
				it.add(k, h)
				want[k] = k
				continue
			}
			if s != w {
				t.Fatalf("file %d: find(%q) = %q", file, k, s)
			}
		}
		if file > 0 {
			if _, _, ok := it.find([]byte(fmt.Sprintf("n%d_%d", file-1, 3))); ok {
				t.Fatalf("file %d: found a string of the previous file", file)
			}
		}
	}
	// A wrapped generation clears the slots: nothing old looks current
	// (the first generation is 1 again, the one "old" was added in).
	it = internTable{}
	it.reset()
	_, h, _ := it.find([]byte("old"))
	it.add("old", h)
	it.gen = ^uint32(0)
	it.reset()
	if _, _, ok := it.find([]byte("old")); ok {
		t.Fatal("found a string from before the generation wrapped")
	}
}
