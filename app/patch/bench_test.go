package patch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigFile is n lines of Python-like code.
func bigFile(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			fmt.Fprintf(&b, "def f%d(x):\n", i)
		} else {
			fmt.Fprintf(&b, "    x = x + %d  # line %d\n", i, i)
		}
	}
	return b.String()
}

// editEvery changes one line in every `every` lines.
func editEvery(s string, every int) string {
	lines := strings.Split(s, "\n")
	for i := every / 2; i < len(lines)-1; i += every {
		lines[i] += " # edited"
	}
	return strings.Join(lines, "\n")
}

func BenchmarkParseSearchReplace(b *testing.B) {
	var ans strings.Builder
	ans.WriteString("Here are the changes.\n\n")
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&ans, "pkg/mod%d.py\n```python\n<<<<<<< SEARCH\n%s=======\n%s>>>>>>> REPLACE\n```\n\n", i, bigFile(20), editEvery(bigFile(20), 5))
	}
	s := ans.String()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, err := Parse(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseLargeDiff(b *testing.B) {
	old := bigFile(10000)
	d, _, _ := UnifiedDiff("big.py", old, editEvery(old, 50), true, true)
	b.SetBytes(int64(len(d)))
	for b.Loop() {
		if _, err := Parse(d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplyHunks10kLines200Hunks(b *testing.B) {
	old := bigFile(10000)
	d, _, _ := UnifiedDiff("big.py", old, editEvery(old, 50), true, true)
	p, err := Parse(d)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		if _, _, err := applyEdit(p.Edits[0], old, true, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnifiedDiff10kLines(b *testing.B) {
	old := bigFile(10000)
	neu := editEvery(old, 50)
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		UnifiedDiff("big.py", old, neu, true, true)
	}
}

// BenchmarkApplyOnDisk measures confined, atomic (temp + fsync + rename)
// application of a one-file patch, and its revert.
func BenchmarkApplyOnDisk(b *testing.B) {
	root := b.TempDir()
	old := bigFile(300)
	if err := os.WriteFile(filepath.Join(root, "m.py"), []byte(old), 0o644); err != nil {
		b.Fatal(err)
	}
	d, _, _ := UnifiedDiff("m.py", old, editEvery(old, 30), true, true)
	p, err := Parse(d)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		cs, err := Apply(ctx, root, p, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := Revert(ctx, cs, false); err != nil {
			b.Fatal(err)
		}
	}
}
