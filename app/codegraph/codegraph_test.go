package codegraph

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// writeTree creates files (slash paths → content) under a new temp dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func openT(t *testing.T, root string, opts Options) *Project {
	t.Helper()
	p, err := Open(context.Background(), root, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", root, err)
	}
	p.checkHint = true // every build's hint checked against a full comparison (update_build.go)
	t.Cleanup(func() { p.Close() })
	return p
}

// byQual returns the node with a qualified name, failing the test if absent.
func byQual(t *testing.T, g *Graph, qual string) *Node {
	t.Helper()
	for _, n := range g.Nodes() {
		if n.QualName == qual {
			return n
		}
	}
	var names []string
	for _, n := range g.Nodes() {
		names = append(names, n.QualName)
	}
	t.Fatalf("no node %q; have %v", qual, names)
	return nil
}

// hasEdge reports an edge of kind between two qualified names.
func hasEdge(t *testing.T, g *Graph, from, to string, kind EdgeKind) bool {
	t.Helper()
	f, tt := byQual(t, g, from), byQual(t, g, to)
	for _, e := range g.Out(f.ID, kind) {
		if e.To == tt.ID {
			return true
		}
	}
	return false
}

func wantEdge(t *testing.T, g *Graph, from, to string, kind EdgeKind) {
	t.Helper()
	if !hasEdge(t, g, from, to, kind) {
		var have []string
		for _, e := range g.Out(byQual(t, g, from).ID) {
			n, _ := g.Node(e.To)
			have = append(have, string(e.Kind)+"→"+n.QualName)
		}
		t.Errorf("missing edge %s -%s-> %s (have %v)", from, kind, to, have)
	}
}

func unresolvedNames(g *Graph) []string {
	var out []string
	for _, u := range g.Stats().UnresolvedSample {
		out = append(out, u.Name)
	}
	return out
}

var pyFixture = map[string]string{
	"pkg/__init__.py": "",
	"pkg/models.py": `"""Models."""
class Base:
    def save(self):
        return 1


class Item(Base):
    """An item."""

    def __init__(self, name):
        self.name = name

    def total(self):
        return self.price()

    def price(self):
        return 2

    @property
    def label(self):
        return self.name

    @label.setter
    def label(self, v):
        self.name = v
`,
	"pkg/util.py": `import os
import requests
from .models import Item as It
from . import models


def make(n):
    it = It(n)
    it.save()
    return models.Item(n)


def helper():
    return make("x")


def env():
    return os.getenv("API_URL") + os.environ["API_KEY"]
`,
	"app.py": `import pkg.util
from pkg.util import helper
from pkg import *


def main():
    helper()
    pkg.util.make(1)
    unknown_func()
`,
	".env":             "API_URL=http://example.test\nexport API_KEY='k1' # secret\n",
	"requirements.txt": "requests>=2.31  # http\n-r other.txt\n",
}

func TestPythonResolution(t *testing.T) {
	root := writeTree(t, pyFixture)
	p := openT(t, root, Options{NoCache: true})
	g := p.Graph()

	if n := byQual(t, g, "pkg.models.Item.total"); n.Kind != KindMethod {
		t.Errorf("Item.total kind = %s, want method", n.Kind)
	}
	if n := byQual(t, g, "pkg.models.Item"); n.Doc != "An item." || n.Signature != "class Item(Base)" {
		t.Errorf("Item doc %q signature %q", n.Doc, n.Signature)
	}
	if n := byQual(t, g, "pkg.util.make"); n.Kind != KindFunction || n.StartLine != 7 || n.EndLine != 10 || n.Signature != "def make(n)" {
		t.Errorf("make: %+v", n)
	}
	wantEdge(t, g, "pkg.models", "pkg.models.Item", EdgeContains)
	wantEdge(t, g, "pkg.models.Item", "pkg.models.Item.total", EdgeContains)
	wantEdge(t, g, "pkg.models.Item", "pkg.models.Base", EdgeInherits)
	wantEdge(t, g, "pkg.models.Item.total", "pkg.models.Item.price", EdgeCalls) // self.
	wantEdge(t, g, "pkg.util.make", "pkg.models.Item", EdgeCalls)               // alias It
	wantEdge(t, g, "pkg.util.make", "pkg.models.Base.save", EdgeCalls)          // it = It(); it.save() via base
	wantEdge(t, g, "pkg.util.helper", "pkg.util.make", EdgeCalls)
	wantEdge(t, g, "app.main", "pkg.util.helper", EdgeCalls) // from-import
	wantEdge(t, g, "app.main", "pkg.util.make", EdgeCalls)   // dotted module path
	wantEdge(t, g, "app", "pkg.util", EdgeImports)           // absolute import
	wantEdge(t, g, "pkg.util", "pkg.models", EdgeImports)    // relative import
	wantEdge(t, g, "pkg.util", "pypi:requests", EdgeImports) // external package
	wantEdge(t, g, "requirements.txt", "pypi:requests", EdgeRequires)
	if len(g.Children(byQual(t, g, "pkg.models.Item").ID)) != 5 {
		t.Errorf("Item children = %d, want 5", len(g.Children(byQual(t, g, "pkg.models.Item").ID)))
	}
	// Property getter and setter share a name: distinct, deterministic IDs.
	var labels []string
	for _, n := range g.NodesInFile("pkg/models.py") {
		if n.Name == "label" {
			labels = append(labels, n.ID)
		}
	}
	if len(labels) != 2 || labels[0] == labels[1] {
		t.Errorf("label IDs %v", labels)
	}
	if un := unresolvedNames(g); !slices.Contains(un, "unknown_func") {
		t.Errorf("unknown_func not counted as unresolved: %v", un)
	}
	if g.Stats().Unresolved != 1 {
		t.Errorf("unresolved = %d (%v), want 1", g.Stats().Unresolved, g.Stats().UnresolvedSample)
	}

	// Queries.
	main := byQual(t, g, "app.main")
	var deps []string
	for _, n := range g.Deps(main.ID) {
		deps = append(deps, n.QualName)
	}
	for _, want := range []string{"pkg.util.helper", "pkg.util.make", "pkg.models.Item", "pkg.models.Base", "pkg.models.Base.save"} {
		if !slices.Contains(deps, want) {
			t.Errorf("Deps(main) lacks %s: %v", want, deps)
		}
	}
	if slices.Contains(deps, "pkg.util.env") {
		t.Errorf("Deps(main) has pkg.util.env which main does not need")
	}
	var rdeps []string
	for _, n := range g.RDeps(byQual(t, g, "pkg.models.Base.save").ID) {
		rdeps = append(rdeps, n.QualName)
	}
	for _, want := range []string{"pkg.util.make", "pkg.util.helper", "app.main"} {
		if !slices.Contains(rdeps, want) {
			t.Errorf("RDeps(save) lacks %s: %v", want, rdeps)
		}
	}
	path := g.Path(main.ID, byQual(t, g, "pkg.models.Base").ID)
	if len(path) == 0 || path[0].From != main.ID || path[len(path)-1].To != byQual(t, g, "pkg.models.Base").ID {
		t.Errorf("Path(main, Base) = %v", path)
	}
	if g.Path(byQual(t, g, "pkg.models.Base").ID, main.ID) != nil {
		t.Errorf("Path(Base, main) should not exist")
	}

	sl, err := g.Slice(main.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Dependency order: Base before Item before make before helper before main.
	pos := func(q string) int {
		for i, n := range sl.Nodes {
			if n.QualName == q {
				return i
			}
		}
		t.Errorf("slice lacks %s", q)
		return -1
	}
	if !(pos("pkg.models.Base") < pos("pkg.models.Item") && pos("pkg.models.Item") < pos("pkg.util.make") &&
		pos("pkg.util.make") < pos("pkg.util.helper") && pos("pkg.util.helper") < pos("app.main")) {
		t.Errorf("slice order wrong: %v", sliceNames(sl))
	}
	if !strings.Contains(sl.Code, "def make(n):") || !strings.Contains(sl.Code, "class Base:") {
		t.Errorf("slice code:\n%s", sl.Code)
	}
	es, err := g.Slice(byQual(t, g, "pkg.util.env").ID)
	if err != nil {
		t.Fatal(err)
	}
	if es.Env["API_URL"] != "http://example.test" || es.Env["API_KEY"] != "k1" || len(es.Env) != 2 {
		t.Errorf("slice env = %v", es.Env)
	}
	if !strings.Contains(es.Code, "import os") {
		t.Errorf("slice lacks the external import:\n%s", es.Code)
	}
	if _, err := g.Slice("nope"); err == nil {
		t.Error("Slice of an unknown ID should fail")
	}

	// Search and rank.
	ms := g.Search("helpr", 5)
	if len(ms) == 0 || ms[0].Node.QualName != "pkg.util.helper" {
		t.Errorf("Search(helpr) = %v", matchNames(ms))
	}
	ms = g.Search("Item", 0)
	if len(ms) == 0 || ms[0].Node.QualName != "pkg.models.Item" {
		t.Errorf("Search(Item) first = %v", matchNames(ms))
	}
	rk := g.Rank([]string{byQual(t, g, "pkg.util.env").ID})
	if len(rk) != len(g.Nodes()) || rk[0].Node.QualName != "pkg.util.env" {
		t.Errorf("personalised rank top = %s", rk[0].Node.QualName)
	}
	plain := g.Rank(nil)
	if plain[0].Score < plain[len(plain)-1].Score {
		t.Error("rank not sorted")
	}
	// NodeAt finds the innermost definition.
	if n, ok := g.NodeAt("pkg/models.py", 14); !ok || n.QualName != "pkg.models.Item.total" {
		t.Errorf("NodeAt(models.py:14) = %v", n)
	}
	if n, ok := g.NodeAt("pkg/models.py", 1); !ok || n.Kind != KindFile {
		t.Errorf("NodeAt(models.py:1) = %v", n)
	}
	code, err := g.Code(byQual(t, g, "pkg.models.Item.price").ID)
	if err != nil || !strings.HasPrefix(string(code), "def price(self):") {
		t.Errorf("Code(price) = %q, %v", code, err)
	}
	// Resolve accepts IDs, qualified names, unique names, path:line; ambiguity is an error.
	for _, arg := range []string{"pkg.util.make", "make", "pkg/util.py:8", byQual(t, g, "pkg.util.make").ID} {
		if n, err := Resolve(g, arg); err != nil || n.QualName != "pkg.util.make" {
			t.Errorf("Resolve(%q) = %v, %v", arg, n, err)
		}
	}
	if _, err := Resolve(g, "label"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("Resolve(label) err = %v", err)
	}
	if _, err := Resolve(g, "no_such_thing"); err == nil {
		t.Error("Resolve(no_such_thing) should fail")
	}
}

func sliceNames(s *Slice) []string {
	var out []string
	for _, n := range s.Nodes {
		out = append(out, n.QualName)
	}
	return out
}

func matchNames(ms []Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Node.QualName)
	}
	return out
}

func TestGoResolution(t *testing.T) {
	root := writeTree(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n\nrequire (\n\tgithub.com/x/y v1.0.0 // indirect\n)\n",
		"main.go": `package main

import (
	"fmt"
	"os"

	"example.com/m/store"
	"github.com/x/y/z"
)

func main() {
	s := &store.Store{}
	s.Put("k")
	n := store.New()
	n.Put("again")
	helper(os.Getenv("PORT"))
	fmt.Println(z.Q())
}

func helper(p string) {}
`,
		"store/store.go": `package store

// Store keeps keys.
type Store struct {
	Base
}

// Base is embedded.
type Base struct{}

func (b *Base) Len() int { return 0 }

// Put adds k.
func (s *Store) Put(k string) {
	s.check()
	s.Len()
}
`,
		"store/check.go": `package store

func (s *Store) check() { _ = New() }

func New() *Store { return &Store{} }
`,
	})
	g := openT(t, root, Options{NoCache: true}).Graph()
	st := byQual(t, g, "example.com/m/store.Store")
	if st.Kind != KindClass || st.Doc != "Store keeps keys." {
		t.Errorf("Store: %+v", st)
	}
	put := byQual(t, g, "example.com/m/store.Store.Put")
	if put.Kind != KindMethod || put.Parent != st.ID || put.Doc != "Put adds k." {
		t.Errorf("Put: %+v (Store %s)", put, st.ID)
	}
	// A method in another file of the package still belongs to its type.
	if chk := byQual(t, g, "example.com/m/store.Store.check"); chk.Parent != st.ID {
		t.Errorf("check parent = %s, want Store", chk.Parent)
	}
	wantEdge(t, g, "example.com/m.main", "example.com/m/store.Store.Put", EdgeCalls)
	wantEdge(t, g, "example.com/m.main", "example.com/m.helper", EdgeCalls)
	wantEdge(t, g, "example.com/m.main", "example.com/m/store.Store", EdgeUses)
	wantEdge(t, g, "example.com/m/store.Store.Put", "example.com/m/store.Store.check", EdgeCalls)
	wantEdge(t, g, "example.com/m/store.Store.Put", "example.com/m/store.Base.Len", EdgeCalls) // embedded
	wantEdge(t, g, "example.com/m/store.Store.check", "example.com/m/store.New", EdgeCalls)
	wantEdge(t, g, "example.com/m/store.Store", "example.com/m/store.Base", EdgeInherits)
	wantEdge(t, g, "example.com/m", "example.com/m/store", EdgeImports)
	wantEdge(t, g, "example.com/m", "go:github.com/x/y", EdgeImports)
	wantEdge(t, g, "go.mod", "go:github.com/x/y", EdgeRequires)
	sl, err := g.Slice(byQual(t, g, "example.com/m.main").ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sl.Env["PORT"]; !ok {
		t.Errorf("slice env %v lacks PORT", sl.Env)
	}
	if !strings.Contains(sl.Code, "import \"fmt\"\n") || !strings.Contains(sl.Code, "func (s *Store) Put(k string)") {
		t.Errorf("go slice:\n%s", sl.Code)
	}
	if g.Stats().Unresolved != 0 {
		t.Errorf("unresolved: %v", g.Stats().UnresolvedSample)
	}
}

func TestJSResolution(t *testing.T) {
	root := writeTree(t, map[string]string{
		"package.json":     `{"name":"app","dependencies":{"left-pad":"^1.0.0"},"devDependencies":{"@scope/tool":"1"}}`,
		"src/util.js":      "export function helper() { return 1 }\nexport const answer = () => 42\n",
		"src/def.js":       "export default function main() { return 2 }\n",
		"src/lib/index.js": "function x() {}\nmodule.exports = { x }\nexports.y = function () { return x() }\n",
		"src/app.js": `import { helper as h, answer } from './util'
import Def from './def.js'
import pad from 'left-pad'
const lib = require('./lib')
const { x } = require('./lib')

/** Runs everything. */
class App extends Base {
  run() {
    h(); Def(); lib.x(); x(); answer(); lib.y()
    this.stop()
    return process.env.APP_MODE
  }
  stop() { pad('a') }
}
class Base {}
`,
		"src/types.ts": `import { helper } from './util'
interface Shape { area(): number }
export class Square implements Shape {
  area(): number { return this.side() * helper() }
  side(): number { return 2 }
}
`,
	})
	g := openT(t, root, Options{NoCache: true}).Graph()
	wantEdge(t, g, "src/app:App.run", "src/util:helper", EdgeCalls)
	wantEdge(t, g, "src/app:App.run", "src/util:answer", EdgeCalls)
	wantEdge(t, g, "src/app:App.run", "src/def:main", EdgeCalls) // default import
	wantEdge(t, g, "src/app:App.run", "src/lib/index:x", EdgeCalls)
	wantEdge(t, g, "src/app:App.run", "src/lib/index:y", EdgeCalls) // CommonJS exports.y = function
	wantEdge(t, g, "src/lib/index:y", "src/lib/index:x", EdgeCalls)
	wantEdge(t, g, "src/app:App.run", "src/app:App.stop", EdgeCalls) // this.
	wantEdge(t, g, "src/app:App", "src/app:Base", EdgeInherits)
	wantEdge(t, g, "src/app", "src/util", EdgeImports)
	wantEdge(t, g, "src/app", "src/lib/index", EdgeImports) // require of a directory
	wantEdge(t, g, "src/app", "npm:left-pad", EdgeImports)
	wantEdge(t, g, "package.json", "npm:@scope/tool", EdgeRequires)
	wantEdge(t, g, "src/types:Square", "src/types:Shape", EdgeInherits)
	wantEdge(t, g, "src/types:Square.area", "src/types:Square.side", EdgeCalls)
	wantEdge(t, g, "src/types:Square.area", "src/util:helper", EdgeCalls)
	if n := byQual(t, g, "src/app:App"); n.Doc != "Runs everything." {
		t.Errorf("App doc = %q", n.Doc)
	}
	if n := byQual(t, g, "src/types:Shape"); n.Kind != KindClass || n.Language != "typescript" {
		t.Errorf("Shape: %+v", n)
	}
	sl, err := g.Slice(byQual(t, g, "src/app:App.run").ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sl.Env["APP_MODE"]; !ok {
		t.Errorf("slice env %v lacks APP_MODE", sl.Env)
	}
}

func TestWalkIgnoresAndSkips(t *testing.T) {
	root := writeTree(t, map[string]string{
		".gitignore":              "ignored.py\ngen/\n",
		"keep.py":                 "def keep(): pass\n",
		"ignored.py":              "def ignored(): pass\n",
		"gen/out.py":              "def gen(): pass\n",
		"sub/.gitignore":          "local_*.py\n",
		"sub/local_x.py":          "def local(): pass\n",
		"sub/real.py":             "def real(): pass\n",
		"node_modules/m/index.js": "function m() {}\n",
		".venv/lib/x.py":          "def venv(): pass\n",
		".venv/pyvenv.cfg":        "home = /usr/bin\n",
		"venv/pyvenv.cfg":         "home = /usr/bin\n",
		"venv/bin/activate.py":    "def activate(): pass\n",
		"__pycache__/c.py":        "def cache(): pass\n",
		"build/b.py":              "def built(): pass\n",
		"notes.txt":               "not source",
	})
	g := openT(t, root, Options{NoCache: true}).Graph()
	var files []string
	for _, n := range g.Nodes() {
		if n.Kind == KindFile {
			files = append(files, n.Path)
		}
	}
	sort.Strings(files)
	if strings.Join(files, ",") != "keep.py,sub/real.py" {
		t.Errorf("indexed files = %v", files)
	}
}

func TestBadInput(t *testing.T) {
	root := writeTree(t, map[string]string{
		"good.py":   "def good():\n    return 1\n",
		"binary.py": "def x():\x00\x01\x02 pass\n",
		"latin1.py": "# caf\xe9\ndef latin():\n    return '\xe9'\n",
		"broken.py": "def broken(:\n    pass\n\ndef fine():\n    return 2\n",
		"big.py":    "def big():\n    return '" + strings.Repeat("x", 300) + "'\n",
		"bad.json":  "",
	})
	// Symlinks: a loop, a dangling link, one leaving the project, a
	// directory link pointing back up (a walk loop if followed).
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("loop_b.py", filepath.Join(root, "loop_a.py")))
	must(os.Symlink("loop_a.py", filepath.Join(root, "loop_b.py")))
	must(os.Symlink("missing.py", filepath.Join(root, "dangling.py")))
	outside := writeTree(t, map[string]string{"secret.py": "def secret(): pass\n"})
	must(os.Symlink(filepath.Join(outside, "secret.py"), filepath.Join(root, "escape.py")))
	must(os.MkdirAll(filepath.Join(root, "d"), 0o755))
	must(os.Symlink("..", filepath.Join(root, "d", "up")))
	unreadable := filepath.Join(root, "locked.py")
	must(os.WriteFile(unreadable, []byte("def locked(): pass\n"), 0o000))

	p := openT(t, root, Options{NoCache: true, MaxFileSize: 200})
	g := p.Graph()
	rep := p.Report()
	reasons := map[string]Problem{}
	for _, pr := range rep.Problems {
		reasons[pr.Path] = pr
	}
	expect := func(path, substr string, skipped bool) {
		t.Helper()
		pr, ok := reasons[path]
		if !ok {
			t.Errorf("%s not in report problems %v", path, rep.Problems)
			return
		}
		if !strings.Contains(pr.Reason, substr) || pr.Skipped != skipped {
			t.Errorf("%s: %+v, want reason containing %q skipped=%v", path, pr, substr, skipped)
		}
	}
	expect("binary.py", "binary", true)
	expect("big.py", "too big", true)
	expect("latin1.py", "invalid UTF-8", false)
	expect("broken.py", "syntax errors", false)
	expect("loop_a.py", "symlink loop", true)
	expect("dangling.py", "broken symlink", true)
	expect("escape.py", "outside the project", true)
	if os.Geteuid() != 0 {
		expect("locked.py", "unreadable", true)
	}
	// What parses is indexed.
	byQual(t, g, "good.good")
	byQual(t, g, "broken.fine")
	if n := byQual(t, g, "latin1.latin"); n.StartLine != 2 {
		t.Errorf("latin: %+v", n)
	}
	for _, n := range g.Nodes() {
		if n.Name == "secret" || strings.HasPrefix(n.Path, "d/") {
			t.Errorf("followed a symlink: %s", n.Path)
		}
	}
	if rep.Skipped < 5 {
		t.Errorf("skipped = %d: %v", rep.Skipped, rep.Problems)
	}
}

// TestUnreadableAndVanished exercises the per-file read errors directly, since
// a root test process can read any file and a real mid-walk deletion is a race.
func TestUnreadableAndVanished(t *testing.T) {
	root := writeTree(t, map[string]string{"a.py": "def a(): pass\n"})
	p := openT(t, root, Options{NoCache: true})
	py := p.byName["python"]
	r, err := p.processOne(context.Background(), job{wf: walkFile{rel: "gone.py", lang: py}}, map[*language]*extractor{})
	if err != nil || r.fd != nil || r.problem == nil || !strings.Contains(r.problem.Reason, "deleted during the index") {
		t.Errorf("vanished file: %+v %+v %v", r.fd, r.problem, err)
	}
	if err := os.Mkdir(filepath.Join(root, "dir.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err = p.processOne(context.Background(), job{wf: walkFile{rel: "dir.py", lang: py}}, map[*language]*extractor{})
	if err != nil || r.fd != nil || r.problem == nil || !strings.Contains(r.problem.Reason, "not a regular file: a directory") {
		t.Errorf("unreadable file: %+v %+v %v", r.fd, r.problem, err)
	}
	// Deleting a file and updating removes its nodes.
	if err := os.Remove(filepath.Join(root, "a.py")); err != nil {
		t.Fatal(err)
	}
	g, err := p.UpdateFiles(context.Background(), []string{"a.py"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.FileNode("a.py"); ok || len(g.Nodes()) != 0 {
		t.Errorf("deleted file still in graph: %d nodes", len(g.Nodes()))
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "missing"), Options{}); err == nil {
		t.Error("Open of a missing folder should fail")
	}
	f := filepath.Join(t.TempDir(), "file.py")
	os.WriteFile(f, []byte("x = 1\n"), 0o644)
	if _, err := Open(context.Background(), f, Options{}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Open of a file: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := writeTree(t, pyFixture)
	if _, err := Open(ctx, root, Options{NoCache: true}); err == nil {
		t.Error("Open with a cancelled context should fail")
	}
}

func TestIncrementalUpdateAndStableIDs(t *testing.T) {
	root := writeTree(t, pyFixture)
	p := openT(t, root, Options{NoCache: true})
	g1 := p.Graph()
	helper1 := byQual(t, g1, "pkg.util.helper")
	item1 := byQual(t, g1, "pkg.models.Item")

	// Lines inserted above a function: same ID, new position.
	util := filepath.Join(root, "pkg", "util.py")
	src, _ := os.ReadFile(util)
	changed := strings.Replace(string(src), "def make(n):", "# a comment\n\n\ndef added():\n    return helper()\n\n\ndef make(n):", 1)
	if err := os.WriteFile(util, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	g2, err := p.UpdateFiles(context.Background(), []string{util})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Report(); r.Parsed != 1 {
		t.Errorf("update parsed %d files, want 1", r.Parsed)
	}
	helper2 := byQual(t, g2, "pkg.util.helper")
	if helper2.ID != helper1.ID || helper2.StartLine != helper1.StartLine+7 {
		t.Errorf("helper moved: id %s→%s line %d→%d", helper1.ID, helper2.ID, helper1.StartLine, helper2.StartLine)
	}
	if byQual(t, g2, "pkg.models.Item") != item1 && byQual(t, g2, "pkg.models.Item").ID != item1.ID {
		t.Error("Item ID changed though its file did not")
	}
	wantEdge(t, g2, "pkg.util.added", "pkg.util.helper", EdgeCalls)
	// The old snapshot is untouched.
	if _, ok := g1.Node(byQual(t, g2, "pkg.util.added").ID); ok {
		t.Error("old snapshot changed")
	}
	// Unchanged content: no new graph.
	g3, err := p.UpdateFiles(context.Background(), []string{util, "/elsewhere/x.py", "notes.txt"})
	if err != nil || g3 != g2 {
		t.Errorf("no-op update built a new graph (%v)", err)
	}
	// A new file appears.
	newf := filepath.Join(root, "pkg", "extra.py")
	os.WriteFile(newf, []byte("from .util import added\n\ndef extra():\n    added()\n"), 0o644)
	g4, err := p.UpdateFiles(context.Background(), []string{newf})
	if err != nil {
		t.Fatal(err)
	}
	wantEdge(t, g4, "pkg.extra.extra", "pkg.util.added", EdgeCalls)

	// The incrementally updated graph equals a fresh index of the same tree.
	sameGraph(t, g4, openT(t, root, Options{NoCache: true}).Graph())
	// A body-only edit (no interface change) too.
	src, _ = os.ReadFile(util)
	os.WriteFile(util, []byte(strings.Replace(string(src), `return make("x")`, `return make("y") or make("z")`, 1)), 0o644)
	g5, err := p.UpdateFiles(context.Background(), []string{util})
	if err != nil {
		t.Fatal(err)
	}
	sameGraph(t, g5, openT(t, root, Options{NoCache: true}).Graph())

	// A new definition that an importer already calls (unresolved until now),
	// and one that only a transitive importer reaches through a re-export.
	app := filepath.Join(root, "app.py")
	asrc, _ := os.ReadFile(app)
	os.WriteFile(app, append(asrc, []byte("\n\ndef later_user():\n    pkg.util.later()\n")...), 0o644)
	if _, err := p.UpdateFiles(context.Background(), []string{app}); err != nil {
		t.Fatal(err)
	}
	src, _ = os.ReadFile(util)
	os.WriteFile(util, append(src, []byte("\n\ndef later():\n    pass\n")...), 0o644)
	g6, err := p.UpdateFiles(context.Background(), []string{util})
	if err != nil {
		t.Fatal(err)
	}
	wantEdge(t, g6, "app.later_user", "pkg.util.later", EdgeCalls)
	sameGraph(t, g6, openT(t, root, Options{NoCache: true}).Graph())
	// Removing it again drops the edge and counts the call as unresolved.
	os.WriteFile(util, src, 0o644)
	g7, err := p.UpdateFiles(context.Background(), []string{util})
	if err != nil {
		t.Fatal(err)
	}
	sameGraph(t, g7, openT(t, root, Options{NoCache: true}).Graph())

	// A separate index of the same tree elsewhere yields the same IDs.
	root2 := writeTree(t, pyFixture)
	gOther := openT(t, root2, Options{NoCache: true}).Graph()
	if byQual(t, gOther, "pkg.models.Item").ID != item1.ID || byQual(t, gOther, "pkg.util.helper").ID != helper1.ID {
		t.Error("IDs differ between two indexes of the same code")
	}
}

func TestCacheReopen(t *testing.T) {
	root := writeTree(t, pyFixture)
	p1 := openT(t, root, Options{})
	if r := p1.Report(); r.Parsed == 0 || r.CacheErr != "" {
		t.Fatalf("first open: %+v", r)
	}
	n1 := len(p1.Graph().Nodes())
	e1 := len(p1.Graph().Edges())
	p1.Close()
	if _, err := os.Stat(filepath.Join(root, ".codeloom", "codeloom.db")); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	p2 := openT(t, root, Options{})
	r2 := p2.Report()
	if r2.Parsed != 0 || r2.Cached != r2.Stats.Files {
		t.Errorf("reopen parsed %d, cached %d of %d", r2.Parsed, r2.Cached, r2.Stats.Files)
	}
	if len(p2.Graph().Nodes()) != n1 || len(p2.Graph().Edges()) != e1 {
		t.Errorf("reopened graph differs: %d/%d nodes, %d/%d edges", len(p2.Graph().Nodes()), n1, len(p2.Graph().Edges()), e1)
	}
	wantEdge(t, p2.Graph(), "pkg.util.make", "pkg.models.Base.save", EdgeCalls)
	p2.Close()
	// One changed file is re-parsed on the next open; a touched but unchanged
	// file is not.
	util := filepath.Join(root, "pkg", "util.py")
	src, _ := os.ReadFile(util)
	os.WriteFile(util, append(src, []byte("\ndef more():\n    pass\n")...), 0o644)
	models := filepath.Join(root, "pkg", "models.py")
	msrc, _ := os.ReadFile(models)
	os.WriteFile(models, msrc, 0o644)
	p3 := openT(t, root, Options{})
	if r := p3.Report(); r.Parsed != 1 {
		t.Errorf("after one change parsed %d", r.Parsed)
	}
	byQual(t, p3.Graph(), "pkg.util.more")
	p3.Close()
	// NoCache ignores the cache.
	if r := openT(t, root, Options{NoCache: true}).Report(); r.Parsed != r.Stats.Files {
		t.Errorf("NoCache parsed %d of %d", r.Parsed, r.Stats.Files)
	}
}

func TestSampleProject(t *testing.T) {
	root := filepath.Join("..", "..", "assets", "sample")
	if _, err := os.Stat(filepath.Join(root, "inventory")); err != nil {
		t.Skip("sample project not present")
	}
	g := openT(t, root, Options{NoCache: true}).Graph()
	inv := byQual(t, g, "inventory.models.Inventory")
	if inv.Kind != KindClass || len(g.Children(inv.ID)) < 5 {
		t.Errorf("Inventory: %+v, %d children", inv, len(g.Children(inv.ID)))
	}
	wantEdge(t, g, "inventory.models.Inventory.total_value", "inventory.pricing.line_total", EdgeCalls)
	wantEdge(t, g, "inventory.models.Inventory.total_value", "inventory.models.Inventory.items", EdgeCalls)
	wantEdge(t, g, "inventory.pricing.line_total", "inventory.pricing.bulk_discount", EdgeCalls)
	wantEdge(t, g, "inventory.models", "inventory.pricing", EdgeImports)
	sl, err := g.Slice(byQual(t, g, "inventory.pricing.line_total").ID)
	if err != nil {
		t.Fatal(err)
	}
	if sl.Env["TAX_RATE"] != "0.20" {
		t.Errorf("line_total slice env = %v", sl.Env)
	}
	if !strings.Contains(sl.Code, "DEFAULT_TAX_RATE = 0.2") || !strings.Contains(sl.Code, "def tax_rate") {
		t.Errorf("slice lacks a dependency:\n%s", sl.Code)
	}
}

func TestWatch(t *testing.T) {
	root := writeTree(t, pyFixture)
	p := openT(t, root, Options{NoCache: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	graphs := make(chan *Graph, 16)
	go func() { done <- p.Watch(ctx, func(g *Graph) { graphs <- g }) }()
	// Give the watcher a moment to register, then change things: a new file
	// in a new directory and an edit.
	time.Sleep(200 * time.Millisecond)
	if err := os.MkdirAll(filepath.Join(root, "pkg", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	change := func() {
		os.WriteFile(filepath.Join(root, "pkg", "sub", "__init__.py"), []byte(""), 0o644)
		os.WriteFile(filepath.Join(root, "pkg", "sub", "new.py"), []byte("def fresh():\n    return 1\n"), 0o644)
		os.WriteFile(filepath.Join(root, "app.py"), []byte("def main():\n    pass\n"), 0o644)
	}
	change()
	// On a busy machine the watcher may register after the first writes:
	// writing the same content again makes fresh events until it sees them.
	again := time.NewTicker(time.Second)
	defer again.Stop()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case <-again.C:
			change()
		case g := <-graphs:
			_, hasFresh := findQual(g, "pkg.sub.new.fresh")
			n, _ := findQual(g, "app.main")
			if hasFresh && n != nil && len(g.Out(n.ID, EdgeCalls)) == 0 {
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				return
			}
		case <-deadline:
			cancel()
			t.Fatal("watcher did not deliver the changes")
		}
	}
}

func findQual(g *Graph, q string) (*Node, bool) {
	for _, n := range g.Nodes() {
		if n.QualName == q {
			return n, true
		}
	}
	return nil, false
}

// sameGraph compares two graphs by node IDs, positions and edges.
func sameGraph(t *testing.T, a, b *Graph) {
	t.Helper()
	key := func(g *Graph) (map[string]string, map[string]bool) {
		ns := map[string]string{}
		for _, n := range g.Nodes() {
			ns[n.ID] = fmt.Sprintf("%s %s %d-%d %s", n.Kind, n.QualName, n.StartLine, n.EndLine, n.Parent)
		}
		es := map[string]bool{}
		for _, e := range g.Edges() {
			es[e.From+" "+string(e.Kind)+" "+e.To] = true
		}
		return ns, es
	}
	an, ae := key(a)
	bn, be := key(b)
	for id, v := range an {
		if bn[id] != v {
			t.Errorf("node %s: %q vs fresh %q", id, v, bn[id])
		}
	}
	if len(an) != len(bn) || len(ae) != len(be) {
		t.Errorf("incremental graph has %d nodes %d edges, fresh %d nodes %d edges", len(an), len(ae), len(bn), len(be))
	}
	for e := range be {
		if !ae[e] {
			t.Errorf("incremental graph lacks edge %s", e)
		}
	}
	if a.Stats().Unresolved != b.Stats().Unresolved || a.Stats().Resolved != b.Stats().Resolved {
		t.Errorf("stats differ: %d/%d vs %d/%d", a.Stats().Resolved, a.Stats().Unresolved, b.Stats().Resolved, b.Stats().Unresolved)
	}
}

func TestLocalsShadowModuleNames(t *testing.T) {
	root := writeTree(t, map[string]string{"mod.py": `def indent():
    pass


def helper():
    pass


class K:
    def helper(self):
        pass

    def run(self):
        helper()


def dedent(text, margin=indent):
    indent = 4
    x = indent
    for helper in []:
        helper()
    return x
`})
	g := openT(t, root, Options{NoCache: true}).Graph()
	wantEdge(t, g, "mod.K.run", "mod.helper", EdgeCalls)
	if hasEdge(t, g, "mod.K.run", "mod.K.helper", EdgeCalls) {
		t.Error("a bare call inside a method resolved to a method of the class")
	}
	for _, e := range g.Out(byQual(t, g, "mod.dedent").ID) {
		n, _ := g.Node(e.To)
		t.Errorf("dedent has edge %s to %s, but only locals shadowing module names are used", e.Kind, n.QualName)
	}
}

func TestReexports(t *testing.T) {
	root := writeTree(t, map[string]string{
		"pkg/__init__.py": "from .models import Item\nfrom . import util as u\nimport json as j\n",
		"pkg/models.py":   "class Item:\n    def save(self):\n        pass\n",
		"pkg/util.py":     "def helper():\n    pass\n",
		"app.py":          "import pkg\nfrom pkg import Item\n\ndef main():\n    pkg.Item()\n    pkg.u.helper()\n    pkg.Item.save(None)\n    Item()\n    pkg.j.dumps(1)\n",
	})
	g := openT(t, root, Options{NoCache: true}).Graph()
	wantEdge(t, g, "app.main", "pkg.models.Item", EdgeCalls)
	wantEdge(t, g, "app.main", "pkg.util.helper", EdgeCalls)
	wantEdge(t, g, "app.main", "pkg.models.Item.save", EdgeCalls)
	if g.Stats().Unresolved != 0 {
		t.Errorf("unresolved: %v", g.Stats().UnresolvedSample)
	}
}

func TestCodeAfterFileShrank(t *testing.T) {
	root := writeTree(t, pyFixture)
	g := openT(t, root, Options{NoCache: true}).Graph()
	price := byQual(t, g, "pkg.models.Item.price")
	if err := os.WriteFile(filepath.Join(root, "pkg", "models.py"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Code(price.ID); err == nil || !strings.Contains(err.Error(), "changed since it was indexed") {
		t.Errorf("Code of a shrunk file: %v", err)
	}
	if _, err := g.Slice(byQual(t, g, "app.main").ID); err == nil {
		t.Error("Slice over a shrunk file should fail")
	}
	if err := os.Remove(filepath.Join(root, "pkg", "models.py")); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Code(price.ID); err == nil {
		t.Error("Code of a deleted file should fail")
	}
}

func TestIncrementalThroughReexport(t *testing.T) {
	root := writeTree(t, map[string]string{
		"pkg/__init__.py": "from .models import *\n",
		"pkg/models.py":   "class A:\n    pass\n",
		"app.py":          "import pkg\n\n\ndef main():\n    pkg.B()\n",
		"other.py":        "def unrelated():\n    pass\n",
	})
	p := openT(t, root, Options{NoCache: true})
	if p.Graph().Stats().Unresolved != 1 {
		t.Fatalf("pkg.B should be unresolved first: %v", p.Graph().Stats().UnresolvedSample)
	}
	models := filepath.Join(root, "pkg", "models.py")
	os.WriteFile(models, []byte("class A:\n    pass\n\n\nclass B:\n    pass\n"), 0o644)
	g, err := p.UpdateFiles(context.Background(), []string{models})
	if err != nil {
		t.Fatal(err)
	}
	wantEdge(t, g, "app.main", "pkg.models.B", EdgeCalls)
	sameGraph(t, g, openT(t, root, Options{NoCache: true}).Graph())
}

func TestClassAttributeTypes(t *testing.T) {
	root := writeTree(t, map[string]string{"m.py": `from dataclasses import dataclass


class Engine:
    def start(self):
        pass


@dataclass
class Car:
    engine: Engine
    spare: "Engine" = None

    def go(self):
        self.engine.start()
`})
	g := openT(t, root, Options{NoCache: true}).Graph()
	wantEdge(t, g, "m.Car.go", "m.Engine.start", EdgeCalls)
	if n := byQual(t, g, "m.Car"); n.StartLine != 9 || !strings.HasPrefix(n.Signature, "@dataclass class Car") {
		t.Errorf("decorated class: line %d signature %q", n.StartLine, n.Signature)
	}
}

// A watcher whose project was closed stops at the next change instead of
// warning about every later event until its context ends.
func TestWatchStopsWhenProjectClosed(t *testing.T) {
	root := writeTree(t, pyFixture)
	p := openT(t, root, Options{NoCache: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Watch(ctx, nil) }()
	time.Sleep(200 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "app.py"), []byte("def main():\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Watch = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch kept running after the project was closed")
	}
}

// An import inside two required module paths belongs to the longer one,
// every time (the candidates live in a map).
func TestGoImportPicksLongestRequiredModule(t *testing.T) {
	root := writeTree(t, map[string]string{
		"go.mod":  "module example.com/m\n\nrequire (\n\tgithub.com/x/y v1.0.0\n\tgithub.com/x/y/v2 v2.0.0\n)\n",
		"main.go": "package main\n\nimport \"github.com/x/y/v2/z\"\n\nfunc main() { z.Q() }\n",
	})
	for i := 0; i < 8; i++ {
		g := openT(t, root, Options{NoCache: true}).Graph()
		wantEdge(t, g, "example.com/m", "go:github.com/x/y/v2", EdgeImports)
		if hasEdge(t, g, "example.com/m", "go:github.com/x/y", EdgeImports) {
			t.Fatalf("run %d: import of github.com/x/y/v2/z attributed to github.com/x/y", i)
		}
	}
}

// A module whose scope is first built while resolving another file's import
// of a name it re-exports keeps its own import edges.
func TestReexportingModuleKeepsItsImports(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a.py": "from b import X\n\ndef f():\n    return X()\n",
		"b.py": "from c import X\n",
		"c.py": "class X:\n    pass\n",
	})
	g := openT(t, root, Options{NoCache: true}).Graph()
	wantEdge(t, g, "a", "b", EdgeImports)
	wantEdge(t, g, "b", "c", EdgeImports)
	wantEdge(t, g, "a.f", "c.X", EdgeCalls)
}
