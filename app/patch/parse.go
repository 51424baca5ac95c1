package patch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrNoEdits is wrapped by the error Parse returns when an answer holds no
// edit block at all.
var ErrNoEdits = errors.New("no edits found: expected a unified diff (---/+++/@@), SEARCH/REPLACE blocks, or FILE: blocks")

// MaxAnswerBytes is the largest model answer Parse reads as a patch: an
// answer is held a few times over while it is parsed and applied, so this
// bounds the memory a patch can take.
const MaxAnswerBytes = 16 << 20

const (
	markSearch  = "<<<<<<< SEARCH"
	markDivider = "======="
	markReplace = ">>>>>>> REPLACE"
	markFile    = "FILE:"
)

// parser walks the lines of one answer.
type parser struct {
	lines []string
	block int
	edits []Edit
	// lastReplaceEnd is the line index just after the previous SEARCH/REPLACE
	// block, and lastReplacePath its path, for blocks that omit the path.
	lastReplaceEnd  int
	lastReplacePath string
}

// Parse reads a model answer strictly. It returns every edit block in answer
// order, or a *ParseError naming the first malformed block (or wrapping
// ErrNoEdits when there is none).
func Parse(answer string) (*Patch, error) {
	if len(answer) > MaxAnswerBytes {
		return nil, &ParseError{Line: 1, Msg: fmt.Sprintf("the answer is %d bytes, larger than the %d-byte limit for a patch; change large files in smaller steps", len(answer), MaxAnswerBytes)}
	}
	answer = strings.ReplaceAll(answer, "\r\n", "\n")
	p := &parser{lines: strings.Split(answer, "\n"), lastReplaceEnd: -1}
	if err := p.run(); err != nil {
		return nil, err
	}
	if len(p.edits) == 0 {
		return nil, fmt.Errorf("parse answer: %w", ErrNoEdits)
	}
	return &Patch{Edits: p.edits}, nil
}

func (p *parser) run() error {
	i := 0
	for i < len(p.lines) {
		line := p.lines[i]
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "--- ") && i+1 < len(p.lines) && strings.HasPrefix(p.lines[i+1], "+++ "):
			next, err := p.parseDiff(i)
			if err != nil {
				return err
			}
			i = next
		case trim == markSearch:
			next, err := p.parseReplace(i)
			if err != nil {
				return err
			}
			i = next
		case isFileMarker(line) && i+1 < len(p.lines) && fenceOf(p.lines[i+1]) != "":
			if i+2 < len(p.lines) && strings.TrimSpace(p.lines[i+2]) == markSearch {
				i++ // a fenced SEARCH/REPLACE block; the SEARCH line finds this path
				continue
			}
			next, err := p.parseFile(i)
			if err != nil {
				return err
			}
			i = next
		case strings.HasPrefix(line, "@@ ") || line == "@@":
			return &ParseError{Line: i + 1, Msg: "hunk header without a preceding \"--- a/PATH\" / \"+++ b/PATH\" file header"}
		case trim == markDivider || trim == markReplace:
			// A bare "=======" is common in prose (markdown underlines), so
			// only a REPLACE marker outside a block is an error.
			if trim == markReplace {
				return &ParseError{Line: i + 1, Msg: "\">>>>>>> REPLACE\" without a preceding \"<<<<<<< SEARCH\""}
			}
			i++
		default:
			i++
		}
	}
	return nil
}

// isFileMarker reports whether line is "FILE: path".
func isFileMarker(line string) bool {
	return strings.HasPrefix(line, markFile) && strings.TrimSpace(line[len(markFile):]) != ""
}

// fenceOf returns the backtick run opening a fenced block ("```" or longer),
// or "" when line is not a fence line.
func fenceOf(line string) string {
	t := strings.TrimRight(line, " \t")
	n := 0
	for n < len(t) && t[n] == '`' {
		n++
	}
	if n < 3 {
		return ""
	}
	if strings.Contains(t[n:], "`") {
		return ""
	}
	return t[:n]
}

// diffPath extracts the path from a "--- " or "+++ " header line.
func diffPath(line, prefix string) string {
	s := line[4:]
	if tab := strings.IndexByte(s, '\t'); tab >= 0 {
		s = s[:tab] // "--- a/x.py\t2024-01-01 ..." timestamps
	}
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return s
	}
	if strings.HasPrefix(s, prefix) && len(s) > len(prefix) {
		s = s[len(prefix):]
	}
	return s
}

// parseDiff reads one file section starting at the "--- " line i.
func (p *parser) parseDiff(i int) (int, error) {
	p.block++
	start := i
	oldPath := diffPath(p.lines[i], "a/")
	newPath := diffPath(p.lines[i+1], "b/")
	e := Edit{Kind: KindDiff, Block: p.block, AnswerLine: start + 1}
	switch {
	case oldPath == "/dev/null" && newPath == "/dev/null":
		return 0, &ParseError{Block: p.block, Line: start + 1, Msg: "both sides of the file header are /dev/null"}
	case oldPath == "/dev/null":
		e.Create, e.Path = true, newPath
	case newPath == "/dev/null":
		e.Delete, e.Path = true, oldPath
	default:
		if oldPath != newPath {
			return 0, &ParseError{Block: p.block, Line: start + 1, Path: newPath,
				Msg: fmt.Sprintf("renames are not supported (--- %s, +++ %s): use the same path on both lines", oldPath, newPath)}
		}
		e.Path = newPath
	}
	if e.Path == "" {
		return 0, &ParseError{Block: p.block, Line: start + 1, Msg: "empty path in the file header"}
	}
	i += 2
	for i < len(p.lines) && strings.HasPrefix(p.lines[i], "@@") {
		h, next, err := p.parseHunk(i, e.Path, len(e.Hunks)+1)
		if err != nil {
			return 0, err
		}
		e.Hunks = append(e.Hunks, h)
		i = next
	}
	if len(e.Hunks) == 0 {
		return 0, &ParseError{Block: p.block, Line: start + 1, Path: e.Path,
			Msg: "file header is not followed by a hunk header \"@@ -START,COUNT +START,COUNT @@\""}
	}
	if e.Create {
		for _, h := range e.Hunks {
			if h.OldLines != 0 {
				return 0, &ParseError{Block: p.block, Line: h.AnswerLine, Path: e.Path,
					Msg: "a new file (--- /dev/null) cannot have context or removed lines"}
			}
		}
	}
	if e.Delete {
		for _, h := range e.Hunks {
			if h.NewLines != 0 {
				return 0, &ParseError{Block: p.block, Line: h.AnswerLine, Path: e.Path,
					Msg: "a deleted file (+++ /dev/null) cannot have context or added lines"}
			}
		}
	}
	p.edits = append(p.edits, e)
	return i, nil
}

// parseHunkHeader parses "@@ -a[,b] +c[,d] @@[ section]".
func parseHunkHeader(line string) (h Hunk, ok bool) {
	if !strings.HasPrefix(line, "@@ -") {
		return h, false
	}
	rest := line[4:]
	end := strings.Index(rest, " @@")
	if end < 0 {
		return h, false
	}
	parts := strings.Fields(rest[:end])
	if len(parts) != 2 || !strings.HasPrefix(parts[1], "+") {
		return h, false
	}
	var okA, okB bool
	h.OldStart, h.OldLines, okA = parseRange(parts[0])
	h.NewStart, h.NewLines, okB = parseRange(parts[1][1:])
	return h, okA && okB
}

// parseRange parses "start[,count]"; count defaults to 1.
func parseRange(s string) (start, count int, ok bool) {
	a, b, has := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 || start > 1<<30 {
		return 0, 0, false
	}
	count = 1
	if has {
		count, err = strconv.Atoi(b)
		if err != nil || count < 0 || count > 1<<30 {
			return 0, 0, false
		}
	}
	return start, count, true
}

// parseHunk reads the hunk whose header is line i, by the header's counts.
func (p *parser) parseHunk(i int, path string, n int) (Hunk, int, error) {
	h, ok := parseHunkHeader(p.lines[i])
	if !ok {
		return h, 0, &ParseError{Block: p.block, Line: i + 1, Path: path,
			Msg: fmt.Sprintf("hunk %d: malformed header %q: expected \"@@ -START,COUNT +START,COUNT @@\" with numbers", n, p.lines[i])}
	}
	h.AnswerLine = i + 1
	oldLeft, newLeft := h.OldLines, h.NewLines
	i++
	for oldLeft > 0 || newLeft > 0 {
		if i >= len(p.lines) {
			return h, 0, p.countErr(h, n, path, oldLeft, newLeft, "the answer ended")
		}
		line := p.lines[i]
		var op byte
		var text string
		switch {
		case line == "":
			op, text = ' ', ""
		case line[0] == ' ' || line[0] == '-' || line[0] == '+':
			op, text = line[0], line[1:]
		case line[0] == '\\':
			if err := markNoEOL(&h, i, p, path); err != nil {
				return h, 0, err
			}
			i++
			continue
		default:
			return h, 0, p.countErr(h, n, path, oldLeft, newLeft,
				fmt.Sprintf("line %d %q does not start with ' ', '-' or '+'", i+1, clip(line)))
		}
		if strings.HasPrefix(line, "--- ") && i+1 < len(p.lines) && strings.HasPrefix(p.lines[i+1], "+++ ") {
			return h, 0, p.countErr(h, n, path, oldLeft, newLeft, fmt.Sprintf("a new file header started at line %d", i+1))
		}
		switch op {
		case ' ':
			oldLeft--
			newLeft--
		case '-':
			oldLeft--
		case '+':
			newLeft--
		}
		if oldLeft < 0 || newLeft < 0 {
			return h, 0, p.countErr(h, n, path, oldLeft, newLeft, fmt.Sprintf("line %d goes past the counts", i+1))
		}
		h.Lines = append(h.Lines, Line{Op: op, Text: text})
		i++
	}
	if i < len(p.lines) && strings.HasPrefix(p.lines[i], "\\") {
		if err := markNoEOL(&h, i, p, path); err != nil {
			return h, 0, err
		}
		i++
	}
	return h, i, nil
}

// markNoEOL applies a "\ No newline at end of file" line to the hunk's last line.
func markNoEOL(h *Hunk, i int, p *parser, path string) error {
	if len(h.Lines) == 0 {
		return &ParseError{Block: p.block, Line: i + 1, Path: path, Msg: "\"\\ No newline at end of file\" before any hunk line"}
	}
	h.Lines[len(h.Lines)-1].NoEOL = true
	return nil
}

func (p *parser) countErr(h Hunk, n int, path string, oldLeft, newLeft int, why string) error {
	gotOld := h.OldLines - oldLeft
	gotNew := h.NewLines - newLeft
	return &ParseError{Block: p.block, Line: h.AnswerLine, Path: path,
		Msg: fmt.Sprintf("hunk %d: header says %d old and %d new lines but %s after %d old and %d new; fix the counts in \"@@ -%d,%d +%d,%d @@\" or the hunk body",
			n, h.OldLines, h.NewLines, why, gotOld, gotNew, h.OldStart, h.OldLines, h.NewStart, h.NewLines)}
}

// clip shortens s for an error message to at most 60 bytes, cutting at a
// rune boundary.
func clip(s string) string {
	if len(s) <= 60 {
		return s
	}
	n := 60
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// replacePath finds the path of the SEARCH block at line i: the closest
// previous line (one fence line may sit between), which must hold the path
// alone. A block separated from the previous SEARCH/REPLACE block only by
// blank or fence lines inherits its path.
func (p *parser) replacePath(i int) (string, error) {
	if p.lastReplacePath != "" && p.lastReplaceEnd >= 0 && p.lastReplaceEnd <= i {
		inherit := true
		for k := p.lastReplaceEnd; k < i; k++ {
			if strings.TrimSpace(p.lines[k]) != "" && fenceOf(p.lines[k]) == "" {
				inherit = false
				break
			}
		}
		if inherit {
			return p.lastReplacePath, nil
		}
	}
	j := i - 1
	if j >= 0 && fenceOf(p.lines[j]) != "" {
		j--
	}
	if j < 0 {
		return "", &ParseError{Block: p.block, Line: i + 1, Msg: "\"<<<<<<< SEARCH\" must be preceded by a line holding the file path"}
	}
	cand := strings.TrimSpace(p.lines[j])
	if strings.HasPrefix(cand, markFile) {
		cand = strings.TrimSpace(cand[len(markFile):])
	}
	cand = strings.Trim(cand, "`*")
	if cand == "" || strings.ContainsAny(cand, " \t") || strings.HasPrefix(cand, "<<<<<<<") || strings.HasPrefix(cand, ">>>>>>>") {
		return "", &ParseError{Block: p.block, Line: i + 1,
			Msg: fmt.Sprintf("the line before \"<<<<<<< SEARCH\" must be the file path alone (e.g. \"pkg/mod.py\"), got %q", clip(strings.TrimSpace(p.lines[j])))}
	}
	return cand, nil
}

// parseReplace reads the SEARCH/REPLACE block whose marker is line i.
func (p *parser) parseReplace(i int) (int, error) {
	p.block++
	start := i
	path, err := p.replacePath(i)
	if err != nil {
		return 0, err
	}
	i++
	var search, repl []string
	for ; i < len(p.lines) && strings.TrimSpace(p.lines[i]) != markDivider; i++ {
		t := strings.TrimSpace(p.lines[i])
		if t == markSearch || t == markReplace {
			return 0, &ParseError{Block: p.block, Line: i + 1, Path: path, Msg: fmt.Sprintf("found %q before \"=======\"", t)}
		}
		search = append(search, p.lines[i])
	}
	if i >= len(p.lines) {
		return 0, &ParseError{Block: p.block, Line: start + 1, Path: path, Msg: "\"<<<<<<< SEARCH\" is never followed by \"=======\""}
	}
	i++
	for ; i < len(p.lines) && strings.TrimSpace(p.lines[i]) != markReplace; i++ {
		t := strings.TrimSpace(p.lines[i])
		if t == markSearch || t == markDivider {
			return 0, &ParseError{Block: p.block, Line: i + 1, Path: path, Msg: fmt.Sprintf("found %q before \">>>>>>> REPLACE\"", t)}
		}
		repl = append(repl, p.lines[i])
	}
	if i >= len(p.lines) {
		return 0, &ParseError{Block: p.block, Line: start + 1, Path: path, Msg: "\"=======\" is never followed by \">>>>>>> REPLACE\""}
	}
	i++
	e := Edit{Kind: KindReplace, Path: path, Block: p.block, AnswerLine: start + 1,
		Search: joinLines(search), Replace: joinLines(repl)}
	p.edits = append(p.edits, e)
	p.lastReplaceEnd = i
	p.lastReplacePath = path
	return i, nil
}

// joinLines joins lines with a trailing newline ("" for no lines).
func joinLines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// parseFile reads a "FILE: path" block at line i.
func (p *parser) parseFile(i int) (int, error) {
	p.block++
	start := i
	path := strings.Trim(strings.TrimSpace(p.lines[i][len(markFile):]), "`*")
	if path == "" || strings.ContainsAny(path, " \t") {
		return 0, &ParseError{Block: p.block, Line: i + 1, Msg: fmt.Sprintf("\"FILE:\" must be followed by one path, got %q", clip(path))}
	}
	fence := fenceOf(p.lines[i+1])
	i += 2
	var body []string
	for ; i < len(p.lines); i++ {
		if strings.TrimRight(p.lines[i], " \t") == fence {
			break
		}
		body = append(body, p.lines[i])
	}
	if i >= len(p.lines) {
		return 0, &ParseError{Block: p.block, Line: start + 1, Path: path,
			Msg: fmt.Sprintf("the fenced block is never closed by a line %q", fence)}
	}
	i++
	p.edits = append(p.edits, Edit{Kind: KindFile, Path: path, Block: p.block, AnswerLine: start + 1, Content: joinLines(body)})
	return i, nil
}
