package ui

import "testing"

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
