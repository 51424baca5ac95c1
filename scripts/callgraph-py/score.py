"""Scores a CodeLoom graph against a dynamic call trace (see trace.py).

usage: score.py GRAPH.json PAIRS.json SRCDIR [-misses N] [-sample N] [-seed S]

Recall: of the traced caller->callee pairs between nodes CodeLoom has (both
ends are definitions or the caller is a module), the share that CodeLoom joins
by a `calls` edge (and by `calls` or `dispatches`). A traced call of
C.__init__ also counts as found when CodeLoom has a `calls` edge to C or to a
subclass of C (a constructor call). Lambdas, comprehensions and class bodies
as callees are not nodes and are left out.

Precision: a random sample of `calls` edges; those the trace confirms are
marked OK, the others are printed with their source line to be judged by hand.
"""
import json
import os
import random
import sys
from collections import defaultdict

args = sys.argv[1:]
opts = {"-misses": "0", "-sample": "0", "-seed": "1"}
pos = []
i = 0
while i < len(args):
    if args[i] in opts:
        opts[args[i]] = args[i + 1]
        i += 2
    else:
        pos.append(args[i])
        i += 1
gpath, ppath, src = pos
g = json.load(open(gpath))
pairs = json.load(open(ppath))
nodes = {n["id"]: n for n in g["nodes"]}
byfile = defaultdict(list)
for n in g["nodes"]:
    if n["kind"] in ("function", "method", "class"):
        byfile[n["path"]].append(n)
filenode = {n["path"]: n for n in g["nodes"] if n["kind"] == "file"}
calls, disp = set(), set()
inherits = defaultdict(set)
for e in g["edges"]:
    if e["kind"] == "calls":
        calls.add((e["source"], e["target"]))
    elif e["kind"] == "dispatches":
        disp.add((e["source"], e["target"]))
    elif e["kind"] == "inherits":
        inherits[e["source"]].add(e["target"])


def at(path, line, name):
    """The definition node starting at line (the callee of a frame)."""
    cands = [n for n in byfile.get(path, []) if n["start_line"] == line]
    for n in cands:
        if n["name"] == name:
            return n
    if name == "<lambda>":
        for n in cands:
            if n["kind"] == "function":
                return n
    return None


def inner(path, line):
    """The innermost definition containing line, else the file."""
    best = None
    for n in byfile.get(path, []):
        if n["start_line"] <= line <= n["end_line"]:
            if best is None or n["start_line"] >= best["start_line"]:
                best = n
    return best or filenode.get(path)


def ancestors(c):
    seen, todo = {c}, [c]
    while todo:
        for b in inherits.get(todo.pop(), ()):
            if b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


truth = {}
skipped = 0
for cf, cl, cn, tf, tl, tn, line in pairs:
    if tn.startswith("<") or cf.startswith("test") or tf.startswith("test"):
        skipped += 1
        continue
    callee = at(tf, tl, tn)
    if callee is None or callee["kind"] == "class":
        skipped += 1
        continue
    if cn == "<module>":
        caller = filenode.get(cf)
    else:
        caller = at(cf, cl, cn) if not cn.startswith("<") else None
        if caller is None:
            caller = inner(cf, line)
    if caller is None:
        skipped += 1
        continue
    truth.setdefault((caller["id"], callee["id"]), (cf, line, tn))


def found(pair, kinds):
    if pair in kinds:
        return True
    c, t = pair
    tn = nodes[t]
    if tn["name"] in ("__init__", "__new__") and tn.get("parent") in nodes:
        cls = tn["parent"]
        for (a, b) in kinds:
            if a == c and nodes[b]["kind"] == "class" and cls in ancestors(b):
                return True
    return False


hit_c = [p for p in truth if found(p, calls)]
both = calls | disp
hit_b = [p for p in truth if found(p, both)]
n = len(truth)
print(f"traced pairs {len(pairs)}, scored {n}, left out {skipped}")
print(f"recall calls            {len(hit_c)}/{n} = {len(hit_c)/max(n,1):.3f}")
print(f"recall calls+dispatches {len(hit_b)}/{n} = {len(hit_b)/max(n,1):.3f}")
dunder = [p for p in truth if nodes[p[1]]["name"].startswith("__") and nodes[p[1]]["name"] not in ("__init__", "__new__")]
ex = [p for p in truth if p not in set(dunder)]
hx = [p for p in ex if found(p, both)]
print(f"recall w/o implicit dunder callees {len(hx)}/{len(ex)} = {len(hx)/max(len(ex),1):.3f}")

lines_cache = {}


def srcline(path, line):
    if path not in lines_cache:
        try:
            lines_cache[path] = open(os.path.join(src, path), errors="replace").read().split("\n")
        except OSError:
            lines_cache[path] = []
    ls = lines_cache[path]
    return ls[line - 1].strip() if 0 < line <= len(ls) else ""


nm = int(opts["-misses"])
if nm:
    miss = [p for p in truth if not found(p, both)]
    random.Random(int(opts["-seed"])).shuffle(miss)
    print(f"\n# {min(nm, len(miss))} of {len(miss)} misses")
    for p in miss[:nm]:
        cf, line, tn = truth[p]
        print(f"MISS {nodes[p[0]]['qualname']} -> {nodes[p[1]]['qualname']}  @{cf}:{line}  {srcline(cf, line)}")

ns = int(opts["-sample"])
if ns:
    truthset = set(truth)
    edges = [e for e in g["edges"] if e["kind"] == "calls" and nodes.get(e["target"], {}).get("kind") != "package"
             and not nodes[e["source"]]["path"].startswith("test")]
    random.Random(int(opts["-seed"])).shuffle(edges)
    ok = 0
    print(f"\n# precision sample: {min(ns, len(edges))} of {len(edges)} calls edges")
    for e in edges[:ns]:
        p = (e["source"], e["target"])
        ok_ = p in truthset
        if not ok_ and nodes[e["target"]]["kind"] == "class":
            anc = ancestors(e["target"])
            ok_ = any(a == e["source"] and nodes[b]["name"] in ("__init__", "__new__") and nodes[b].get("parent") in anc
                      for (a, b) in truthset)
        tag = "OK " if ok_ else "?? "
        ok += tag == "OK "
        s, t = nodes[e["source"]], nodes[e["target"]]
        print(f"{tag}{s['qualname']} -> {t['qualname']} ({t['path']}:{t['start_line']})  @{s['path']}:{e.get('line', 0)}  {srcline(s['path'], e.get('line', 0))}")
    print(f"confirmed by the trace: {ok}/{min(ns, len(edges))}")
