package codegraph

import (
	"fmt"
	"math/rand"
	"reflect"
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
		trim := newFinalTrim(files)
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
