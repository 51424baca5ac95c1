package patch

import (
	"fmt"
	"strings"
)

// maxDiffD bounds the edit distance Myers' algorithm explores (its memory
// grows with the square); larger edits are shown as a whole replacement of
// the changed region.
const maxDiffD = 2000

// UnifiedDiff renders old → new as a git-style unified diff with 3 lines of
// context (the same format Parse accepts) and counts the added and removed
// lines. A missing side is shown as /dev/null.
func UnifiedDiff(path, old, new string, oldExists, newExists bool) (diff string, added, removed int) {
	if oldExists && newExists && old == new {
		return "", 0, 0
	}
	a, b := splitText(old), splitText(new)
	// A last line without a newline differs from the same text with one:
	// mark it so the comparison and the output both see it.
	al, bl := tagNoEOL(a), tagNoEOL(b)
	ops := lineOps(al, bl)
	var sb strings.Builder
	from, to := "a/"+path, "b/"+path
	if !oldExists {
		from = "/dev/null"
	}
	if !newExists {
		to = "/dev/null"
	}
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, to)
	const ctx = 3
	// group ops into hunks
	i := 0
	for i < len(ops) {
		if ops[i].op == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].op == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		oldStart, newStart := ops[start].ai+1, ops[start].bi+1
		var oldN, newN int
		var body strings.Builder
		for _, o := range ops[start:end] {
			switch o.op {
			case ' ':
				oldN++
				newN++
			case '-':
				oldN++
				removed++
			case '+':
				newN++
				added++
			}
			body.WriteByte(o.op)
			body.WriteString(strings.TrimSuffix(o.text, noEOLMark))
			body.WriteByte('\n')
			if strings.HasSuffix(o.text, noEOLMark) {
				body.WriteString("\\ No newline at end of file\n")
			}
		}
		if oldN == 0 {
			oldStart--
		}
		if newN == 0 {
			newStart--
		}
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", oldStart, oldN, newStart, newN)
		sb.WriteString(body.String())
		i = end
	}
	return sb.String(), added, removed
}

type lineOp struct {
	op     byte
	text   string
	ai, bi int // index in a (for ' ' and '-') and b (for ' ' and '+'); the other is the position reached
}

// lineOps computes an edit script from a to b: common prefix and suffix
// trimmed, Myers' O(ND) shortest edit script on the middle.
func lineOps(a, b []string) []lineOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []lineOp
	for i := 0; i < pre; i++ {
		ops = append(ops, lineOp{' ', a[i], i, i})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if mid, ok := myers(ma, mb, maxDiffD); ok {
		for _, o := range mid {
			o.ai += pre
			o.bi += pre
			ops = append(ops, o)
		}
	} else {
		n, m := len(ma), len(mb)
		for i := 0; i < n; i++ {
			ops = append(ops, lineOp{'-', ma[i], pre + i, pre})
		}
		for j := 0; j < m; j++ {
			ops = append(ops, lineOp{'+', mb[j], pre + n, pre + j})
		}
	}
	for k := 0; k < suf; k++ {
		ops = append(ops, lineOp{' ', a[len(a)-suf+k], len(a) - suf + k, len(b) - suf + k})
	}
	return ops
}

// noEOLMark tags a last line that has no trailing newline.
const noEOLMark = "\x00"

func tagNoEOL(f fileText) []string {
	if f.eol || len(f.lines) == 0 {
		return f.lines
	}
	out := append([]string{}, f.lines...)
	out[len(out)-1] += noEOLMark
	return out
}

// myers returns a shortest edit script from a to b (Myers 1986, greedy
// forward search with one snapshot of the frontier per edit distance), or
// ok=false when the distance exceeds maxD. Removals come before additions.
func myers(a, b []string, maxD int) ([]lineOp, bool) {
	// Compare interned line numbers, not strings, in the inner loop.
	ids := make(map[string]int32, len(a))
	intern := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	ha, hb := intern(a), intern(b)
	n, m := len(a), len(b)
	maxD = min(maxD, n+m)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	found := false
	for d := 0; d <= maxD && !found; d++ {
		snap := make([]int, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an addition
			} else {
				x = v[off+k-1] + 1 // right: a removal
			}
			y := x - k
			for x < n && y < m && ha[x] == hb[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
	}
	if !found {
		return nil, false
	}
	var rev []lineOp
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		vd := trace[d] // the frontier after distance d-1, k in -d..d
		at := func(k int) int { return vd[k+d] }
		k := x - y
		var prevK int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, lineOp{' ', a[x-1], x - 1, y - 1})
			x--
			y--
		}
		if x == prevX {
			rev = append(rev, lineOp{'+', b[y-1], x, y - 1})
			y--
		} else {
			rev = append(rev, lineOp{'-', a[x-1], x - 1, y})
			x--
		}
	}
	for x > 0 && y > 0 {
		rev = append(rev, lineOp{' ', a[x-1], x - 1, y - 1})
		x--
		y--
	}
	ops := make([]lineOp, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	// Within each run of changes, list removals before additions.
	for i := 0; i < len(ops); {
		if ops[i].op == ' ' {
			i++
			continue
		}
		j := i
		for j < len(ops) && ops[j].op != ' ' {
			j++
		}
		var dels, adds []lineOp
		for _, o := range ops[i:j] {
			if o.op == '-' {
				dels = append(dels, o)
			} else {
				adds = append(adds, o)
			}
		}
		copy(ops[i:], dels)
		copy(ops[i+len(dels):], adds)
		i = j
	}
	ia, ib := 0, 0
	for i := range ops {
		ops[i].ai, ops[i].bi = ia, ib
		switch ops[i].op {
		case ' ':
			ia++
			ib++
		case '-':
			ia++
		case '+':
			ib++
		}
	}
	return ops, true
}
