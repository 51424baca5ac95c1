package codegraph

import (
	"fmt"
	"strings"
	"testing"
)

// TestPythonTuplesAndAbstract checks the shapes of flow_python_tuples.go
// and pySubclassMembers with their exact edges: `x, y = f()` takes each
// item of the tuples f returns by position (through `return g(…)`), and
// self.m() in a base class that leaves m to its subclasses dispatches to
// each of them (a mixin's method included).
func TestPythonTuplesAndAbstract(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{"p.py": `
class A:
    def run(self):
        return 1


class B:
    def go(self):
        return 2


def pair():
    return A(), B()


def relay():
    return pair()


def use():
    a, b = pair()
    a.run()
    b.go()
    c, d = relay()
    d.go()
    *rest, e = pair()
    e.run()


class Base:
    def parse(self, s):
        return self.split(s)

    def plain(self):
        return self.missing()


class Mixin:
    def split(self, s):
        return s


class Posix(Base):
    def split(self, s):
        return s


class Windows(Mixin, Base):
    pass


class Other:
    def split(self, s):
        return s
`}), Options{NoCache: true}).Graph()
	// b is pair's second item (B, not A): no run on b, no go on a.
	exactEdges(t, g, "p.use", EdgeCalls, "p.pair", "p.A.run", "p.B.go", "p.relay")
	exactEdges(t, g, "p.relay", EdgeCalls, "p.pair")
	// split is defined by the subclasses only (Windows through Mixin);
	// Other.split is not a subclass's; missing is defined nowhere.
	exactEdges(t, g, "p.Base.parse", EdgeDispatches, "p.Posix.split", "p.Mixin.split")
	exactEdges(t, g, "p.Base.parse", EdgeCalls)
	exactEdges(t, g, "p.Base.plain", EdgeDispatches)
}

// TestPythonContainerSubclass: the elements of instances of a list
// subclass are what the file puts into them, read by `for x in self` and
// `self[0]` inside the class (and its subclasses); calls on them are
// dispatches (any element may be the receiver).
func TestPythonContainerSubclass(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{"tokens.py": `
class Terminal(str):
    @property
    def value(self):
        return str(self)


class TokenList(list):
    @property
    def value(self):
        return ''.join(x.value for x in self)

    def first(self):
        return self[0].value


class Word(TokenList):
    def head(self):
        return self[0].value


class Plain:
    def value(self):
        return 1


class Bag:
    def __init__(self):
        self.items = []

    def first(self):
        for x in self.items:
            x.value()


def get_word(s):
    word = Word()
    t = Terminal(s)
    word.append(t)
    return word, s


def refold(tl):
    parts = list(tl)
    part = parts.pop(0)
    part.head()
    for p in sorted(tl):
        p.head()


def reads_word(s):
    w, s = get_word(s)
    return w.value


def fold():
    tl = get_list("")
    refold(tl)


def get_list(s):
    tl = TokenList()
    w, s = get_word(s)
    tl.append(w)
    return tl
`}), Options{NoCache: true}).Graph()
	// A TokenList holds Words (get_list) and, as any Word, Terminals. A
	// call on an element may run the method (which element is unknown):
	// dispatches, not calls.
	// The recursive one stays a call (a dispatches edge has no loop).
	exactEdges(t, g, "tokens.TokenList.value", EdgeDispatches, "tokens.Terminal.value")
	exactEdges(t, g, "tokens.TokenList.value", EdgeCalls, "tokens.TokenList.value")
	exactEdges(t, g, "tokens.TokenList.first", EdgeDispatches, "tokens.Terminal.value", "tokens.TokenList.value")
	exactEdges(t, g, "tokens.TokenList.first", EdgeCalls)
	// A Word holds only Terminals.
	exactEdges(t, g, "tokens.Word.head", EdgeDispatches, "tokens.Terminal.value")
	// list(tl) and sorted(tl) copy tl's elements (tl: get_list's TokenList,
	// whose own appends are known: calls).
	exactEdges(t, g, "tokens.refold", EdgeCalls, "tokens.Word.head")
	exactEdges(t, g, "tokens.refold", EdgeDispatches)
	// w holds the Word and, as a container, its Terminal: the property read
	// is the Word's only.
	exactEdges(t, g, "tokens.reads_word", EdgeCalls, "tokens.get_word", "tokens.TokenList.value")
	// Bag is no container class: its items list holds nothing known.
	exactEdges(t, g, "tokens.Bag.first", EdgeCalls)
}

// TestGroupEnd pins the bracket and quote walk shared by the Python and Go
// rules.
func TestGroupEnd(t *testing.T) {
	for _, c := range []struct {
		e    string
		i    int
		want int
	}{
		{"f(a, (b), c)", 1, 11},
		{"f(')', \"(\")", 1, 10},
		{"f(`)\\`)", 1, 6},
		{"f('\\')')", 1, 7},
		{"[a, {b: (c)}]", 0, 12},
		{"'ab'c", 0, 3},
		{"f(a", 1, -1},
		{"f('a)", 1, -1},
		{"x", 5, -1},
	} {
		if got := groupEnd(c.e, c.i); got != c.want {
			t.Errorf("groupEnd(%q, %d) = %d, want %d", c.e, c.i, got, c.want)
		}
	}
}

// TestPythonTupleChainIsNotExponential: tuple items passed on through a
// chain deeper than the flow's depth bound, each level unpacking the next
// from several places (the per-depth memo of cut results keeps it linear;
// the bound only catches a hang).
func TestPythonTupleChainIsNotExponential(t *testing.T) {
	var b strings.Builder
	const levels, fanout = 30, 8
	b.WriteString("class Leaf:\n    def run(self):\n        pass\n\n")
	for i := 0; i < levels; i++ {
		fmt.Fprintf(&b, "def f%d(x):\n", i)
		if i == levels-1 {
			b.WriteString("    return Leaf(), x\n\n")
			continue
		}
		for j := 0; j < fanout; j++ {
			fmt.Fprintf(&b, "    a%d, x = f%d(x)\n", j, i+1)
		}
		b.WriteString("    a0.run()\n    return a0, x\n\n")
	}
	indexWithin(t, map[string]string{"chain.py": b.String()}, "a 30-level tuple chain")
}
