package codegraph

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// heapCount is the process's allocation total and GC cycle count
// (TestUpdateScale's figures per series).
type heapCount struct {
	alloc uint64
	gcs   uint32
}

func readHeap() heapCount {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return heapCount{ms.TotalAlloc, ms.NumGC}
}

// Sub returns what happened between h0 and h.
func (h heapCount) Sub(h0 heapCount) heapCount {
	return heapCount{h.alloc - h0.alloc, h.gcs - h0.gcs}
}

// allocProfile samples allocations (one per 64 KB) from now on and returns
// the function that writes the allocation profile to path.
func allocProfile(path string) func() {
	runtime.MemProfileRate = 64 << 10
	return func() {
		runtime.GC() // the profile shows allocations as of the last GC
		if f, err := os.Create(path); err == nil {
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
}

// msList formats durations as whole milliseconds.
func msList(ds []time.Duration) string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d", d.Milliseconds())
	}
	return b.String()
}
