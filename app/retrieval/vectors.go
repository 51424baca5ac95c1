package retrieval

import (
	"container/heap"
	"fmt"
	"runtime"
	"sync"
)

// Vectors is a flat, exact cosine-similarity index over unit vectors: one
// contiguous matrix scanned in parallel, top-k kept in small heaps. Exact
// search is fast enough for a project's nodes (see BenchmarkVectorsSearch)
// and needs no tuning or training.
type Vectors struct {
	dim  int
	ids  []string
	data []float32 // len(ids)*dim
}

// NewVectors returns an empty index of dim-dimensional vectors.
func NewVectors(dim int) *Vectors { return &Vectors{dim: dim} }

// Dim is the vector dimension.
func (v *Vectors) Dim() int { return v.dim }

// Len is the number of vectors.
func (v *Vectors) Len() int { return len(v.ids) }

// Add appends a unit vector for id.
func (v *Vectors) Add(id string, vec []float32) error {
	if len(vec) != v.dim {
		return fmt.Errorf("vector for %s has %d dimensions, index has %d", id, len(vec), v.dim)
	}
	v.ids = append(v.ids, id)
	v.data = append(v.data, vec...)
	return nil
}

// Hit is a vector search result.
type Hit struct {
	ID    string
	Score float32 // cosine similarity (dot product of unit vectors)
}

// Search returns the k vectors most similar to q, best first.
func (v *Vectors) Search(q []float32, k int) []Hit {
	n := len(v.ids)
	if k <= 0 || n == 0 || len(q) != v.dim {
		return nil
	}
	k = min(k, n)
	workers := min(runtime.GOMAXPROCS(0), max(1, n/4096))
	parts := make([]hitHeap, workers)
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min(n, (w+1)*per)
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			h := make(hitHeap, 0, k+1)
			dim := v.dim
			for i := lo; i < hi; i++ {
				s := dot(q, v.data[i*dim:(i+1)*dim])
				if len(h) < k {
					heap.Push(&h, scoredIdx{i, s})
				} else if s > h[0].s {
					h[0] = scoredIdx{i, s}
					heap.Fix(&h, 0)
				}
			}
			parts[w] = h
		}(w, lo, hi)
	}
	wg.Wait()
	all := make(hitHeap, 0, k*workers)
	for _, p := range parts {
		all = append(all, p...)
	}
	// sort best first (ties by position, deterministic)
	sortScored(all)
	if len(all) > k {
		all = all[:k]
	}
	out := make([]Hit, len(all))
	for i, s := range all {
		out[i] = Hit{v.ids[s.i], s.s}
	}
	return out
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 {
		x, y := a[:8:8], b[:8:8]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
		a, b = a[8:], b[8:]
	}
	for i := range a {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}

type scoredIdx struct {
	i int
	s float32
}

// hitHeap is a min-heap on score (worst on top).
type hitHeap []scoredIdx

func (h hitHeap) Len() int { return len(h) }
func (h hitHeap) Less(a, b int) bool {
	if h[a].s != h[b].s {
		return h[a].s < h[b].s
	}
	return h[a].i > h[b].i
}
func (h hitHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *hitHeap) Push(x any)   { *h = append(*h, x.(scoredIdx)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func sortScored(s []scoredIdx) {
	// small k: insertion sort, best first
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && (s[j].s > s[j-1].s || s[j].s == s[j-1].s && s[j].i < s[j-1].i); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
