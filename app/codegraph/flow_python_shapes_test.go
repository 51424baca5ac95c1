package codegraph

import (
	"testing"
)

// TestPythonPropertiesContainers checks the shapes of flow_python.go with
// their exact edges: properties (read, super(), setter, override), `not
// in`, type(self)(…) and self.__class__(…), containers of functions and
// instances (displays, append, subscript stores, loops, get), calls of
// computed callees.
func TestPythonPropertiesContainers(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{"p.py": `
class Token:
    def __init__(self, v=0):
        self._v = v

    @property
    def value(self):
        return self._v

    @value.setter
    def value(self, v):
        self._v = v

    @property
    def parts(self):
        return Part()

    def __contains__(self, k):
        return False

    def clone(self):
        return type(self)(1)

    def copy(self):
        return self.__class__(2)

    def plain(self):
        return self._v


class Sub(Token):
    @property
    def value(self):
        return super().value + 1


class Part:
    def size(self):
        return 1


def reads(t: Token):
    x = t.value
    t.value = 3
    t.parts.size()
    t.plain
    if "a" not in t:
        pass


def one(x):
    return x


def two(x):
    return x


HANDLERS = {"a": one, "b": two}
PAIR = (one,)
RULES = []


def rule(f):
    RULES.append(f)
    return f


@rule
def three(x):
    return x


def dispatch(k):
    HANDLERS[k](k)
    h = HANDLERS.get(k)
    h(1)
    for r in RULES:
        r(2)
    PAIR[0](3)


def loops():
    items = [Token(), Part()]
    for it in items:
        it.plain()
    store = {}
    store["p"] = Part()
    store["p"].size()
    return [str(x) for x in items]


class Gen:
    parse = staticmethod(one)

    def _handle_a(self, m):
        return m

    def _handle_b(self, m):
        return m

    def other(self):
        return 0

    def dispatch(self, kind):
        meth = getattr(self, '_handle_' + kind, None)
        meth(1)
        getattr(self, 'other')()
        self.parse(2)

    def fresh(self):
        part = type(self)()
        part.other()
        return self.table()["k"]

    def table(self):
        return {"k": Part()}

    def __str__(self):
        return "g"


def show(g: Gen):
    return str(g.fresh()), str(g)


class Num:
    def __init__(self, n):
        self.n = n

    def __eq__(self, o):
        return True

    def __lt__(self, o):
        return True

    def __add__(self, o):
        return self

    def __iadd__(self, o):
        return self

    def __int__(self):
        return 1

    def __invert__(self):
        return self


def ops(a: Num, b: Num):
    a == b
    a != b
    a < b
    c = a + b
    a += b
    int(a)
    ~a
    return c


def ops2(a: Num, b: Num):
    a += b
    return a != b


def maker():
    return one


def call_of_call():
    maker()(1)
`}), Options{NoCache: true}).Graph()
	// t.value runs the getter (and may run the override); t.value = 3 the
	// setter; t.parts.size() types the property's result; t.plain is a
	// plain method, not called; "not in" calls __contains__.
	exactEdges(t, g, "p.reads", EdgeCalls, "p.Token.value", "p.Token.parts", "p.Part.size", "p.Token.__contains__")
	exactEdges(t, g, "p.reads", EdgeDispatches, "p.Sub.value")
	exactEdges(t, g, "p.Sub.value", EdgeCalls, "p.Token.value")
	// type(self)(…) and self.__class__(…) construct self's class.
	exactEdges(t, g, "p.Token.clone", EdgeCalls, "p.Token.__init__")
	exactEdges(t, g, "p.Token.copy", EdgeCalls, "p.Token", "p.Token.__init__")
	// Dict and tuple displays, get, a list filled by append in a decorator.
	exactEdges(t, g, "p.dispatch", EdgeCalls, "p.one", "p.two", "p.three")
	exactEdges(t, g, "p.rule", EdgeCalls)
	// Loops over a list of instances; a dict filled by a subscript store.
	exactEdges(t, g, "p.loops", EdgeCalls, "p.Token", "p.Token.__init__", "p.Part", "p.Token.plain", "p.Part.size")
	// staticmethod(f) as a class attribute; getattr with a constant name
	// and with a prefix; type(self)() and a returned dict's element.
	exactEdges(t, g, "p.Gen.dispatch", EdgeCalls, "p.Gen._handle_a", "p.Gen._handle_b", "p.Gen.other", "p.one")
	exactEdges(t, g, "p.Gen.fresh", EdgeCalls, "p.Gen.other", "p.Gen.table")
	// str() of a call's result and of a typed parameter.
	exactEdges(t, g, "p.show", EdgeCalls, "p.Gen.fresh", "p.Gen.__str__")
	// Operators and conversions: the left operand's special methods;
	// a != b falls back on __eq__, a += b takes __iadd__ over __add__.
	exactEdges(t, g, "p.ops", EdgeCalls, "p.Num.__eq__", "p.Num.__lt__", "p.Num.__add__", "p.Num.__iadd__",
		"p.Num.__int__", "p.Num.__invert__")
	exactEdges(t, g, "p.ops2", EdgeCalls, "p.Num.__iadd__", "p.Num.__eq__")
	// A call of a call's result.
	exactEdges(t, g, "p.call_of_call", EdgeCalls, "p.maker", "p.one")
}

// TestPythonPropertiesIncremental checks that edits to properties and
// module-level containers read from another file re-resolve the reader:
// the updated graph equals a fresh index.
func TestPythonPropertiesIncremental(t *testing.T) {
	files := map[string]string{
		"lib.py": `
class T:
    @property
    def value(self):
        return 1

    def other(self):
        return 2


def f(x):
    return x


def g(x):
    return x


HANDLERS = {"a": f}
`,
		"app.py": `
from lib import T, HANDLERS


def use(t: T):
    HANDLERS["a"](1)
    return t.value
`,
	}
	root := writeTree(t, files)
	p := openT(t, root, Options{NoCache: true})
	exactEdges(t, p.Graph(), "app.use", EdgeCalls, "lib.T.value", "lib.f")
	edits := []struct{ file, from, to string }{
		{"lib.py", "    @property\n", ""},                           // no longer a property
		{"lib.py", "    def value", "    @property\n    def value"}, // a property again
		{"lib.py", `{"a": f}`, `{"a": g}`},                          // the container holds another function
		{"app.py", "t.value", "t.other"},                            // reads a plain method
	}
	for i, e := range edits {
		g := applyEdit(t, p, root, i, e.file, e.from, e.to)
		if i == 0 {
			exactEdges(t, g, "app.use", EdgeCalls, "lib.f")
		}
	}
	exactEdges(t, p.Graph(), "app.use", EdgeCalls, "lib.g")
}
