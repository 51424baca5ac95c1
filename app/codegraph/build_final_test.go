package codegraph

import (
	"fmt"
	"hash/fnv"
	"math/rand"
	"reflect"
	"strconv"
	"sync"
	"testing"
)

// collectSample is what assemble takes of the files' unresolved samples:
// the first maxUnresolvedSample, files in order, base classes first.
func collectSample(files []*fileBuild) []UnresolvedRef {
	var out []UnresolvedRef
	for _, fb := range files {
		for _, r := range []*fileResult{fb.inh, fb.res} {
			if room := maxUnresolvedSample - len(out); room > 0 {
				out = append(out, r.sample[:min(room, len(r.sample))]...)
			}
		}
	}
	return out
}

// finalTrim, with files finishing in any order on several goroutines,
// keeps exactly the samples assemble reads (the report's sample is the
// untrimmed one), drops those of files past the prefix that fills it, and
// leaves each result's edges equal with no more than an eighth of slack.
func TestFinalTrimKeepsTheReportedSample(t *testing.T) {
	for seed := int64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		files := make([]*fileBuild, 60)
		for i := range files {
			fb := &fileBuild{inh: newResult(), res: newResult()}
			path := fmt.Sprintf("f%02d.py", i)
			for j := rng.Intn(3); j > 0; j-- {
				fb.inh.unresolvedRef(path, "inherit", fmt.Sprintf("B%d", j), int32(j))
			}
			for j := rng.Intn(25); j > 0; j-- {
				fb.res.unresolvedRef(path, "call", fmt.Sprintf("c%d", j), int32(j))
			}
			for j := rng.Intn(40); j > 0; j-- {
				fb.res.addEdge("a", fmt.Sprintf("t%d", j), EdgeCalls, int32(j))
			}
			files[i] = fb
		}
		want := collectSample(files)
		wantEdges := make([][]Edge, len(files))
		for i, fb := range files {
			wantEdges[i] = append([]Edge(nil), fb.res.edges...)
		}
		trim := newFinalTrim(files, nil)
		order := rng.Perm(len(files))
		var wg sync.WaitGroup
		ch := make(chan int)
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range ch {
					trim.done(files[i])
				}
			}()
		}
		for _, i := range order {
			ch <- i
		}
		close(ch)
		wg.Wait()
		if got := collectSample(files); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: the sample assemble reads changed (%d refs, want %d)", seed, len(got), len(want))
		}
		// Past the first file whose prefix holds the whole sample, nothing is kept.
		n, end := 0, len(files)
		for i, fb := range files {
			n += len(fb.inh.sample) + len(fb.res.sample)
			if n >= maxUnresolvedSample {
				end = i + 1
				break
			}
		}
		if len(want) == maxUnresolvedSample {
			for _, fb := range files[end:] {
				if fb.inh.sample != nil || fb.res.sample != nil {
					t.Fatalf("seed %d: a file after the prefix kept its sample", seed)
				}
			}
		}
		for i, fb := range files {
			if !reflect.DeepEqual(append([]Edge(nil), fb.res.edges...), wantEdges[i]) {
				t.Fatalf("seed %d: file %d's edges changed", seed, i)
			}
			if slack := cap(fb.res.edges) - len(fb.res.edges); slack > len(fb.res.edges)/8 {
				t.Fatalf("seed %d: file %d's edges keep %d unused of %d", seed, i, slack, cap(fb.res.edges))
			}
		}
	}
}

// A NoUpdates (CLI) index, which trims while it resolves, reports the same
// unresolved sample and counts as a normal index, on a project with more
// unresolved references than the sample holds, spread over enough files
// to be resolved in parallel.
func TestNoUpdatesSampleSameAsNormal(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 80; i++ {
		src := ""
		for j := 0; j < 6; j++ {
			src += fmt.Sprintf("def f%d():\n    missing_%d_%d()\n    also_missing%d.attr()\n", j, i, j, j)
		}
		files[fmt.Sprintf("pkg/m%02d.py", i)] = src
	}
	root := writeTree(t, files)
	ref := openT(t, root, Options{NoCache: true}).Report().Stats
	got := openT(t, root, Options{NoCache: true, NoUpdates: true}).Report().Stats
	if ref.Unresolved <= maxUnresolvedSample {
		t.Fatalf("fixture has %d unresolved references, want more than %d", ref.Unresolved, maxUnresolvedSample)
	}
	if !reflect.DeepEqual(got.UnresolvedSample, ref.UnresolvedSample) || got.Unresolved != ref.Unresolved ||
		!reflect.DeepEqual(got.UnresolvedByKind, ref.UnresolvedByKind) {
		t.Fatalf("NoUpdates sample %d refs (%d unresolved), normal %d (%d)", len(got.UnresolvedSample), got.Unresolved, len(ref.UnresolvedSample), ref.Unresolved)
	}
}

// nodeID's inline FNV-1a equals hash/fnv's over the same bytes (IDs are
// persisted: a different hash would change every node's ID).
func TestNodeIDMatchesFNV(t *testing.T) {
	ref := func(kind Kind, qual, p string, dup int) string {
		h := fnv.New64a()
		h.Write([]byte(kind))
		h.Write([]byte{0})
		h.Write([]byte(qual))
		h.Write([]byte{0})
		h.Write([]byte(p))
		if dup > 0 {
			h.Write([]byte{0})
			h.Write(strconv.AppendInt(nil, int64(dup), 10))
		}
		return hex16(h.Sum64())
	}
	for _, c := range []struct {
		kind    Kind
		qual, p string
		dup     int
	}{
		{KindFile, "a/b.py", "a/b.py", 0},
		{KindFunction, "pkg.mod.f", "pkg/mod.py", 0},
		{KindMethod, "pkg.mod.C.prop", "pkg/mod.py", 1},
		{KindMethod, "pkg.mod.C.prop", "pkg/mod.py", 12345},
		{KindPackage, "pypi:requests", "", 0},
		{"", "", "", 0},
		{KindClass, "é\x00x", "ü/ß.py", 7},
	} {
		if got, want := nodeID(c.kind, c.qual, c.p, c.dup), ref(c.kind, c.qual, c.p, c.dup); got != want {
			t.Errorf("nodeID(%q, %q, %q, %d) = %s, want %s", c.kind, c.qual, c.p, c.dup, got, want)
		}
	}
}
