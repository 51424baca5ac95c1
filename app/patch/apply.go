package patch

import (
	"fmt"
	"slices"
	"strings"
)

// Options tune how a patch is applied.
type Options struct {
	// AllowOverwrite lets a whole-file (FILE:) block or a diff creating a
	// file replace a file that already exists.
	AllowOverwrite bool
}

// fileText is a file's content split into lines.
type fileText struct {
	lines []string
	eol   bool // the last line ends with a newline (true for an empty file)
}

func splitText(s string) fileText {
	if s == "" {
		return fileText{eol: true}
	}
	eol := strings.HasSuffix(s, "\n")
	if eol {
		s = s[:len(s)-1]
	}
	return fileText{lines: strings.Split(s, "\n"), eol: eol}
}

// String joins the lines back into the file's text.
func (f fileText) String() string {
	if len(f.lines) == 0 {
		return ""
	}
	s := strings.Join(f.lines, "\n")
	if f.eol {
		s += "\n"
	}
	return s
}

// applyEdit applies one edit to a file's content. exists says whether the
// file exists before the edit; the results say what it holds after.
func applyEdit(e Edit, content string, exists bool, opts Options) (string, bool, error) {
	fail := func(format string, a ...any) (string, bool, error) {
		return "", false, &ApplyError{Block: e.Block, Path: e.Path, Msg: fmt.Sprintf(format, a...)}
	}
	switch e.Kind {
	case KindFile:
		if exists && !opts.AllowOverwrite {
			return fail("the file already exists; FILE: blocks only create new files, change existing files with a unified diff or SEARCH/REPLACE blocks")
		}
		return e.Content, true, nil
	case KindReplace:
		return applyReplace(e, content, exists)
	case KindDiff:
		switch {
		case e.Create:
			if exists && !opts.AllowOverwrite {
				return fail("the diff creates the file (--- /dev/null) but it already exists")
			}
			var out []string
			noEOL := false
			for _, h := range e.Hunks {
				for _, l := range h.Lines {
					out = append(out, l.Text)
					noEOL = l.NoEOL
				}
			}
			return fileText{lines: out, eol: !noEOL}.String(), true, nil
		case !exists:
			return fail("the file does not exist; to create it use \"--- /dev/null\" or a FILE: block")
		case e.Delete:
			var old []string
			for _, h := range e.Hunks {
				for _, l := range h.Lines {
					old = append(old, l.Text)
				}
			}
			ft := splitLines(content)
			if !slices.Equal(ft.lines, stripCR(old)) {
				return fail("the diff deletes the file (+++ /dev/null) but its removed lines are not the file's whole content")
			}
			return "", false, nil
		default:
			out, err := applyHunks(e, content)
			if err != nil {
				return "", false, err
			}
			return out, true, nil
		}
	}
	return fail("unknown edit kind %q", e.Kind)
}

// applyReplace applies a SEARCH/REPLACE block. The SEARCH text is whole
// lines; it matches the file's lines whatever their line ending ("\r\n" or
// "\n"), and the REPLACE lines get the file's own line ending.
func applyReplace(e Edit, content string, exists bool) (string, bool, error) {
	fail := func(format string, a ...any) (string, bool, error) {
		return "", false, &ApplyError{Block: e.Block, Path: e.Path, Msg: fmt.Sprintf(format, a...)}
	}
	if e.Search == "" {
		if exists && content != "" {
			return fail("the SEARCH section is empty but the file exists and is not empty; quote the exact lines to replace")
		}
		return e.Replace, true, nil
	}
	if !exists {
		return fail("the file does not exist; to create it leave the SEARCH section empty or use a FILE: block")
	}
	ft := splitLines(content)
	search := stripCR(splitText(e.Search).lines)
	at, n := findLines(ft.lines, search)
	switch {
	case n == 0:
		msg := "the SEARCH text was not found in the file; it must match the file's lines exactly"
		joined := strings.Join(ft.lines, "\n")
		if ns := normalizeSpace(joined); ns != "" && strings.Contains(ns, normalizeSpace(strings.Join(search, "\n"))) {
			msg += " (it matches only when whitespace is ignored: copy the indentation exactly)"
		} else if first := firstMissingLine(ft.lines, search); first != "" {
			msg += fmt.Sprintf(" (no line of the file reads %q)", clip(first))
		}
		return fail("%s", msg)
	case n > 1:
		return fail("the SEARCH text occurs %d times in the file; include more surrounding lines so it matches exactly once", n)
	}
	out := lineText{eol: ft.eol, crlf: ft.crlf}
	for i := 0; i < at; i++ {
		out.keep(ft, i)
	}
	if e.Replace != "" {
		for _, l := range stripCR(splitText(e.Replace).lines) {
			out.add(l)
		}
	}
	for i := at + len(search); i < len(ft.lines); i++ {
		out.keep(ft, i)
	}
	if len(out.lines) == 0 {
		return "", true, nil
	}
	return out.String(), true, nil
}

// findLines returns the first index where want occurs as consecutive lines
// of lines, and how many times it occurs (overlapping ones counted).
func findLines(lines, want []string) (first, n int) {
	first = -1
	if len(want) == 0 {
		return first, 0
	}
	for p := 0; p+len(want) <= len(lines); p++ {
		if lines[p] == want[0] && slices.Equal(lines[p:p+len(want)], want) {
			if first < 0 {
				first = p
			}
			n++
		}
	}
	return first, n
}

// normalizeSpace collapses every run of whitespace to one space.
func normalizeSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// firstMissingLine returns the first non-blank line of search that is not a
// line of the file.
func firstMissingLine(lines, search []string) string {
	have := make(map[string]bool, len(lines))
	for _, l := range lines {
		have[l] = true
	}
	for _, l := range search {
		if strings.TrimSpace(l) != "" && !have[l] {
			return l
		}
	}
	return ""
}

// applyHunks applies a diff's hunks in order. Each hunk's old side must match
// exactly; the nearest matching position to the header's (shifted by the
// offset the previous hunk was found at, as GNU patch does) is used.
// Positions are in the original file's coordinates throughout.
func applyHunks(e Edit, content string) (string, error) {
	ft := splitLines(content)
	lines := ft.lines
	eol := ft.eol
	out := lineText{crlf: ft.crlf}
	out.lines = make([]string, 0, len(lines)+16)
	out.cr = make([]bool, 0, len(lines)+16)
	cursor := 0 // original lines before cursor are consumed
	shift := 0  // how far from its header the previous hunk was found
	for n, h := range e.Hunks {
		var old []string
		hasNew := false
		newNoEOL := false
		for _, l := range h.Lines {
			if l.Op != '+' {
				old = append(old, strings.TrimSuffix(l.Text, "\r"))
			}
			if l.Op != '-' {
				hasNew = true
				newNoEOL = l.NoEOL
			}
		}
		base := h.OldStart - 1 // where the hunk sat in the original file
		if len(old) == 0 {
			base = h.OldStart // "-K,0": insert after line K
		}
		var pos int
		if len(old) == 0 {
			pos = min(max(base+shift, cursor), len(lines))
		} else {
			pos = nearestMatch(lines, old, base+shift, cursor)
			if pos < 0 {
				return "", &ApplyError{Block: e.Block, Path: e.Path, Msg: hunkMismatch(n+1, h, lines, old, base+shift)}
			}
		}
		for i := cursor; i < pos; i++ {
			out.keep(ft, i)
		}
		k := pos
		for _, l := range h.Lines {
			switch l.Op {
			case ' ':
				out.keep(ft, k) // a context line keeps its exact bytes
				k++
			case '-':
				k++
			default:
				out.add(strings.TrimSuffix(l.Text, "\r"))
			}
		}
		cursor = pos + len(old)
		if cursor == len(lines) {
			if hasNew {
				eol = !newNoEOL
			} else if len(old) > 0 {
				eol = true // the new last line was followed by the removed ones
			}
		}
		shift = pos - base
	}
	for i := cursor; i < len(lines); i++ {
		out.keep(ft, i)
	}
	out.eol = eol
	return out.String(), nil
}

// nearestMatch finds the start of old in lines at or after floor closest to
// expected (the earlier one on a tie), or -1.
func nearestMatch(lines, old []string, expected, floor int) int {
	last := len(lines) - len(old)
	if last < floor {
		return -1
	}
	expected = min(max(expected, floor), last)
	at := func(p int) bool { return lines[p] == old[0] && slices.Equal(lines[p:p+len(old)], old) }
	for d := 0; ; d++ {
		lo, hi := expected-d, expected+d
		if lo < floor && hi > last {
			return -1
		}
		if lo >= floor && at(lo) {
			return lo
		}
		if d > 0 && hi <= last && at(hi) {
			return hi
		}
	}
}

// hunkMismatch explains why a hunk's old side was not found.
func hunkMismatch(n int, h Hunk, lines, old []string, expected int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "hunk %d (@@ -%d,%d +%d,%d @@): its context and removed lines were not found in the file (expected near line %d); hunks must quote the current file exactly",
		n, h.OldStart, h.OldLines, h.NewStart, h.NewLines, expected+1)
	if expected < 0 {
		expected = 0
	}
	if expected < len(lines) {
		end := min(expected+len(old), len(lines), expected+6)
		b.WriteString(". The file there reads:\n")
		for i := expected; i < end; i++ {
			fmt.Fprintf(&b, "%5d | %s\n", i+1, lines[i])
		}
	} else {
		fmt.Fprintf(&b, "; the file has only %d lines", len(lines))
	}
	return strings.TrimRight(b.String(), "\n")
}

// indexAtLineStart returns the first index of sub in s that starts a line, or -1.
func indexAtLineStart(s, sub string) int {
	from := 0
	for {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			return -1
		}
		i += from
		if i == 0 || s[i-1] == '\n' {
			return i
		}
		from = i + 1
	}
}

// countAtLineStart counts the occurrences of sub in s that start a line.
func countAtLineStart(s, sub string) int {
	n := 0
	for i := 0; i+len(sub) <= len(s); {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			break
		}
		j += i
		if j == 0 || s[j-1] == '\n' {
			n++
		}
		i = j + 1
	}
	return n
}
