package codegraph

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// crossArgFixture: generator.py's functions get their msg from calls in
// other files (flow_args.go).
var crossArgFixture = map[string]string{
	"pkg/__init__.py": "",
	"pkg/message.py": `
class Message:
    def get(self, k):
        return k

    def payload(self):
        return 1

    def __setitem__(self, k, v):
        pass

    def as_string(self):
        from pkg.generator import Generator
        g = Generator(self)
        g.flatten(self)
        return 1

    def walk(self):
        from pkg import iterators
        iterators.walk_all(self)

    from pkg.iterators import walk_parts

    def charsets(self):
        return [p for p in self.walk_parts()]


class Part(Message):
    def payload(self):
        return 2
`,
	"pkg/generator.py": `
class Empty:
    def get(self, k):
        return None

    def payload(self):
        return 0


EMPTY = Empty()


class Generator:
    def __init__(self, first):
        self._first = first

    def head(self):
        self._first.get('h')

    def flatten(self, msg, unixfrom=False):
        self._write(msg)

    def _write(self, msg):
        msg = msg or EMPTY
        msg.get('x')
        self._dispatch(msg)

    def _dispatch(self, msg):
        msg.payload()
        meth = getattr(self, '_handle_' + 'text', None)
        meth(msg)

    def _handle_text(self, msg):
        msg.payload()
`,
	"pkg/iterators.py": `
def walk_all(msg):
    msg.payload()


def relay(other):
    return other.payload()


def walk_parts(self):
    yield self
`,
	// A function passed as a default and called through the parameter
	// (not read: see TestPythonCrossFileArgs).
	"pkg/mime.py": `
from pkg import encoders
from pkg.message import Message


class Image(Message):
    def __init__(self, _encoder=encoders.encode_base64):
        _encoder(self)
`,
	"pkg/encoders.py": `
def encode_base64(msg):
    msg['b'] = 1
`,
	// A function called through a module-level alias (json's scanner).
	"pkg/scanner.py": `
try:
    from _fast import make_scanner as c_make_scanner
except ImportError:
    c_make_scanner = None


def py_make_scanner(context):
    parse_object = context.parse_object

    def _scan_once(s):
        return parse_object(s, _scan_once)
    return _scan_once


make_scanner = c_make_scanner or py_make_scanner
`,
	"pkg/decoder.py": `
from pkg import scanner


def JSONObject(s, scan_once):
    return scan_once(s)


class JSONDecoder:
    def __init__(self):
        self.parse_object = JSONObject
        self.scan_once = scanner.make_scanner(self)
`,
	// Calls relay with its own parameter (one hop only: no values) and
	// a same-named flatten on an unrelated class (not imported: nothing).
	"pkg/user.py": `
from pkg import iterators


class Fake:
    def payload(self):
        return 3


def send(m):
    iterators.relay(m)


def flatten(x):
    return x


def other():
    flatten(Fake)
`,
}

// TestPythonCrossFileArgs checks parameter values taken from call sites in
// other files, with exact edges: msg of Generator.flatten is message.py's
// self (a Message), and so is msg of every method flatten passes it on to
// (also after msg = msg or EMPTY); a constructor's parameter stored in an
// attribute; a function called through a module or a module-level alias
// (make_scanner = c_make_scanner or py_make_scanner); a caller's own
// parameter gives nothing (one hop), nor a call through a variable; a
// function imported into a class body is the class's method.
func TestPythonCrossFileArgs(t *testing.T) {
	g := openT(t, writeTree(t, crossArgFixture), Options{NoCache: true}).Graph()
	exactEdges(t, g, "pkg.generator.Generator._write", EdgeCalls, "pkg.message.Message.get", "pkg.generator.Empty.get", "pkg.generator.Generator._dispatch")
	// _write's msg, reassigned in its body, still holds what flatten passes.
	exactEdges(t, g, "pkg.generator.Generator._dispatch", EdgeCalls, "pkg.message.Message.payload", "pkg.generator.Empty.payload", "pkg.generator.Generator._handle_text")
	// Part overrides payload: the value is self of Message.as_string,
	// which a Part may be.
	exactEdges(t, g, "pkg.generator.Generator._dispatch", EdgeDispatches, "pkg.message.Part.payload")
	exactEdges(t, g, "pkg.generator.Generator._handle_text", EdgeCalls, "pkg.message.Message.payload", "pkg.generator.Empty.payload")
	exactEdges(t, g, "pkg.generator.Generator.head", EdgeCalls, "pkg.message.Message.get")
	exactEdges(t, g, "pkg.iterators.walk_all", EdgeCalls, "pkg.message.Message.payload")
	exactEdges(t, g, "pkg.iterators.relay", EdgeCalls)
	// A function imported into a class body is a method of the class.
	exactEdges(t, g, "pkg.message.Message.charsets", EdgeCalls, "pkg.iterators.walk_parts")
	// context of py_make_scanner is decoder.py's self, passed through the
	// alias make_scanner; its parse_object is JSONObject, which calls the
	// _scan_once it is passed back.
	exactEdges(t, g, "pkg.scanner.py_make_scanner._scan_once", EdgeCalls, "pkg.decoder.JSONObject")
	exactEdges(t, g, "pkg.decoder.JSONObject", EdgeCalls, "pkg.scanner.py_make_scanner._scan_once")
	// Calls through a variable in another file are not read (an edit
	// adding one would have to re-resolve every file the caller imports):
	// msg['b'] = 1 runs nothing known.
	exactEdges(t, g, "pkg.encoders.encode_base64", EdgeCalls)
}

// TestPythonCrossFileArgsIncremental edits a caller's arguments (and what
// they hold) in one file and checks that the callee's file, which did not
// change, gets the edges a fresh index gives.
func TestPythonCrossFileArgsIncremental(t *testing.T) {
	files := map[string]string{
		"lib.py": `
def show(item):
    item.render()
`,
		"app.py": `
from lib import show


class Page:
    def render(self):
        return 1


class Card:
    def render(self):
        return 2


def main():
    p = Page()
    c = Card()
    show(p)
`,
	}
	root := writeTree(t, files)
	p := openT(t, root, Options{NoCache: true})
	exactEdges(t, p.Graph(), "lib.show", EdgeCalls, "app.Page.render")
	edits := []struct {
		file, from, to string
		want           []string
	}{
		{"app.py", "show(p)", "show(c)", []string{"app.Card.render"}},              // another argument
		{"app.py", "c = Card()", "c = Page()", []string{"app.Page.render"}},        // what the argument holds (a body edit)
		{"app.py", "show(c)", "show(p, c)", []string{"app.Page.render"}},           // one more argument, same first
		{"app.py", "show(p, c)", "print(p)", nil},                                  // no call left
		{"app.py", "print(p)", "show(item=c)", []string{"app.Page.render"}},        // by keyword
		{"lib.py", "item.render()", "item.render(1)", []string{"app.Page.render"}}, // the callee's own body edit
		{"app.py", "c = Page()", "c = Card()", []string{"app.Card.render"}},        // body edit again
		{"app.py", "from lib import show", "import lib\nshow = print", []string{}}, // no longer imports lib's show
		{"app.py", "import lib\nshow = print", "from lib import show", []string{"app.Card.render"}},
	}
	for i, e := range edits {
		path := filepath.Join(root, e.file)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), e.from) {
			t.Fatalf("edit %d: %q not in %s", i, e.from, e.file)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(src), e.from, e.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := p.UpdateFiles(context.Background(), []string{path})
		if err != nil {
			t.Fatal(err)
		}
		exactEdges(t, g, "lib.show", EdgeCalls, e.want...)
		fresh := openT(t, root, Options{NoCache: true}).Graph()
		if got, want := edgeSet(g), edgeSet(fresh); !reflect.DeepEqual(got, want) {
			t.Errorf("edit %d: updated graph differs from a fresh index:\n got %v\nwant %v", i, got, want)
		}
	}
	// A body edit that changes no argument site nor its scope's
	// assignments keeps the one-file fast path (no other file resolved).
	path := filepath.Join(root, "app.py")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(src), "return 1", "return 3", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	fast := p.b.fastBuilds
	g, err := p.UpdateFiles(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if p.b.fastBuilds != fast+1 {
		t.Errorf("a body edit away from the argument sites was not patched in (fast builds %d → %d)", fast, p.b.fastBuilds)
	}
	exactEdges(t, g, "lib.show", EdgeCalls, "app.Card.render")
}

// TestPythonParamCalledInsideSibling runs on Debian's argparse.py (the
// shape is hard to cut down without losing it): _parse_known_args' nested
// take_action(action, …) calls action(self, …), and its sibling
// consume_optional passes the parser's registered actions. Collecting a
// file's calls once used local-variable callees to bind more calls, and a
// parameter among them was read while the calls were still being collected,
// which kept its values empty for good: take_action lost every action
// class's __call__ (argparse recall 0.892 -> 0.819 when py-args met
// py-shapes).
func TestPythonParamCalledInsideSibling(t *testing.T) {
	src, err := os.ReadFile("/usr/lib/python3.11/argparse.py")
	if err != nil {
		t.Skipf("Debian's Python 3.11 standard library is not installed (make deps installs it): %v", err)
	}
	g := openT(t, writeTree(t, map[string]string{"argparse.py": string(src)}), Options{NoCache: true}).Graph()
	got := outEdges(t, g, "argparse.ArgumentParser._parse_known_args.take_action", EdgeDispatches)
	for _, want := range []string{"argparse._StoreAction.__call__", "argparse._HelpAction.__call__", "argparse._SubParsersAction.__call__"} {
		if !slices.Contains(got, want) {
			t.Errorf("take_action dispatches to %v, want %s among them", got, want)
		}
	}
}

// After updates the argument index lists every name's sites as a fresh
// index does (by path, then position), when the edited file sits before,
// between and after other files with sites of the same names, gains and
// loses sites, and holds several sites of one name (inserted as a block).
func TestArgIndexAfterUpdatesEqualsFresh(t *testing.T) {
	calls := func(n int) string {
		var b strings.Builder
		b.WriteString("from lib import show, run\n\ndef helper0():\n    pass\n\ndef helper1():\n    pass\n\ndef user():\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "    show(user)\n    run(helper%d)\n", i%2)
		}
		b.WriteString("    return 0\n")
		return b.String()
	}
	files := map[string]string{"lib.py": "def show(x):\n    return x()\n\ndef run(f):\n    return f()\n"}
	for _, name := range []string{"a.py", "c.py", "e.py", "g.py"} {
		files[name] = calls(2)
	}
	root := writeTree(t, files)
	p := openT(t, root, Options{})
	for i, e := range []struct {
		file string
		n    int
	}{{"c.py", 5}, {"a.py", 0}, {"g.py", 4}, {"e.py", 1}, {"c.py", 0}, {"a.py", 3}} {
		path := filepath.Join(root, e.file)
		if err := os.WriteFile(path, []byte(calls(e.n)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := p.UpdateFiles(context.Background(), []string{path}); err != nil {
			t.Fatal(err)
		}
		fresh := openT(t, root, Options{NoCache: true})
		got, want := argSiteList(p.b.argIndex()), argSiteList(fresh.b.argIndex())
		if len(want["show"]) == 0 {
			t.Fatalf("edit %d: a fresh index lists no site of show", i)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("edit %d (%s with %d calls): index after the update\n %v\nfresh\n %v", i, e.file, e.n, got, want)
		}
	}
}

// argSiteList is an argument index as path:offset per name.
func argSiteList(x *pyArgIndex) map[string][]string {
	out := map[string][]string{}
	for name, l := range x.sites {
		for _, s := range l {
			out[name] = append(out[name], fmt.Sprintf("%s:%d", s.fb.fd.Path, s.cur.off))
		}
	}
	return out
}
