package codegraph

import "testing"

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
