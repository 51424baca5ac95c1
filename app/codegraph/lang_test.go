package codegraph

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestQueriesCompile compiles every registered language's query.
func TestQueriesCompile(t *testing.T) {
	for _, l := range registry() {
		e, err := newExtractor(l)
		if err != nil {
			t.Errorf("%s: %v", l.name, err)
			continue
		}
		e.Close()
	}
}

func TestJSModuleKeysStripWholeExtension(t *testing.T) {
	cases := map[string][]string{
		"src/types.d.ts":   {"src/types"},
		"src/app.ts":       {"src/app"},
		"src/ui/index.tsx": {"src/ui/index", "src/ui"},
		"index.js":         {"index", ""},
	}
	for rel, want := range cases {
		if got := jsModuleKeys(nil, rel); !reflect.DeepEqual(got, want) {
			t.Errorf("jsModuleKeys(%q) = %q, want %q", rel, got, want)
		}
	}
	if got := jsImportKeys(nil, "src/app.ts", "./types"); !reflect.DeepEqual(got, []string{"src/types", "src/types/index"}) {
		t.Errorf("jsImportKeys ./types = %q", got)
	}
}

func TestLongSignatureStaysValidUTF8(t *testing.T) {
	s := signature("def fg(" + strings.Repeat("é", 200) + "):") // byte 300 falls inside an é
	if !utf8.ValidString(s) || !strings.HasSuffix(s, "…") || len(s) > 300+len("…") {
		t.Errorf("signature = %q (%d bytes)", s, len(s))
	}
	if got := cutUTF8("aé", 2); got != "a" {
		t.Errorf("cutUTF8 split a character: %q", got)
	}
}
