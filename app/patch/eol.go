package patch

import "strings"

// lineText is a file's content split into lines for matching across line
// endings: each line without its "\n" and without a "\r" before it, plus
// which lines ended with "\r\n", so lines a patch leaves alone keep their
// exact bytes and lines it adds get the file's own line ending.
type lineText struct {
	lines []string
	cr    []bool // cr[i]: line i ended with "\r\n"
	eol   bool   // the last line ends with a newline (true for an empty file)
	crlf  bool   // most terminated lines end with "\r\n": added lines do too
}

// splitLines splits s into a lineText. A "\r" on an unterminated last line
// is content, not a line ending.
func splitLines(s string) lineText {
	ft := splitText(s)
	t := lineText{lines: ft.lines, cr: make([]bool, len(ft.lines)), eol: ft.eol}
	crs, terminated := 0, 0
	for i, l := range t.lines {
		if i == len(t.lines)-1 && !t.eol {
			break
		}
		terminated++
		if strings.HasSuffix(l, "\r") {
			t.lines[i] = l[:len(l)-1]
			t.cr[i] = true
			crs++
		}
	}
	t.crlf = terminated > 0 && crs*2 > terminated
	return t
}

// String joins the lines back, each with its own line ending.
func (t lineText) String() string {
	if len(t.lines) == 0 {
		return ""
	}
	var b strings.Builder
	n := 0
	for _, l := range t.lines {
		n += len(l) + 2
	}
	b.Grow(n)
	for i, l := range t.lines {
		b.WriteString(l)
		if i == len(t.lines)-1 && !t.eol {
			break
		}
		if t.cr[i] {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// add appends a line with the ending the file's added lines get.
func (t *lineText) add(line string) {
	t.lines = append(t.lines, line)
	t.cr = append(t.cr, t.crlf)
}

// keep appends line i of src with its own ending.
func (t *lineText) keep(src lineText, i int) {
	t.lines = append(t.lines, src.lines[i])
	t.cr = append(t.cr, src.cr[i])
}

// stripCR removes one trailing "\r" from every line: lines a model quotes
// are compared without their line ending.
func stripCR(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = strings.TrimSuffix(l, "\r")
	}
	return out
}
