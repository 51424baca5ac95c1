package cli

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"codeloom/app/codegraph"
)

func TestQuoteName(t *testing.T) {
	cases := map[string]string{
		"app/main.py":    "app/main.py",
		"with space.py":  "with space.py",
		"café.py":        "café.py",
		"a\nb.py":        `"a\nb.py"`,
		"tab\there.py":   `"tab\there.py"`,
		"caf\xe9.py":     `"caf\xe9.py"`,
		`"quoted".py`:    `"\"quoted\".py"`,
		"esc\x1b[31m.py": `"esc\x1b[31m.py"`,
		"":               "",
	}
	for in, want := range cases {
		got := quoteName(in)
		if got != want {
			t.Errorf("quoteName(%q) = %s, want %s", in, got, want)
		}
		if got != in {
			back, err := strconv.Unquote(got)
			if err != nil || back != in {
				t.Errorf("quoteName(%q) = %s does not unquote back: %q %v", in, got, back, err)
			}
		}
	}
}

// needsQuote's ASCII fast path decides as the general rule (valid UTF-8,
// every rune printable or a space, no leading double quote) for every byte
// alone, at the start, in the middle and at the end of a name, and for
// names mixing ASCII with other runes.
func TestNeedsQuoteFastPathAgrees(t *testing.T) {
	general := func(s string) bool {
		if s == "" || strings.HasPrefix(s, `"`) || !utf8.ValidString(s) {
			return s != ""
		}
		for _, r := range s {
			if !unicode.IsPrint(r) && r != ' ' {
				return true
			}
		}
		return false
	}
	var names []string
	for b := 0; b < 256; b++ {
		c := string([]byte{byte(b)})
		names = append(names, c, c+"x.py", "a/"+c+"/b.py", "x.py"+c, "é"+c, c+"é")
	}
	names = append(names, "", "plain/path.py", `"q"`, `a"q"`, " nbsp", "zero​width", "日本.py")
	for _, s := range names {
		if got, want := needsQuote(s), general(s); got != want {
			t.Errorf("needsQuote(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestIndexSummaryOneLinePerProblem: a file name with a newline used to
// split its report line in two.
func TestIndexSummaryOneLinePerProblem(t *testing.T) {
	var b bytes.Buffer
	writeIndexSummary(&b, codegraph.Report{Root: "/p", Problems: []codegraph.Problem{
		{Path: "evil\nskipped fake.py: injected", Reason: "syntax errors (indexed what parses)"},
		{Path: "ok.py", Reason: "too big", Skipped: true},
	}, Skipped: 1})
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "  ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("want 2 problem lines, got %d:\n%s", len(lines), b.String())
	}
	if want := `  indexed "evil\nskipped fake.py: injected": syntax errors`; !strings.HasPrefix(lines[0], want) {
		t.Errorf("line %q, want prefix %q", lines[0], want)
	}
}
