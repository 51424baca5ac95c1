package cli

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// quoteName returns a file name (or path) as it is safe to print on one
// line of text output: unchanged when it is valid UTF-8 made of printable
// characters, otherwise Go-quoted (strconv.Quote: "a\nb.py", "\xff.py"),
// which keeps every byte recoverable and the report one line per entry.
// A name that itself starts with a double quote is quoted too, so a quoted
// name is never ambiguous.
func quoteName(s string) string {
	if needsQuote(s) {
		return strconv.Quote(s)
	}
	return s
}

// needsQuote reports whether s has anything that would break or disguise a
// line of text output.
func needsQuote(s string) bool {
	// Printable ASCII (most names) is decided byte by byte: a control
	// byte or DEL needs quoting, a space does not; any other byte takes
	// the general path below.
	ascii := true
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= utf8.RuneSelf {
			ascii = false
			break
		}
		if b < ' ' || b == 0x7f {
			return true
		}
	}
	if ascii {
		return strings.HasPrefix(s, `"`)
	}
	if strings.HasPrefix(s, `"`) || !utf8.ValidString(s) {
		return s != ""
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return true
		}
	}
	return false
}
