package codegraph

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// signature normalises a definition header: whitespace collapsed, trailing
// ":" or "{" dropped, capped in length.
func signature(s string) string {
	s = collapseSpace(s)
	s = strings.TrimRight(s, " :{")
	if len(s) > 300 {
		s = cutUTF8(s, 300) + "…"
	}
	return s
}

// collapseSpace returns strings.Join(strings.Fields(s), " "), in one pass and
// one allocation when s is ASCII (a definition's header, for every
// definition: Fields' slice and Join's copy were 0.5 % of a cold index).
func collapseSpace(s string) string {
	n, fields := 0, 0 // the result's length, exactly (it is kept)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf { // Fields' Unicode spaces
			return strings.Join(strings.Fields(s), " ")
		}
		if !isASCIISpace(c) {
			if i == 0 || isASCIISpace(s[i-1]) {
				fields++
			}
			n++
		}
	}
	if fields == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(n + fields - 1)
	for i := 0; i < len(s); {
		for i < len(s) && isASCIISpace(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isASCIISpace(s[j]) {
			j++
		}
		if j == i {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i:j])
		i = j
	}
	return b.String()
}

// isASCIISpace reports the ASCII bytes strings.Fields splits on.
func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// cutUTF8 returns at most n bytes of s, never splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// lineStart returns the offset of the first byte of the line holding
// byte i of src (just past the last newline before i, or 0).
func lineStart(src []byte, i int) int { return bytes.LastIndexByte(src[:i], '\n') + 1 }

// leadingComment returns the block of line comments (// or /* */) ending on
// the line right above byte start.
func leadingComment(src []byte, start uint32) string {
	ls := lineStart(src, int(start)) // the definition's line
	var lines []string
	end := ls
	for end > 0 {
		ps := lineStart(src, end-1) // the line above
		line := strings.TrimSpace(string(src[ps : end-1]))
		switch {
		case strings.HasPrefix(line, "//"):
			lines = append(lines, strings.TrimSpace(strings.TrimPrefix(line, "//")))
		case strings.HasSuffix(line, "*/"):
			// Walk back to the opening /*.
			j := bytes.LastIndex(src[:end], []byte("/*"))
			if j < 0 {
				return reverseJoin(lines)
			}
			body := string(src[j+2 : end-1])
			body = strings.TrimSuffix(strings.TrimSpace(body), "*/")
			var bl []string
			for _, l := range strings.Split(body, "\n") {
				l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "*"))
				bl = append(bl, l)
			}
			for k := len(bl) - 1; k >= 0; k-- {
				lines = append(lines, bl[k])
			}
			return strings.TrimSpace(reverseJoin(lines))
		default:
			return reverseJoin(lines)
		}
		end = ps
	}
	return reverseJoin(lines)
}

func reverseJoin(lines []string) string {
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return strings.ToValidUTF8(cutUTF8(strings.Join(lines, "\n"), 2000), "\uFFFD")
}

// argIndex counts the top-level commas in b, the text of an argument list
// from after its "(" to an argument: the argument's 0-based position. A
// starred argument before it makes the position unknowable (-1).
func argIndex(b []byte) int {
	depth, n := 0, 0
	fresh := true // nothing but spaces since the last top-level comma
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			n++
			fresh = true
			continue
		case (c == '*' || c == '.') && depth == 0 && fresh:
			return -1 // *args, ...spread: later positions are unknown
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		fresh = false
	}
	return n
}

// implicitToken is the keyword a statement-level @ref.implicit capture
// starts with ("with", "raise"), for patterns without a @name.
func implicitToken(src []byte, start uint32) string {
	for _, kw := range []string{"raise", "with"} {
		if int(start)+len(kw) <= len(src) && string(src[start:int(start)+len(kw)]) == kw {
			return kw
		}
	}
	return ""
}
