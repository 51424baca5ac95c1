package codegraph

import (
	"context"
	"os"
	"testing"
)

// BenchmarkWalk walks the folder named by CODELOOM_BENCH_WALK (for example
// a copy of a large corpus): the stat walk a warm query pays to check that
// the persisted graph is current.
func BenchmarkWalk(b *testing.B) {
	root := os.Getenv("CODELOOM_BENCH_WALK")
	if root == "" {
		b.Skip("set CODELOOM_BENCH_WALK to a folder")
	}
	byExt := langByExt(registry())
	for i := 0; i < b.N; i++ {
		w := &walker{root: root, maxSize: DefaultMaxFileSize, byExt: byExt, visited: map[dirID]bool{},
			res: &walkResult{info: &projectInfo{goModules: map[string]string{}, dirs: map[string]bool{}, initDirs: map[string]bool{}}}}
		if err := w.dir(context.Background(), "", nil); err != nil {
			b.Fatal(err)
		}
		if len(w.res.files) == 0 {
			b.Fatal("no files")
		}
	}
}
