package patch

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the LCS table; larger edits are shown as a whole
// replacement of the changed region.
const maxDiffCells = 4_000_000

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
// trimmed, an LCS table on the middle when small enough.
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
	n, m := len(ma), len(mb)
	if n*m <= maxDiffCells && n > 0 && m > 0 {
		// lcs[i][j] = LCS length of ma[i:], mb[j:]
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, lineOp{' ', ma[i], pre + i, pre + j})
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, lineOp{'-', ma[i], pre + i, pre + j})
				i++
			default:
				ops = append(ops, lineOp{'+', mb[j], pre + i, pre + j})
				j++
			}
		}
	} else {
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
