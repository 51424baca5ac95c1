package codegraph

import (
	"reflect"
	"slices"
	"sort"
	"testing"
)

// outEdges lists the targets (qualified names) of from's edges of kind,
// sorted: the exact set a test expects.
func outEdges(t *testing.T, g *Graph, from string, kind EdgeKind) []string {
	t.Helper()
	out := []string{}
	for _, e := range g.Out(byQual(t, g, from).ID, kind) {
		n, _ := g.Node(e.To)
		if !slices.Contains(out, n.QualName) {
			out = append(out, n.QualName)
		}
	}
	sort.Strings(out)
	return out
}

// exactEdges checks that from's edges of kind go to exactly want.
func exactEdges(t *testing.T, g *Graph, from string, kind EdgeKind, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	sort.Strings(want)
	if got := outEdges(t, g, from, kind); !reflect.DeepEqual(got, want) {
		t.Errorf("%s -%s-> %v, want %v", from, kind, got, want)
	}
}

// pyFlowFixture has one function per shape the value-flow layer handles.
var pyFlowFixture = map[string]string{
	"shapes.py": `
class Base:
    def __init__(self):
        pass

    def run(self):
        return self.step()

    def step(self):
        return 1


class Child(Base):
    def __init__(self):
        super().__init__()

    def step(self):
        return super().step() + 1


class Leaf(Child):
    pass


def helper():
    return 1


def other():
    return 2


def apply(fn, x):
    return fn(x)


def apply_kw(*, cb=None):
    return cb()


def variables():
    a = helper
    a()
    o = Base()
    b = o.run
    b()
    c, d = helper, other
    d()


def passing():
    apply(helper, 1)
    apply_kw(cb=other)
    list(map(helper, [1]))


def factory():
    return helper


def make():
    return Child()


def returns():
    f = factory()
    f()
    make().step()


class Holder:
    class Inner:
        def go(self):
            return 0

    def __init__(self, cb=other):
        self.cb = cb
        self.fn = self.work
        self.inner = Holder.Inner()

    def work(self):
        return 0

    def use(self):
        self.cb()
        self.fn()
        self.inner.go()


def dec(f):
    def wrapper(*a):
        return f(*a)
    return wrapper


@dec
def decorated():
    return 0


def calls_decorated():
    decorated()


class Bag:
    def __iter__(self):
        return self

    def __next__(self):
        raise StopIteration

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def __contains__(self, x):
        return False

    def __len__(self):
        return 0


class Oops(Exception):
    def __init__(self):
        super().__init__("oops")


def implicit():
    bag = Bag()
    for x in bag:
        pass
    with Bag() as b:
        pass
    if 1 in bag:
        len(bag)
    raise Oops


def construct():
    Leaf()
`,
	"ns/impl.py": `
class Engine:
    def start(self):
        return 1


default_engine = Engine()
`,
	"pkg/__init__.py": `from .core import shared
`,
	"pkg/core.py": `
class Service:
    def serve(self):
        return 1


shared = Service()
`,
	"client.py": `
from ns.impl import Engine, default_engine
from pkg import shared


def use():
    Engine().start()
    default_engine.start()
    shared.serve()
`,
}

// TestPythonValueFlow checks each shape with its exact edges.
func TestPythonValueFlow(t *testing.T) {
	g := openT(t, writeTree(t, pyFlowFixture), Options{NoCache: true}).Graph()
	// super() without arguments.
	exactEdges(t, g, "shapes.Child.__init__", EdgeCalls, "shapes.Base.__init__")
	exactEdges(t, g, "shapes.Child.step", EdgeCalls, "shapes.Base.step")
	// self.step() in Base: Base.step runs; Child overrides it (dispatch).
	exactEdges(t, g, "shapes.Base.run", EdgeCalls, "shapes.Base.step")
	exactEdges(t, g, "shapes.Base.run", EdgeDispatches, "shapes.Child.step")
	// Function values through variables and tuple unpacking; the
	// constructor also calls __init__.
	exactEdges(t, g, "shapes.variables", EdgeCalls,
		"shapes.helper", "shapes.Base", "shapes.Base.__init__", "shapes.Base.run", "shapes.other")
	// Functions passed as arguments: positional, keyword, map.
	exactEdges(t, g, "shapes.passing", EdgeCalls, "shapes.apply", "shapes.apply_kw", "shapes.helper")
	exactEdges(t, g, "shapes.apply", EdgeCalls, "shapes.helper")
	exactEdges(t, g, "shapes.apply_kw", EdgeCalls, "shapes.other")
	// Returned functions and instances, then called.
	exactEdges(t, g, "shapes.returns", EdgeCalls, "shapes.factory", "shapes.helper", "shapes.make", "shapes.Child.step")
	// Attributes: from a parameter's default, a bound method, a nested class.
	exactEdges(t, g, "shapes.Holder.use", EdgeCalls, "shapes.other", "shapes.Holder.work", "shapes.Holder.Inner.go")
	// Decorators: applied from the module; a call reaches the wrapper.
	exactEdges(t, g, "shapes", EdgeCalls, "shapes.dec")
	exactEdges(t, g, "shapes.calls_decorated", EdgeCalls, "shapes.decorated", "shapes.dec.wrapper")
	// Implicit calls: for, with, in, len, raise.
	exactEdges(t, g, "shapes.implicit", EdgeCalls, "shapes.Bag", "shapes.Bag.__iter__", "shapes.Bag.__next__",
		"shapes.Bag.__enter__", "shapes.Bag.__exit__", "shapes.Bag.__contains__", "shapes.Bag.__len__",
		"shapes.Oops", "shapes.Oops.__init__")
	// A() calls __init__ found along the bases.
	exactEdges(t, g, "shapes.construct", EdgeCalls, "shapes.Leaf", "shapes.Child.__init__")
	// A namespace package (no __init__.py) and an instance re-exported
	// through __init__.py.
	exactEdges(t, g, "client.use", EdgeCalls, "ns.impl.Engine", "ns.impl.Engine.start", "pkg.core.Service.serve")
}

// TestPythonValueFlowIncremental checks that edits reaching other files
// through the flow (a result, a parameter call, an override) re-resolve
// them: the updated graph equals a fresh index.
func TestPythonValueFlowIncremental(t *testing.T) {
	files := map[string]string{
		"lib.py": `
class Base:
    def run(self):
        return self.step()

    def step(self):
        return 1


def each(cb):
    return cb()


def make():
    return Base()
`,
		"app.py": `
from lib import Base, each, make


def job():
    return 1


def main():
    each(job)
    make().step()
`,
	}
	root := writeTree(t, files)
	p := openT(t, root, Options{NoCache: true})
	edits := []struct{ file, from, to string }{
		{"lib.py", "return cb()", "return 0"}, // no longer calls its parameter
		{"lib.py", "return 0", "return cb()"}, // calls it again
		{"app.py", "each(job)", "each(main)"}, // passes another function
		{"app.py", "def main():", "class Sub(Base):\n    def step(self):\n        return 2\n\n\ndef main():"}, // an override elsewhere
		{"lib.py", "return Base()", "return None"},                                                            // result changes
	}
	for i, e := range edits {
		applyEdit(t, p, root, i, e.file, e.from, e.to)
	}
}

// edgeSet lists a graph's non-contains edges as sorted strings.
func edgeSet(g *Graph) []string {
	var out []string
	for _, e := range g.Edges() {
		if e.Kind == EdgeContains {
			continue
		}
		a, _ := g.Node(e.From)
		b, _ := g.Node(e.To)
		out = append(out, a.QualName+" -"+string(e.Kind)+"-> "+b.QualName)
	}
	sort.Strings(out)
	return out
}

// TestPythonParameterValues checks values passed to parameters by calls in
// the same file, methods called through their class (no self shift),
// subscript stores and re-raised instances.
func TestPythonParameterValues(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{"m.py": `
class Parser:
    def get(self):
        return 1

    def section(self):
        return Proxy(self)


class Proxy:
    def __init__(self, parser):
        self._parser = parser

    def value(self):
        return self._parser.get()


class Base:
    def __init__(self, field):
        self.field = field

    def first(self):
        return self.field[0]


class Sub(Base):
    def __init__(self, field):
        Base.__init__(self, field)

    def __getitem__(self, i):
        return i


class Store:
    def __setitem__(self, k, v):
        pass

    def __getitem__(self, k):
        return k

    def put(self):
        self["a"] = 1


class Oops(Exception):
    pass


def again():
    e = Oops()
    raise e
`}), Options{NoCache: true}).Graph()
	// Proxy(self) in Parser.section: Proxy's parser is a Parser.
	exactEdges(t, g, "m.Proxy.value", EdgeCalls, "m.Parser.get")
	// Base.__init__(self, field) passes field, not self, to field.
	exactEdges(t, g, "m.Base.first", EdgeCalls)
	// self["a"] = 1 stores: __setitem__ only.
	exactEdges(t, g, "m.Store.put", EdgeCalls, "m.Store.__setitem__")
	// raise e re-raises an instance: only the constructor call above.
	exactEdges(t, g, "m.again", EdgeCalls, "m.Oops")
}
