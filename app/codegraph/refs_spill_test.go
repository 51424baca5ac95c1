package codegraph

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// spillFixture is a small Python project whose files keep strings of their
// references in every table ownTexts moves (scope names, flow sources,
// hints, bases, parameter uses, decorators) and have argument sites.
func spillFixture() map[string]string {
	files := map[string]string{
		"pkg/__init__.py": "",
		"pkg/base.py": "import functools\n\ndef deco(f):\n    @functools.wraps(f)\n    def w(*a):\n        return f(*a)\n    return w\n\n" +
			"class Handler:\n    def handle(self, msg: 'Msg'):\n        self.last = msg\n        return msg.render()\n\n" +
			"def run(h, msg, cb=None):\n    cb(msg)\n    h.done()\n    return h.handle(msg)\n",
	}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("pkg/m%02d.py", i)] = fmt.Sprintf("from pkg.base import Handler, run, deco\n\n"+
			"class Msg%d:\n    def render(self):\n        items = [x for x in range(%d)]\n        return items\n\n"+
			"class H%d(Handler):\n    kind: str = 'h'\n    @deco\n    def handle(self, msg):\n        val = msg.render()\n        self.val = val\n        return super().handle(msg)\n    def done(self):\n        return self.val\n\n"+
			"def main():\n    h = H%d()\n    run(h, Msg%d(), cb=print)\n    missing_%d()\n", i, i, i, i, i, i) +
			// One type recorded twice among many (a gap finishTables closes).
			"\ndef more():\n    a0 = Handler()\n    a1 = Handler()\n    a2 = Handler()\n    a3 = Handler()\n    a4 = Handler()\n" +
			"    a5 = Handler()\n    a6 = Handler()\n    a7 = Handler()\n    a8 = Handler()\n    a9 = Handler()\n    a0 = Handler()\n    return a0\n"
	}
	return files
}

// stringsInRange returns the strings reachable from v (pointers, slices,
// maps, structs, interfaces) whose bytes start in [lo, hi).
func stringsInRange(v reflect.Value, lo, hi uintptr, seen map[[2]uintptr]bool, out *[]string) {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); s != "" {
			if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= lo && p < hi {
				*out = append(*out, s)
			}
		}
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if v.IsNil() || (v.Kind() == reflect.Slice && v.Cap() == 0) {
			return
		}
		if v.Kind() == reflect.Slice {
			v = v.Slice(0, v.Cap()) // (what lies past the length is kept too)
		}
		k := [2]uintptr{v.Pointer(), uintptr(v.Kind())}
		if v.Kind() == reflect.Slice {
			k[1] |= uintptr(v.Len()) << 8 // (a shorter slice of the same array is not the whole)
		}
		if seen[k] {
			return
		}
		seen[k] = true
		switch v.Kind() {
		case reflect.Pointer:
			stringsInRange(v.Elem(), lo, hi, seen, out)
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				stringsInRange(v.Index(i), lo, hi, seen, out)
			}
		default:
			for it := v.MapRange(); it.Next(); {
				stringsInRange(it.Key(), lo, hi, seen, out)
				stringsInRange(it.Value(), lo, hi, seen, out)
			}
		}
	case reflect.Interface:
		if !v.IsNil() {
			stringsInRange(v.Elem(), lo, hi, seen, out)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			stringsInRange(v.Index(i), lo, hi, seen, out)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			stringsInRange(v.Field(i), lo, hi, seen, out)
		}
	}
}

// After ownTexts, no string a Python file's build state keeps (its tables,
// flow sources, hints, facts, bases, the inheritance pass's sample, also
// past the length of a slice; not its record, nor the main pass's sample,
// copied when its file is done) points into its references' text, and each
// keeps its value. Fails when a table that keeps a reference's string is
// added and ownTexts (keptStrings) does not move it: the text would then
// stay alive after the references are spilled and dropped.
func TestOwnTextsLeavesNoStringInRefText(t *testing.T) {
	root := writeTree(t, spillFixture())
	p := openT(t, root, Options{NoCache: true})
	p.mu.Lock()
	defer p.mu.Unlock()
	moved := 0
	for path, fb := range p.b.fbs {
		if fb.fd == nil || fb.fd.Refs.Len() == 0 || fb.lang == nil || fb.lang.family != "python" {
			continue
		}
		text := fb.fd.Refs.text
		lo := uintptr(unsafe.Pointer(unsafe.StringData(text)))
		hi := lo + uintptr(len(text))
		var before []string
		fb.keptStrings(func(s *string) { before = append(before, *s) })
		walk := func() []string {
			var in []string
			v := reflect.ValueOf(fb).Elem()
			for i := 0; i < v.NumField(); i++ {
				switch v.Type().Field(i).Name {
				case "fd", "res", "argRefs":
					continue // the record itself; the main pass's sample (copied when its file is done); the argument records' own list
				}
				stringsInRange(v.Field(i), lo, hi, map[[2]uintptr]bool{}, &in)
			}
			return in
		}
		moved += len(walk())
		fb.ownTexts()
		if in := walk(); len(in) > 0 {
			t.Fatalf("%s: %d kept strings still in the references' text after ownTexts, e.g. %q", path, len(in), in[0])
		}
		var after []string
		fb.keptStrings(func(s *string) { after = append(after, *s) })
		if !reflect.DeepEqual(after, before) {
			t.Fatalf("%s: ownTexts changed kept strings:\n%q\nwant\n%q", path, after, before)
		}
	}
	if moved < 100 {
		t.Fatalf("only %d kept strings were in the references' texts before ownTexts, want at least 100 (the fixture no longer exercises it)", moved)
	}
}

// spillRefs writes every file's references to an unlinked file and drops
// them; load gives back the same references, also into an array another
// file's were read into and released. Without a writable folder,
// the references stay in memory.
func TestSpillRefsRoundTripAndFallback(t *testing.T) {
	root := writeTree(t, spillFixture())
	p := openT(t, root, Options{NoCache: true})
	p.mu.Lock()
	defer p.mu.Unlock()
	var files []*fileBuild
	want := map[*fileBuild][]refRec{}
	for _, fb := range p.b.ordered {
		files = append(files, fb)
		want[fb] = fb.fd.Refs.Unpack()
	}
	if s := spillRefs(filepath.Join(root, "no-such-folder"), files); s != nil {
		t.Fatal("spillRefs made a spill in a folder that does not exist")
	}
	for _, fb := range files {
		if !reflect.DeepEqual(fb.fd.Refs.Unpack(), want[fb]) {
			t.Fatalf("%s: a failed spill changed the references", fb.fd.Path)
		}
	}
	dir := t.TempDir()
	s := spillRefs(dir, files)
	if s == nil {
		t.Fatal("spillRefs: no spill in a writable folder")
	}
	defer s.close()
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("the spill file is not unlinked: %v %v", ents, err)
	}
	n := 0
	for _, fb := range files {
		if len(want[fb]) == 0 {
			continue
		}
		n++
		if fb.fd.Refs.Len() != 0 {
			t.Fatalf("%s: references kept in memory after the spill", fb.fd.Path)
		}
	}
	if n < 20 {
		t.Fatalf("%d files with references, want at least 20", n)
	}
	for i := len(files) - 1; i >= 0; i-- { // (any order)
		fb := files[i]
		if err := s.load(fb); err != nil {
			t.Fatal(err)
		}
		if got := fb.fd.Refs.Unpack(); !reflect.DeepEqual(got, want[fb]) {
			t.Fatalf("%s: %d references read back, want %d (or they differ)", fb.fd.Path, len(got), len(want[fb]))
		}
		if i%2 == 0 { // (the next files read into this one's array)
			s.release(fb)
			fb.fd.Refs = refList{}
		}
	}
}

// A spill whose references cannot be read back (here: its file closed
// under it) fails the open with an error naming a file, instead of a graph
// short of that file's edges; the next open works.
func TestSpillReadFailureFailsTheBuild(t *testing.T) {
	root := writeTree(t, spillFixture())
	if err := os.Mkdir(filepath.Join(root, ".codeloom"), 0o755); err != nil {
		t.Fatal(err)
	}
	spilled := false
	_, err := Open(context.Background(), root, Options{NoCache: true, NoUpdates: true, Workers: 2, testSpilled: func(s *refSpill) {
		spilled = true
		s.f.Close()
	}})
	if !spilled {
		t.Fatal("the build spilled nothing")
	}
	if err == nil || !strings.Contains(err.Error(), "read back the references of ") || !strings.Contains(err.Error(), "file already closed") {
		t.Fatalf("open with an unreadable spill: %v", err)
	}
	ref := openT(t, root, Options{NoCache: true}).Graph()
	got := openT(t, root, Options{NoCache: true, NoUpdates: true}).Graph()
	if !reflect.DeepEqual(got.Edges(), ref.Edges()) {
		t.Fatal("the open after a failed one differs from a normal build")
	}
}

// A last build that spills its references (the project has a .codeloom
// folder) gives the same graph as a normal build, and leaves no file in
// that folder.
func TestNoUpdatesSpilledGraphSame(t *testing.T) {
	root := writeTree(t, spillFixture())
	ref := openT(t, root, Options{NoCache: true}).Graph()
	if err := os.Mkdir(filepath.Join(root, ".codeloom"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := openT(t, root, Options{NoCache: true, NoUpdates: true}).Graph()
	if len(ref.Edges()) < 150 {
		t.Fatalf("fixture has %d edges, want at least 150", len(ref.Edges()))
	}
	if !reflect.DeepEqual(got.Edges(), ref.Edges()) {
		t.Fatalf("spilled NoUpdates edges (%d) differ from a normal build's (%d)", len(got.Edges()), len(ref.Edges()))
	}
	if len(got.Nodes()) != len(ref.Nodes()) {
		t.Fatalf("spilled NoUpdates has %d nodes, a normal build %d", len(got.Nodes()), len(ref.Nodes()))
	}
	ents, err := os.ReadDir(filepath.Join(root, ".codeloom"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left in .codeloom: %s", e.Name())
	}
}
