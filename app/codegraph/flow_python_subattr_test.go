package codegraph

import "testing"

// TestPythonSubclassAttrs checks attributes and special methods a base
// class leaves to its subclasses (flow_python_subattr.go) with exact edges:
// self.addr read in Net, set only by V4Net and V6Net (a mixin's attribute
// counts), reaches what they set, as dispatches; str(self) in a class
// without __str__ dispatches to the subclasses' own.
func TestPythonSubclassAttrs(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{"p.py": `
class Addr4:
    @property
    def is_loopback(self):
        return True

    def __int__(self):
        return 4

    def show(self):
        return "4"


class Addr6:
    @property
    def is_loopback(self):
        return False

    def __int__(self):
        return 6

    def show(self):
        return "6"


class Flavour:
    def parse(self, s):
        return s


_posix_flavour = Flavour()


class Net:
    def loop(self):
        return self.addr.is_loopback

    def num(self):
        return int(self.addr)

    def shown(self):
        return self.addr.show()

    def parts(self, s):
        return self._flavour.parse(s)

    def text(self):
        return str(self)

    def nothing(self):
        return self.unset.show()


class V4Net(Net):
    def __init__(self):
        self.addr = Addr4()

    def __str__(self):
        return "v4"


class WithFlavour:
    _flavour = _posix_flavour


class V6Net(WithFlavour, Net):
    def __init__(self):
        self.addr = Addr6()


class Lone:
    def use(self):
        return self.addr.show()
`}), Options{NoCache: true}).Graph()
	exactEdges(t, g, "p.Net.loop", EdgeDispatches, "p.Addr4.is_loopback", "p.Addr6.is_loopback")
	exactEdges(t, g, "p.Net.loop", EdgeCalls)
	exactEdges(t, g, "p.Net.num", EdgeDispatches, "p.Addr4.__int__", "p.Addr6.__int__")
	exactEdges(t, g, "p.Net.shown", EdgeDispatches, "p.Addr4.show", "p.Addr6.show")
	// _flavour comes from V6Net's mixin WithFlavour.
	exactEdges(t, g, "p.Net.parts", EdgeDispatches, "p.Flavour.parse")
	exactEdges(t, g, "p.Net.text", EdgeDispatches, "p.V4Net.__str__")
	exactEdges(t, g, "p.Net.text", EdgeCalls)
	// unset is set nowhere; Lone has no subclasses.
	exactEdges(t, g, "p.Net.nothing", EdgeDispatches)
	exactEdges(t, g, "p.Lone.use", EdgeDispatches)
	exactEdges(t, g, "p.Lone.use", EdgeCalls)
}

// TestPythonFormatting checks string conversions as implicit calls
// (flow_python_format.go) with exact edges: %s/%r, f-string fields
// (!r, {x=}, a format spec), str.format fields ({}, {0}, {k}, !r), str()
// falling back on __repr__ (not for a str subclass) or on a class
// attribute __str__ = __repr__, and __format__ for f-strings and .format
// only.
func TestPythonFormatting(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{"p.py": `
class S:
    def __str__(self):
        return "s"

    def __repr__(self):
        return "S"


class R:
    def __repr__(self):
        return "R"


class Alias:
    def __repr__(self):
        return "A"

    __str__ = __repr__


class Word(str):
    def __repr__(self):
        return "W"


class F:
    def __format__(self, spec):
        return "f"

    def __str__(self):
        return "F"


def percent(s, r):
    s = S()
    r = R()
    return '%s and %r, %d' % (s, s, r) + "%s" % r


def fstr():
    s = S()
    f = F()
    return f"{s!r} {f} {f:>10} {s=}"


def dotformat():
    s = S()
    r = R()
    return "{} {!r} {k}".format(s, r, k=S())


def conv():
    a = Alias()
    w = Word("x")
    r = R()
    return str(a) + str(w) + str(r) + repr(S())


def plain():
    f = F()
    return '%s' % f
`}), Options{NoCache: true}).Graph()
	// %d does not convert with __str__; % (r) would, but r is third.
	exactEdges(t, g, "p.percent", EdgeCalls, "p.S", "p.R", "p.S.__str__", "p.S.__repr__", "p.R.__repr__")
	exactEdges(t, g, "p.fstr", EdgeCalls, "p.S", "p.F", "p.S.__repr__", "p.F.__format__")
	exactEdges(t, g, "p.dotformat", EdgeCalls, "p.S", "p.R", "p.S.__str__", "p.R.__repr__")
	// Word derives from str: str.__str__ runs, not Word.__repr__.
	exactEdges(t, g, "p.conv", EdgeCalls, "p.Alias", "p.Word", "p.R", "p.S", "p.Alias.__repr__", "p.R.__repr__", "p.S.__repr__")
	// % runs str(), never __format__.
	exactEdges(t, g, "p.plain", EdgeCalls, "p.F", "p.F.__str__")
}

// TestPythonClassShapes checks flow_python_classes.go with exact edges:
// `C.x = v` at module level is a class attribute of C; self.__class__(…)
// and cls(…) dispatch to the subclasses' __init__; self.p(…) with p a base
// @property that every concrete subclass replaces with a class attribute
// calls no getter but what the attribute holds (dispatches from the base,
// calls from a subclass whose own attribute it is), while a property that
// an ordinary override replaces keeps its getter edge.
func TestPythonClassShapes(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{"p.py": `
class Net4:
    def __init__(self, a):
        self.a = a

    def __contains__(self, x):
        return True


class Consts:
    reserved = Net4(1)


class Base:
    @property
    def _addr_class(self):
        raise NotImplementedError

    @property
    def kind(self):
        return 0

    def make(self, x):
        return self._addr_class(x)

    def grow(self):
        return self.__class__(1)

    @classmethod
    def build(cls):
        return cls(2)

    def sort(self):
        return self.kind


class A4:
    def __init__(self, x):
        self.x = x


class A6:
    def __init__(self, x):
        self.x = x


class V4(Base):
    _addr_class = A4

    def __init__(self, n):
        self.n = n

    def host(self):
        return self._addr_class(3)

    def reserved(self):
        return self in self._consts.reserved


class V6(Base):
    _addr_class = A6

    def __init__(self, n):
        self.n = n

    @property
    def kind(self):
        return 6


V4._consts = Consts
`}), Options{NoCache: true}).Graph()
	exactEdges(t, g, "p.Base.make", EdgeCalls)
	exactEdges(t, g, "p.Base.make", EdgeDispatches, "p.A4", "p.A4.__init__", "p.A6", "p.A6.__init__")
	exactEdges(t, g, "p.V4.host", EdgeCalls, "p.A4", "p.A4.__init__")
	exactEdges(t, g, "p.Base.grow", EdgeDispatches, "p.V4.__init__", "p.V6.__init__")
	exactEdges(t, g, "p.Base.build", EdgeDispatches, "p.V4.__init__", "p.V6.__init__")
	exactEdges(t, g, "p.V4.reserved", EdgeCalls, "p.Net4.__contains__")
	// kind is overridden by a property, not replaced: the getter runs for
	// Base instances, V6's dispatches.
	exactEdges(t, g, "p.Base.sort", EdgeCalls, "p.Base.kind")
	exactEdges(t, g, "p.Base.sort", EdgeDispatches, "p.V6.kind")
}

// TestPythonRuntimeClasses checks classes built with type(name, (A, B),
// {}) (flow_python_classes.go) and the container shapes they need, with
// exact edges: the registry's classes reach `cls` through d.update(m),
// d.get(k) and a local named cls; in BaseHeader (put last), cls.parse()
// dispatches to the parse of each class put before it, self.init() also to
// their overrides (self rebound by __new__ stays self), and super().init()
// in those classes reaches BaseHeader's. A class never combined gets
// nothing.
func TestPythonRuntimeClasses(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{"h.py": `
class BaseHeader(str):
    def __new__(cls, name, value):
        kwds = {'defects': []}
        cls.parse(value, kwds)
        self = str.__new__(cls, kwds['decoded'])
        self.init(name, **kwds)
        return self

    def init(self, name, **kw):
        self._name = name


class Unstructured:
    @classmethod
    def parse(cls, value, kwds):
        kwds['decoded'] = value


class DateHeader:
    @classmethod
    def parse(cls, value, kwds):
        kwds['decoded'] = value

    def init(self, *args, **kw):
        super().init(*args, **kw)


class Lonely:
    def init(self):
        super().init()


_default_header_map = {
    'subject': Unstructured,
    'date': DateHeader,
}


class HeaderRegistry:
    def __init__(self, base_class=BaseHeader):
        self.registry = {}
        self.base_class = base_class
        self.registry.update(_default_header_map)

    def __getitem__(self, name):
        cls = self.registry.get(name.lower())
        return type('_' + cls.__name__, (cls, self.base_class), {})
`}), Options{NoCache: true}).Graph()
	exactEdges(t, g, "h.BaseHeader.__new__", EdgeCalls, "h.BaseHeader.init")
	exactEdges(t, g, "h.BaseHeader.__new__", EdgeDispatches, "h.Unstructured.parse", "h.DateHeader.parse", "h.DateHeader.init")
	exactEdges(t, g, "h.DateHeader.init", EdgeDispatches, "h.BaseHeader.init")
	exactEdges(t, g, "h.Lonely.init", EdgeDispatches)
	exactEdges(t, g, "h.Lonely.init", EdgeCalls)
}

// TestPythonNestedContainers checks dicts of dicts and element aliases
// with exact edges (argparse's registries): `registry =
// self._registries.setdefault(name, {}); registry[value] = cls` puts cls
// one level down in _registries, `self._registries[name].get(value)` takes
// it out; as the inner dict is not known, calling it is a dispatch (to the
// class and its __init__), never a call. A plain dict's d.get(k) and
// d.copy() keep their elements; x.update(y) fills x with y's.
func TestPythonNestedContainers(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{"p.py": `
class Store:
    def __init__(self, **kw):
        self.kw = kw


class Append:
    def __init__(self, **kw):
        self.kw = kw


def identity(s):
    return s


def other(s):
    return s


class Container:
    def __init__(self):
        self._registries = {}
        self.register('action', 'store', Store)
        self.register('action', 'append', Append)

    def register(self, registry_name, value, object):
        registry = self._registries.setdefault(registry_name, {})
        registry[value] = object

    def _registry_get(self, registry_name, value, default=None):
        return self._registries[registry_name].get(value, default)

    def add_argument(self, **kwargs):
        action_class = self._registry_get('action', kwargs.get('action'))
        return action_class(**kwargs)


TABLE = {'a': identity}


def lookup(k):
    table = {}
    table.update(TABLE)
    f = table.get(k)
    f(k)
    g = TABLE.copy()['a']
    return g(k)
`}), Options{NoCache: true}).Graph()
	exactEdges(t, g, "p.Container.add_argument", EdgeCalls, "p.Container._registry_get")
	exactEdges(t, g, "p.Container.add_argument", EdgeDispatches, "p.Store", "p.Store.__init__", "p.Append", "p.Append.__init__")
	exactEdges(t, g, "p.lookup", EdgeCalls, "p.identity")
}

// TestPythonPathLike checks that an instance handed to a C path function
// of os or io, or to open(), runs its __fspath__ (pyPathArg), with exact
// edges: os.fsencode (written in Python: it calls __fspath__ itself), a
// local function named like one of os's, and a class without __fspath__
// add nothing.
func TestPythonPathLike(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{"p.py": `
import io
import os


class Path:
    def __fspath__(self):
        return "/x"

    def stat(self):
        return os.stat(self)

    def open(self):
        return io.open(self, "r")

    def read(self):
        with open(self) as f:
            return f.read()

    def encoded(self):
        return os.fsencode(self)


class Plain:
    def stat(self):
        return os.stat(self)


def chmod(p):
    return p


def local():
    p = Path()
    return chmod(p)
`}), Options{NoCache: true}).Graph()
	exactEdges(t, g, "p.Path.stat", EdgeCalls, "p.Path.__fspath__")
	exactEdges(t, g, "p.Path.open", EdgeCalls, "p.Path.__fspath__")
	exactEdges(t, g, "p.Path.read", EdgeCalls, "p.Path.__fspath__")
	exactEdges(t, g, "p.Path.encoded", EdgeCalls)
	exactEdges(t, g, "p.Plain.stat", EdgeCalls)
	exactEdges(t, g, "p.local", EdgeCalls, "p.Path", "p.chmod")
}

// TestPythonCacheWrapped checks `f = functools.lru_cache()(f)` at module
// level (pyCacheWrapped) with exact edges: f's results still flow (the
// wrapper calls f), so selector.select_from() reaches the classes f builds
// through a local named cls.
func TestPythonCacheWrapped(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{"p.py": `
import functools


class Precise:
    def __init__(self, pat):
        self.pat = pat

    def select_from(self, p):
        return p


class Wild:
    def __init__(self, pat):
        self.pat = pat

    def select_from(self, p):
        return p


class Other:
    def select_from(self, p):
        return p


def make(pat):
    if pat == "*":
        cls = Wild
    else:
        cls = Precise
    return cls(pat)


make = functools.lru_cache()(make)


def glob(pat):
    selector = make(pat)
    return selector.select_from(pat)
`}), Options{NoCache: true}).Graph()
	exactEdges(t, g, "p.glob", EdgeCalls, "p.make", "p.Precise.select_from", "p.Wild.select_from")
	exactEdges(t, g, "p.make", EdgeCalls, "p.Precise", "p.Precise.__init__", "p.Wild", "p.Wild.__init__")
}
