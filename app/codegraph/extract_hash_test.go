package codegraph

import (
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
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
// and the file's (when asked) that of the whole source, whatever the number
// of definitions (groups of four and the rest) and their lengths (empty,
// equal, nested, very different, longer or shorter than the file's).
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
			file := src[:rng.Intn(len(src))]
			got := hashDefs(file, clampDefs(defs, len(file)), trial%2 == 0)
			h := fnv.New64a()
			h.Write(file)
			if want := h.Sum64(); trial%2 == 0 && got != want || trial%2 == 1 && got != 0 {
				t.Fatalf("%d defs: file hash %x, want %x (asked: %v)", n, got, want, trial%2 == 0)
			}
			for _, d := range defs {
				h := fnv.New64a()
				h.Write(file[d.Start:d.End])
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

// clampDefs cuts defs' ranges to a source of n bytes.
func clampDefs(defs []defRec, n int) []defRec {
	for i := range defs {
		defs[i].Start, defs[i].End = min(defs[i].Start, uint32(n)), min(defs[i].End, uint32(n))
	}
	return defs
}

// TestIndexFileSums: a cold index without a cache (whose source files'
// hashes extract computes with their definitions) and one with a cache (where
// processOne hashes first, to compare) record the same content hash,
// hash/fnv's FNV-1a of the file, for source files and manifests alike.
func TestIndexFileSums(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"a.py":             "class A:\n    def f(self):\n        return 1\n\n\ndef g():\n    pass\n",
		"b.py":             "",
		"pkg/c.py":         "import os\nx = os.environ.get('X')\n",
		"requirements.txt": "requests\n",
	}
	for name, src := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, noCache := range []bool{true, false} {
		p := openBounded(t, root, Options{NoCache: noCache}, 60*time.Second)
		seen := 0
		for name, src := range files {
			fd := p.files[name]
			if fd == nil {
				continue
			}
			seen++
			h := fnv.New64a()
			h.Write([]byte(src))
			if fd.Sum != h.Sum64() {
				t.Errorf("NoCache %v: %s sum %x, want %x", noCache, name, fd.Sum, h.Sum64())
			}
		}
		if seen < 3 {
			t.Errorf("NoCache %v: only %d of the files indexed", noCache, seen)
		}
		p.Close()
	}
}
