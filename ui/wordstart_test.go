package ui

import (
	"reflect"
	"testing"
)

func TestWordStartMatch(t *testing.T) {
	for _, c := range []struct {
		q, name string
		ok      bool
	}{
		{"storjson", "store_json", true},
		{"storjson", "StoreJSON", true},
		{"lintot", "line_total", true},
		{"ltot", "line_total", true},
		{"sj", "store_json", true},
		{"jsonstore", "store_json", false},
		{"xyz", "store_json", false},
	} {
		if got := wordStartMatch(c.q, c.name) > 0; got != c.ok {
			t.Errorf("wordStartMatch(%q, %q) = %v, want %v", c.q, c.name, got, c.ok)
		}
	}
	if wordStartMatch("storjson", "store_json") <= wordStartMatch("storjson", "store_big_json_file") {
		t.Error("a tighter match does not score higher")
	}
}

// nameWords slices an ASCII name in place; it splits every name as the
// rune-by-rune splitter does.
func TestNameWordsASCIIMatchesRunes(t *testing.T) {
	for _, n := range []string{"store_json", "StoreJSON", "HTTPServer", "getHTTPResponse", "__init__", "a.b-c/d e(f)g)",
		"ABC", "aB", "Ab", "X", "", "_", "JSONDecoder", "parse_args2", "v2Beta", "ABCdef", "abcDEF", "A_B_C", "..x..", "IOError",
		"naïve_Ström", "ÜberCase"} {
		if got, want := nameWords(n), nameWordsRunes(n); !reflect.DeepEqual(got, want) {
			t.Errorf("nameWords(%q) = %q, rune by rune %q", n, got, want)
		}
	}
}
