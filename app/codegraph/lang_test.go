package codegraph

import (
	"reflect"
	"testing"
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
