"""Scores a CodeLoom graph against an oracle's call pairs (one scorer for
every call-graph harness).

usage: score.py -oracle trace|checker GRAPH.json PAIRS.json SRCDIR
                [-misses N] [-sample N] [-seed S]

GRAPH.json is `scripts/callgraph-py/dump`'s output. The oracle names how
PAIRS.json was made and how its pairs map to CodeLoom nodes:

trace (Python, scripts/callgraph-py/trace.py): a dynamic call trace,
  [callerFile, callerLine, callerName, calleeFile, calleeLine, calleeName,
  callLine]. Pairs between nodes CodeLoom has (both ends are definitions or
  the caller is a module) are scored. A traced call of C.__init__ also counts
  as found when CodeLoom has a `calls` edge to C or to a subclass of C (a
  constructor call). Lambdas, comprehensions and class bodies as callees are
  not nodes and are left out, as are test files.

checker (JS/TS, scripts/callgraph-js/oracle.js): the TypeScript checker's
  resolved signature at each call, [callerFile, callLine, calleeFile,
  calleeLine, calleeName]. The caller is the innermost definition containing
  the call line (CodeLoom puts calls in anonymous callbacks into the named
  function around them), the callee the definition of that name starting at
  the declaration's line (±2 lines for decorators and modifiers). A call of a
  constructor also counts as found when CodeLoom has a `calls` edge to its
  class.

Recall is over the scored pairs, by `calls` and by `calls` or `dispatches`.
Precision: a random sample of `calls` edges; those the oracle confirms are
marked OK, the others are printed with their source line to be judged by
hand (the checker mode also prints the share of all edges it confirms, a
lower bound on precision).
"""
import json
import os
import random
import sys
from collections import defaultdict


def parse_args(argv):
    opts = {"-oracle": "", "-misses": "0", "-sample": "0", "-seed": "1"}
    pos = []
    i = 0
    while i < len(argv):
        if argv[i] in opts:
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            pos.append(argv[i])
            i += 1
    if opts["-oracle"] not in ("trace", "checker") or len(pos) != 3:
        sys.exit("usage: score.py -oracle trace|checker GRAPH.json PAIRS.json SRCDIR [-misses N] [-sample N] [-seed S]")
    return pos, opts


class Graph:
    """The nodes and edges of a dumped CodeLoom graph, indexed for scoring."""

    def __init__(self, path):
        g = json.load(open(path))
        self.edges = g["edges"]
        self.nodes = {n["id"]: n for n in g["nodes"]}
        self.byfile = defaultdict(list)
        for n in g["nodes"]:
            if n["kind"] in ("function", "method", "class"):
                self.byfile[n["path"]].append(n)
        self.filenode = {n["path"]: n for n in g["nodes"] if n["kind"] == "file"}
        self.calls, self.disp = set(), set()
        self.inherits = defaultdict(set)
        for e in g["edges"]:
            if e["kind"] == "calls":
                self.calls.add((e["source"], e["target"]))
            elif e["kind"] == "dispatches":
                self.disp.add((e["source"], e["target"]))
            elif e["kind"] == "inherits":
                self.inherits[e["source"]].add(e["target"])

    def inner(self, path, line, skip_classes):
        """The innermost definition containing line (functions before
        classes when skip_classes), else the file."""
        best = None
        for n in self.byfile.get(path, []):
            if n["start_line"] <= line <= n["end_line"] and not (skip_classes and n["kind"] == "class"):
                if best is None or n["start_line"] >= best["start_line"]:
                    best = n
        if best is None and skip_classes:
            return self.inner(path, line, False)
        return best or self.filenode.get(path)

    def ancestors(self, c):
        seen, todo = {c}, [c]
        while todo:
            for b in self.inherits.get(todo.pop(), ()):
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen

    def calls_edges(self, keep=lambda e: True):
        return [e for e in self.edges if e["kind"] == "calls"
                and self.nodes.get(e["target"], {}).get("kind") != "package" and keep(e)]


class Source:
    """Source lines of the scored tree, for printing misses and samples."""

    def __init__(self, root, width):
        self.root, self.width, self.cache = root, width, {}

    def line(self, path, line):
        if path not in self.cache:
            try:
                self.cache[path] = open(os.path.join(self.root, path), errors="replace").read().split("\n")
            except OSError:
                self.cache[path] = []
        ls = self.cache[path]
        if not 0 < line <= len(ls):
            return ""
        s = ls[line - 1].strip()
        return s[:self.width] if self.width else s


class TraceOracle:
    """Python: pairs from a dynamic trace."""

    confirmed_by = "the trace"

    def __init__(self, g, pairs):
        self.g = g
        self.truth = {}
        self.left = 0
        self.npairs = len(pairs)
        for cf, cl, cn, tf, tl, tn, line in pairs:
            if tn.startswith("<") or cf.startswith("test") or tf.startswith("test"):
                self.left += 1
                continue
            callee = self.at(tf, tl, tn)
            if callee is None or callee["kind"] == "class":
                self.left += 1
                continue
            if cn == "<module>":
                caller = g.filenode.get(cf)
            else:
                caller = self.at(cf, cl, cn) if not cn.startswith("<") else None
                if caller is None:
                    caller = g.inner(cf, line, False)
            if caller is None:
                self.left += 1
                continue
            self.truth.setdefault((caller["id"], callee["id"]), (cf, line, tn))

    def at(self, path, line, name):
        """The definition node starting at line (the callee of a frame)."""
        cands = [n for n in self.g.byfile.get(path, []) if n["start_line"] == line]
        for n in cands:
            if n["name"] == name:
                return n
        if name == "<lambda>":
            for n in cands:
                if n["kind"] == "function":
                    return n
        return None

    def header(self):
        return f"traced pairs {self.npairs}, scored {len(self.truth)}, left out {self.left}"

    def found(self, pair, kinds):
        if pair in kinds:
            return True
        c, t = pair
        tn = self.g.nodes[t]
        if tn["name"] in ("__init__", "__new__") and tn.get("parent") in self.g.nodes:
            cls = tn["parent"]
            for (a, b) in kinds:
                if a == c and self.g.nodes[b]["kind"] == "class" and cls in self.g.ancestors(b):
                    return True
        return False

    def extra_recall(self, both):
        nodes = self.g.nodes
        dunder = {p for p in self.truth if nodes[p[1]]["name"].startswith("__") and nodes[p[1]]["name"] not in ("__init__", "__new__")}
        ex = [p for p in self.truth if p not in dunder]
        hx = [p for p in ex if self.found(p, both)]
        print(f"recall w/o implicit dunder callees {len(hx)}/{len(ex)} = {len(hx)/max(len(ex),1):.3f}")

    def sample_edges(self):
        return self.g.calls_edges(lambda e: not self.g.nodes[e["source"]]["path"].startswith("test"))

    def confirms(self, e):
        p = (e["source"], e["target"])
        if p in self.truth:
            return True
        if self.g.nodes[e["target"]]["kind"] == "class":
            anc = self.g.ancestors(e["target"])
            return any(a == e["source"] and self.g.nodes[b]["name"] in ("__init__", "__new__") and self.g.nodes[b].get("parent") in anc
                       for (a, b) in self.truth)
        return False

    def sample_line(self, tag, s, t, e, src):
        return f"{tag}{s['qualname']} -> {t['qualname']} ({t['path']}:{t['start_line']})  @{s['path']}:{e.get('line', 0)}  {src}"


class CheckerOracle:
    """JS/TS: pairs from the TypeScript checker."""

    confirmed_by = "the checker"

    def __init__(self, g, pairs):
        self.g = g
        self.truth = {}
        self.left = 0
        for cf, line, tf, tl, tn in pairs:
            callee = self.decl(tf, tl, tn)
            caller = g.inner(cf, line, True)
            if callee is None or caller is None:
                self.left += 1
                continue
            self.truth.setdefault((caller["id"], callee["id"]), (cf, line, tn))
        self.ctor = {(c, g.nodes[t].get("parent")) for c, t in self.truth if g.nodes[t]["name"] == "constructor"}

    def decl(self, path, line, name):
        best = None
        for n in self.g.byfile.get(path, []):
            if n["name"] == name and abs(n["start_line"] - line) <= 2:
                if best is None or abs(n["start_line"] - line) < abs(best["start_line"] - line):
                    best = n
        return best

    def header(self):
        return f"oracle calls mapped to pairs {len(self.truth)}, left out {self.left}"

    def found(self, p, kinds):
        if p in kinds:
            return True
        c, t = p
        tn = self.g.nodes[t]
        return tn["name"] == "constructor" and (c, tn.get("parent")) in kinds

    def extra_recall(self, both):
        pass

    def sample_edges(self):
        return self.g.calls_edges()

    def confirms(self, e):
        p = (e["source"], e["target"])
        return p in self.truth or p in self.ctor

    def sample_line(self, tag, s, t, e, src):
        return f"{tag}{s['qualname']} -> {t['qualname']}  @{s['path']}:{e.get('line', 0)}  {src}"


def main(argv):
    (gpath, ppath, srcdir), opts = parse_args(argv)
    g = Graph(gpath)
    pairs = json.load(open(ppath))
    checker = opts["-oracle"] == "checker"
    o = CheckerOracle(g, pairs) if checker else TraceOracle(g, pairs)
    src = Source(srcdir, 120 if checker else 0)
    truth, nodes = o.truth, g.nodes
    both = g.calls | g.disp
    n = len(truth)
    hc = [p for p in truth if o.found(p, g.calls)]
    hb = [p for p in truth if o.found(p, both)]
    print(o.header())
    print(f"recall calls            {len(hc)}/{n} = {len(hc)/max(n,1):.3f}")
    print(f"recall calls+dispatches {len(hb)}/{n} = {len(hb)/max(n,1):.3f}")
    o.extra_recall(both)
    nm = int(opts["-misses"])
    if nm:
        miss = [p for p in truth if not o.found(p, both)]
        random.Random(int(opts["-seed"])).shuffle(miss)
        print(f"\n# {min(nm, len(miss))} of {len(miss)} misses")
        for p in miss[:nm]:
            cf, line, _ = truth[p]
            print(f"MISS {nodes[p[0]]['qualname']} -> {nodes[p[1]]['qualname']}  @{cf}:{line}  {src.line(cf, line)}")
    edges = o.sample_edges()
    if checker:
        conf = sum(1 for e in edges if o.confirms(e))
        print(f"calls edges confirmed by the checker: {conf}/{len(edges)} = {conf/max(len(edges),1):.3f} (a lower bound on precision)")
    ns = int(opts["-sample"])
    if ns:
        random.Random(int(opts["-seed"])).shuffle(edges)
        ok = 0
        print(f"\n# precision sample: {min(ns, len(edges))} of {len(edges)} calls edges")
        for e in edges[:ns]:
            good = o.confirms(e)
            ok += good
            s, t = nodes[e["source"]], nodes[e["target"]]
            print(o.sample_line("OK " if good else "?? ", s, t, e, src.line(s["path"], e.get("line", 0))))
        print(f"confirmed by {o.confirmed_by}: {ok}/{min(ns, len(edges))}")


if __name__ == "__main__":
    main(sys.argv[1:])
