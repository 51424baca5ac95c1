package codegraph

import (
	"strconv"
	"testing"
)

// namesFile is a Python file's tables: class C with method m, function f
// with a nested g; locals, flow sources and type hints at several scopes;
// an import and module-level definitions in its scope.
func namesFile() *fileBuild {
	fb := &fileBuild{
		fd: &fileData{Defs: []defRec{
			{Kind: KindClass, Name: "C", Parent: -1},
			{Kind: KindMethod, Name: "m", Parent: 0},
			{Kind: KindFunction, Name: "f", Parent: -1},
			{Kind: KindFunction, Name: "g", Parent: 2},
		}},
		lang:     newPython(),
		ids:      []string{"id-C", "id-C.m", "id-f", "id-f.g"},
		nested:   map[nestKey]int32{{-1, "C"}: 0, {0, "m"}: 1, {-1, "f"}: 2, {2, "g"}: 3},
		locals:   map[nestKey]bool{{2, "x"}: true, {1, "self"}: true, {3, "y"}: true, {3, "g"}: true},
		flow:     map[hintKey][]flowSrc{{scope: -1, name: "a"}: {{scope: -1, expr: "f"}}, {scope: 2, name: "x"}: {{scope: 2, expr: "C()", call: true}}, {scope: 0, attr: true, name: "self.z"}: nil},
		hints:    map[hintKey][]string{{scope: 2, name: "x"}: {"C"}, {scope: -1, name: "a.b"}: {"C"}, {scope: 0, attr: true, name: "self.z"}: {"C"}},
		scope:    map[string]binding{"os": {kind: bModule, mod: "os"}},
		topScope: map[string]string{"f": "id-f", "C": "id-C"},
	}
	return fb
}

// TestScopeNamesSameAnswers checks that the name filters change no answer
// of the scope walks: lookupName, hintFor and localName give the same
// bindings with the filters as without, for names each table holds, names
// only the file's scope binds and names nothing binds, from every scope;
// that every name a table holds is reported as possibly there (a filter
// that lost one would skip its walk); and that most absent names are
// reported absent (the point of the filter: the bound leaves 2x margin
// over the 1.5–5 % false positives it is sized for).
func TestScopeNamesSameAnswers(t *testing.T) {
	plain := namesFile()
	filtered := namesFile()
	filtered.names = newScopeNames(filtered)
	names := []string{"C", "m", "f", "g", "x", "y", "self", "a", "z", "self.z", "a.b", "os", "len", "nothing"}
	for def := int32(-1); def < int32(len(plain.fd.Defs)); def++ {
		for _, n := range names {
			b1, ok1 := plain.lookupName(n, def)
			b2, ok2 := filtered.lookupName(n, def)
			if b1 != b2 || ok1 != ok2 {
				t.Errorf("lookupName(%q, %d): %v %v with filters, %v %v without", n, def, b2, ok2, b1, ok1)
			}
			t1, s1, h1 := plain.hintFor(n, def)
			t2, s2, h2 := filtered.hintFor(n, def)
			if t1 != t2 || s1 != s2 || h1 != h2 {
				t.Errorf("hintFor(%q, %d): %q %d %v with filters, %q %d %v without", n, def, t2, s2, h2, t1, s1, h1)
			}
			if l1, l2 := localName(plain, n, def), localName(filtered, n, def); l1 != l2 {
				t.Errorf("localName(%q, %d): %v with filters, %v without", n, def, l2, l1)
			}
		}
	}
	for k := range filtered.nested {
		if !filtered.tablesFor(k.name).def {
			t.Errorf("nested name %q reported absent", k.name)
		}
	}
	for k := range filtered.locals {
		if !filtered.tablesFor(k.name).local {
			t.Errorf("local %q reported absent", k.name)
		}
	}
	for k := range filtered.flow {
		if !k.attr && !filtered.tablesFor(k.name).flow {
			t.Errorf("flow name %q reported absent", k.name)
		}
	}
	for k := range filtered.hints {
		if !k.attr && !filtered.mayHint(k.name) {
			t.Errorf("hint name %q reported absent", k.name)
		}
	}
	if in := plain.tablesFor("anything"); !in.def || !in.local || !in.flow || !plain.mayHint("anything") {
		t.Error("a file without filters must report every table as possibly holding a name")
	}
	// A larger file: 2,000 locals; 10,000 names it does not hold.
	big := &fileBuild{locals: map[nestKey]bool{}}
	for i := 0; i < 2000; i++ {
		big.locals[nestKey{int32(i % 7), "v" + strconv.Itoa(i)}] = true
	}
	big.names = newScopeNames(big)
	for k := range big.locals {
		if !big.tablesFor(k.name).local {
			t.Fatalf("local %q reported absent", k.name)
		}
	}
	fp := 0
	for i := 0; i < 10000; i++ {
		if big.tablesFor("w" + strconv.Itoa(i)).local {
			fp++
		}
	}
	if fp > 1000 {
		t.Errorf("%d of 10000 absent names reported as possibly local, want under 10 %%", fp)
	}
}
