package codegraph

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nestedCalls is Python source with depth nested calls: x = f(f(...f(1)...)).
func nestedCalls(depth int) string {
	return "def f(a):\n    return a\n\nx = " + strings.Repeat("f(", depth) + "1" + strings.Repeat(")", depth) + "\n"
}

// BenchmarkNestedCalls indexes one file of deeply nested calls (issue 14:
// this was quadratic in the depth).
func BenchmarkNestedCalls(b *testing.B) {
	for _, depth := range []int{10000, 20000, 40000} {
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			dir := b.TempDir()
			src := nestedCalls(depth)
			if err := os.WriteFile(filepath.Join(dir, "deep.py"), []byte(src), 0o644); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(src)))
			for i := 0; i < b.N; i++ {
				p, err := Open(context.Background(), dir, Options{NoCache: true})
				if err != nil {
					b.Fatal(err)
				}
				p.Close()
			}
		})
	}
}

// hugePython is about size bytes of ordinary Python: functions calling one
// another, a class with methods, imports.
func hugePython(size int) []byte {
	var b strings.Builder
	b.WriteString("import os\nfrom collections import OrderedDict\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "def f%d(a, b=None):\n    \"\"\"Doc of f%d.\"\"\"\n    x = OrderedDict()\n    y = os.path.join(a, str(b))\n    return f%d(x) + len(y)\n\n", i, i, i/2)
		if i%50 == 0 {
			fmt.Fprintf(&b, "class C%d(object):\n    def m(self, v):\n        self.v = v\n        return self.n(v)\n\n    def n(self, v):\n        return v\n\n", i)
		}
	}
	return []byte(b.String())
}

// BenchmarkHugeFile indexes one 50 MB Python file (issue 14: 49 s and 5 GB
// RSS before), or the file $CODEGRAPH_HUGE_FILE. Run with -benchmem and look
// at the process's peak RSS with /usr/bin/time -v.
func BenchmarkHugeFile(b *testing.B) {
	dir := b.TempDir()
	src := hugePython(hugeSize())
	if f := os.Getenv("CODEGRAPH_HUGE_FILE"); f != "" {
		var err error
		if src, err = os.ReadFile(f); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "huge.py"), src, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		p, err := Open(context.Background(), dir, Options{NoCache: true, MaxFileSize: 64 << 20})
		if err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}

// hugeSize is the size of BenchmarkHugeFile's file: $CODEGRAPH_HUGE_MB or 50 MB.
func hugeSize() int {
	mb := 50
	if s := os.Getenv("CODEGRAPH_HUGE_MB"); s != "" {
		fmt.Sscan(s, &mb)
	}
	return mb << 20
}
