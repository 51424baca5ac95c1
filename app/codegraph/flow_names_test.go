package codegraph

import (
	"slices"
	"strconv"
	"testing"
)

// refTables are a file's scope tables as maps (what they were before they
// were keyed by symbols): the reference answers.
type refTables struct {
	nested map[nestKey]int32
	locals map[nestKey]bool
	hints  map[hintKey][]string
	flow   map[hintKey][]flowSrc
}

// fillFrom records the tables of f into a new fb.fill and finishes them;
// hints are recorded twice (finishTables keeps each once).
func fillFrom(fb *fileBuild, f *refTables) {
	fb.fill = newTableFill(4)
	for k, i := range f.nested {
		fb.fill.addNested(k.parent, k.name, i)
	}
	for k := range f.locals {
		fb.fill.addLocal(k.parent, k.name)
	}
	for k, ss := range f.flow {
		for _, s := range ss {
			fb.fill.addSrc(k, s)
		}
	}
	for range 2 {
		for k, ts := range f.hints {
			for _, ty := range ts {
				fb.fill.addHint(k, ty)
			}
		}
	}
	fb.finishTables()
}

// namesFile is a Python file and its tables: class C with method m,
// function f with a nested g; locals, flow sources and type hints at
// several scopes; an import and module-level definitions in its scope.
func namesFile() (*fileBuild, *refTables) {
	fb := &fileBuild{
		fd: &fileData{Defs: []defRec{
			{Kind: KindClass, Name: "C", Parent: -1},
			{Kind: KindMethod, Name: "m", Parent: 0},
			{Kind: KindFunction, Name: "f", Parent: -1},
			{Kind: KindFunction, Name: "g", Parent: 2},
		}},
		lang: newPython(),
		ids:  []string{"id-C", "id-C.m", "id-f", "id-f.g"},
	}
	f := &refTables{
		nested: map[nestKey]int32{{-1, "C"}: 0, {0, "m"}: 1, {-1, "f"}: 2, {2, "g"}: 3},
		locals: map[nestKey]bool{{2, "x"}: true, {1, "self"}: true, {3, "y"}: true, {3, "g"}: true},
		flow: map[hintKey][]flowSrc{
			{scope: -1, name: "a"}: {{scope: -1, expr: "f"}}, {scope: 2, name: "x"}: {{scope: 2, expr: "C()", call: true}, {scope: 2, expr: "g"}},
			{scope: 0, attr: true, name: "self.z"}: {{scope: 1, expr: "f"}}, {scope: 3, name: "g"}: {{scope: 3, expr: "a"}},
		},
		hints: map[hintKey][]string{{scope: 2, name: "x"}: {"C"}, {scope: -1, name: "a.b"}: {"C"}, {scope: 0, attr: true, name: "self.z"}: {"C", "D"}, {scope: 3, name: "y"}: {"C"}},
	}
	fb.scope = map[string]binding{"os": {kind: bModule, mod: "os"}}
	fb.topScope = map[string]string{"f": "id-f", "C": "id-C"}
	fillFrom(fb, f)
	return fb, f
}

// refLookupName is lookupName over the maps the tables are filled from
// (the code before the tables were keyed by symbols).
func refLookupName(fb *fileBuild, f *refTables, name string, def int32) (binding, bool) {
	for d := def; d >= 0; d = fb.fd.Defs[d].Parent {
		if d != def && fb.fd.Defs[d].Kind == KindClass {
			continue
		}
		if i, ok := f.nested[nestKey{d, name}]; ok {
			return binding{kind: bDef, id: fb.ids[i]}, true
		}
		if f.locals[nestKey{d, name}] {
			return binding{kind: bLocal}, true
		}
	}
	return fb.scopeLookup(name)
}

// refHintFor is hintFor's scope walk for a plain variable over the maps.
func refHintFor(fb *fileBuild, f *refTables, obj string, def int32) (string, int32, bool) {
	for d := def; ; d = fb.fd.Defs[d].Parent {
		if ts, ok := f.hints[hintKey{scope: d, name: obj}]; ok {
			if len(ts) == 1 {
				return ts[0], d, true
			}
			return "", 0, false
		}
		if d < 0 {
			return "", 0, false
		}
	}
}

// TestScopeTablesSameAnswers checks that the symbol-keyed tables give the
// answers of the maps they are filled from: lookupName, hintFor and
// localName against walks over the maps, for names each table holds,
// names only the file's scope binds and names nothing binds, from every
// scope; every (scope, attr, name) of the maps has its definition, local
// flag, flow sources (in order) and hints in its row, and no row holds
// more; and the symbols say which tables hold a plain name.
func TestScopeTablesSameAnswers(t *testing.T) {
	fb, f := namesFile()
	if fb.fill != nil || fb.tab == nil {
		t.Fatal("finishTables left the fill or made no table")
	}
	names := []string{"C", "m", "f", "g", "x", "y", "self", "a", "z", "self.z", "a.b", "os", "len", "nothing"}
	for def := int32(-1); def < int32(len(fb.fd.Defs)); def++ {
		for _, n := range names {
			b1, ok1 := refLookupName(fb, f, n, def)
			b2, ok2 := fb.lookupName(n, def)
			if b1 != b2 || ok1 != ok2 {
				t.Errorf("lookupName(%q, %d): %v %v, want %v %v", n, def, b2, ok2, b1, ok1)
			}
			t1, s1, h1 := refHintFor(fb, f, n, def)
			t2, s2, h2 := fb.hintFor(n, def)
			if t1 != t2 || s1 != s2 || h1 != h2 {
				t.Errorf("hintFor(%q, %d): %q %d %v, want %q %d %v", n, def, t2, s2, h2, t1, s1, h1)
			}
			want := false
			for d := def; d >= 0; d = fb.fd.Defs[d].Parent {
				if f.locals[nestKey{d, n}] {
					want = true
					break
				}
			}
			if got := localName(fb, n, def); got != want {
				t.Errorf("localName(%q, %d): %v, want %v", n, def, got, want)
			}
		}
	}
	// self.z's hints are two types: hintFor answers none.
	if _, _, ok := fb.hintFor("self.z", 1); ok {
		t.Error("hintFor(self.z) answered one type of two")
	}
	if ty, _, ok := fb.hintFor("self.q", 1); ok {
		t.Errorf("hintFor(self.q) = %q, want none", ty)
	}
	rows := 0
	for k, i := range f.nested {
		if j, ok := fb.nestedAt(k.parent, k.name); !ok || j != i {
			t.Errorf("nestedAt(%d, %q) = %d %v, want %d", k.parent, k.name, j, ok, i)
		}
	}
	for k := range f.locals {
		if !fb.localAt(k.parent, k.name) {
			t.Errorf("localAt(%d, %q) = false", k.parent, k.name)
		}
	}
	for k, ss := range f.flow {
		if got, ok := fb.flowAt(k.scope, k.attr, k.name); !ok || !slices.Equal(got, ss) {
			t.Errorf("flowAt(%v) = %v, want %v", k, got, ss)
		}
	}
	for k, ss := range fb.flowVars() {
		rows++
		if !slices.Equal(f.flow[k], ss) {
			t.Errorf("flowVars yields %v %v, the map holds %v", k, ss, f.flow[k])
		}
	}
	if rows != len(f.flow) {
		t.Errorf("flowVars yields %d variables, want %d", rows, len(f.flow))
	}
	for k, ts := range f.hints {
		if got, ok := fb.hintsAt(k.scope, k.attr, k.name); !ok || !slices.Equal(got, ts) {
			t.Errorf("hintsAt(%v) = %v, want %v", k, got, ts)
		}
	}
	for _, q := range []hintKey{{scope: 1, name: "x"}, {scope: 2, attr: true, name: "x"}, {scope: -1, name: "nothing"}} {
		if _, ok := fb.flowAt(q.scope, q.attr, q.name); ok {
			t.Errorf("flowAt(%v) found sources the maps do not hold", q)
		}
		if _, ok := fb.hintsAt(q.scope, q.attr, q.name); ok {
			t.Errorf("hintsAt(%v) found types the maps do not hold", q)
		}
	}
	if _, ok := fb.nestedAt(1, "g"); ok || fb.localAt(2, "y") {
		t.Error("a name answered at a scope that does not hold it")
	}
	// The symbols' table bits: "self.z" is an attribute key only.
	for _, c := range []struct {
		name string
		in   uint8
	}{{"g", inNested | inLocal | inFlow}, {"x", inLocal | inFlow | inHint}, {"a.b", inHint}, {"self.z", 0}, {"C", inNested}} {
		if _, in, _ := fb.sym(c.name); in != c.in {
			t.Errorf("sym(%q) tables %04b, want %04b", c.name, in, c.in)
		}
	}
	if _, _, ok := fb.sym("nothing"); ok {
		t.Error("a name no table holds has a symbol")
	}
}

// TestScopeTablesLarge fills 2,000 locals, 2,000 flow variables of 1 to
// 3 sources and 100 nested definitions at 7 scopes and reads every one
// back, and finds none of 10,000 names the file does not hold.
func TestScopeTablesLarge(t *testing.T) {
	f := &refTables{nested: map[nestKey]int32{}, locals: map[nestKey]bool{}, flow: map[hintKey][]flowSrc{}}
	for i := 0; i < 2000; i++ {
		n := "v" + strconv.Itoa(i)
		f.locals[nestKey{int32(i%7) - 1, n}] = true
		k := hintKey{scope: int32(i % 5), attr: i%3 == 0, name: n}
		for j := 0; j <= i%3; j++ {
			f.flow[k] = append(f.flow[k], flowSrc{scope: int32(j), expr: n + "." + strconv.Itoa(j)})
		}
	}
	for i := 0; i < 100; i++ {
		f.nested[nestKey{int32(i%7) - 1, "d" + strconv.Itoa(i)}] = int32(i)
	}
	fb := &fileBuild{}
	fillFrom(fb, f)
	for k := range f.locals {
		if !fb.localAt(k.parent, k.name) {
			t.Fatalf("local %v lost", k)
		}
	}
	for k, ss := range f.flow {
		if got, _ := fb.flowAt(k.scope, k.attr, k.name); !slices.Equal(got, ss) {
			t.Fatalf("flow %v: %v, want %v", k, got, ss)
		}
	}
	for k, i := range f.nested {
		if j, ok := fb.nestedAt(k.parent, k.name); !ok || j != i {
			t.Fatalf("nested %v: %d %v, want %d", k, j, ok, i)
		}
	}
	for i := 0; i < 10000; i++ {
		if _, _, ok := fb.sym("w" + strconv.Itoa(i)); ok {
			t.Fatalf("absent name w%d has a symbol", i)
		}
	}
}

// TestParamTable checks the parameter slab against the lists it was given:
// definitions added with gaps, one with no parameters, the module (-1) and
// definitions past the last added have none.
func TestParamTable(t *testing.T) {
	want := map[int32][]string{0: {"a", "b"}, 3: {"self", "*", "k"}, 4: {"x"}, 9: {"y", "z"}}
	var pt paramTable
	for d := int32(0); d < 12; d++ {
		pt.add(d, want[d]) // 1, 2, 5–8, 10, 11: none
	}
	for d := int32(-1); d < 14; d++ {
		if got := pt.of(d); !slices.Equal(got, want[d]) {
			t.Errorf("of(%d) = %q, want %q", d, got, want[d])
		}
	}
}

// TestChangedTabScopes checks the scopes diffArgs marks between two
// versions of a file's tables: a flow source changed (scope 2), a local
// added (3), a hint dropped (-1), a variable present in one version only
// (5, attribute); the scopes whose rows are equal (0, 1, 4) are not marked.
func TestChangedTabScopes(t *testing.T) {
	old := &refTables{
		nested: map[nestKey]int32{{0, "m"}: 1},
		locals: map[nestKey]bool{{1, "x"}: true, {4, "y"}: true},
		flow:   map[hintKey][]flowSrc{{scope: 2, name: "v"}: {{scope: 2, expr: "f()"}}, {scope: 4, name: "y"}: {{scope: 4, expr: "g"}}},
		hints:  map[hintKey][]string{{scope: -1, name: "a"}: {"C"}, {scope: 1, name: "x"}: {"D"}},
	}
	cur := &refTables{
		nested: map[nestKey]int32{{0, "m"}: 1},
		locals: map[nestKey]bool{{1, "x"}: true, {4, "y"}: true, {3, "z"}: true},
		flow: map[hintKey][]flowSrc{{scope: 2, name: "v"}: {{scope: 2, expr: "f()"}, {scope: 2, expr: "h"}}, {scope: 4, name: "y"}: {{scope: 4, expr: "g"}},
			{scope: 5, attr: true, name: "self.w"}: {{scope: 6, expr: "k"}}},
		hints: map[hintKey][]string{{scope: 1, name: "x"}: {"D"}},
	}
	o, fb := &fileBuild{}, &fileBuild{}
	fillFrom(o, old)
	fillFrom(fb, cur)
	scopes := map[int32]bool{}
	changedTabScopes(scopes, o, fb)
	want := map[int32]bool{2: true, 3: true, -1: true, 5: true}
	if len(scopes) != len(want) {
		t.Errorf("marked %v, want %v", scopes, want)
	}
	for s := range want {
		if !scopes[s] {
			t.Errorf("scope %d not marked (marked %v)", s, scopes)
		}
	}
	// A file without tables against one with: every scope with rows.
	scopes = map[int32]bool{}
	changedTabScopes(scopes, &fileBuild{}, o)
	if !scopes[1] || !scopes[2] || !scopes[4] || !scopes[-1] || scopes[0] {
		t.Errorf("against an empty version: marked %v", scopes)
	}
}

// TestScopeTablesManyScopes fills one name at 40 scopes (local at the even
// ones, flow sources at every third, an attribute key beside some, hints
// recorded twice at every fifth): the rows of a symbol with more than 8
// rows are found by a binary search, so each row must come back with its
// own local flag, sources in order and hints once, and the scopes between
// them (and past both ends) must answer none.
func TestScopeTablesManyScopes(t *testing.T) {
	f := &refTables{nested: map[nestKey]int32{}, locals: map[nestKey]bool{}, flow: map[hintKey][]flowSrc{}, hints: map[hintKey][]string{}}
	for s := int32(-1); s < 79; s += 2 {
		if s%4 == 1 {
			f.locals[nestKey{s, "x"}] = true
		}
		if s%3 == 0 {
			k := hintKey{scope: s, name: "x"}
			f.flow[k] = []flowSrc{{scope: s, expr: "a" + strconv.Itoa(int(s))}, {scope: s, expr: "b", call: true}}
			f.flow[hintKey{scope: s, attr: true, name: "x"}] = []flowSrc{{scope: -1, expr: "c"}}
		}
		if s%5 == 0 {
			f.hints[hintKey{scope: s, name: "x"}] = []string{"T" + strconv.Itoa(int(s)), "U"}
		}
		f.nested[nestKey{s, "d" + strconv.Itoa(int(s))}] = s + 1
	}
	fb := &fileBuild{}
	fillFrom(fb, f)
	for s := int32(-3); s < 82; s++ {
		for _, attr := range []bool{false, true} {
			k := hintKey{scope: s, attr: attr, name: "x"}
			if got, _ := fb.flowAt(s, attr, "x"); !slices.Equal(got, f.flow[k]) {
				t.Errorf("flowAt(%v) = %v, want %v", k, got, f.flow[k])
			}
			if got, _ := fb.hintsAt(s, attr, "x"); !slices.Equal(got, f.hints[k]) {
				t.Errorf("hintsAt(%v) = %v, want %v", k, got, f.hints[k])
			}
		}
		if got, want := fb.localAt(s, "x"), f.locals[nestKey{s, "x"}]; got != want {
			t.Errorf("localAt(%d, x) = %v, want %v", s, got, want)
		}
		if _, ok := fb.nestedAt(s, "x"); ok {
			t.Errorf("nestedAt(%d, x) found a definition", s)
		}
	}
	n := 0
	for k, ss := range fb.flowVars() {
		n++
		if !slices.Equal(ss, f.flow[k]) {
			t.Errorf("flowVars yields %v %v, want %v", k, ss, f.flow[k])
		}
	}
	if n != len(f.flow) {
		t.Errorf("flowVars yields %d variables, want %d", n, len(f.flow))
	}
}
