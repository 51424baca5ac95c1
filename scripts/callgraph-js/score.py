"""Scores a CodeLoom graph against the TypeScript checker's call graph.

usage: score.py GRAPH.json PAIRS.json SRCDIR [-misses N] [-sample N] [-seed S]

Each oracle call (file, line → declaration) is mapped to CodeLoom nodes: the
caller is the innermost definition containing the call line (CodeLoom puts
calls in anonymous callbacks into the named function around them), the
callee the definition of that name starting at the declaration's line (±2
lines for decorators and modifiers). A call of a constructor also counts as
found when CodeLoom has a `calls` edge to its class. Recall is over mapped
pairs; precision is estimated on a random sample of CodeLoom `calls` edges:
those the checker confirms are OK, the rest are printed for judging by hand.
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
nodes = {n["id"]: n for n in g["nodes"]}
byfile = defaultdict(list)
for n in g["nodes"]:
    if n["kind"] in ("function", "method", "class"):
        byfile[n["path"]].append(n)
filenode = {n["path"]: n for n in g["nodes"] if n["kind"] == "file"}
calls, disp = set(), set()
for e in g["edges"]:
    if e["kind"] == "calls":
        calls.add((e["source"], e["target"]))
    elif e["kind"] == "dispatches":
        disp.add((e["source"], e["target"]))


def inner(path, line):
    best = None
    for n in byfile.get(path, []):
        if n["start_line"] <= line <= n["end_line"] and n["kind"] != "class":
            if best is None or n["start_line"] >= best["start_line"]:
                best = n
    if best is None:
        for n in byfile.get(path, []):
            if n["start_line"] <= line <= n["end_line"]:
                if best is None or n["start_line"] >= best["start_line"]:
                    best = n
    return best or filenode.get(path)


def decl(path, line, name):
    best = None
    for n in byfile.get(path, []):
        if n["name"] == name and abs(n["start_line"] - line) <= 2:
            if best is None or abs(n["start_line"] - line) < abs(best["start_line"] - line):
                best = n
    return best


truth = {}
left = 0
for cf, line, tf, tl, tn in json.load(open(ppath)):
    callee = decl(tf, tl, tn)
    caller = inner(cf, line)
    if callee is None or caller is None:
        left += 1
        continue
    truth.setdefault((caller["id"], callee["id"]), (cf, line))


def found(p, kinds):
    if p in kinds:
        return True
    c, t = p
    tn = nodes[t]
    if tn["name"] == "constructor" and (c, tn.get("parent")) in kinds:
        return True
    return False


n = len(truth)
hc = [p for p in truth if found(p, calls)]
hb = [p for p in truth if found(p, calls | disp)]
print(f"oracle calls mapped to pairs {n}, left out {left}")
print(f"recall calls            {len(hc)}/{n} = {len(hc)/max(n,1):.3f}")
print(f"recall calls+dispatches {len(hb)}/{n} = {len(hb)/max(n,1):.3f}")
lines = {}


def srcline(path, line):
    if path not in lines:
        try:
            lines[path] = open(os.path.join(src, path), errors="replace").read().split("\n")
        except OSError:
            lines[path] = []
    ls = lines[path]
    return ls[line - 1].strip()[:120] if 0 < line <= len(ls) else ""


nm = int(opts["-misses"])
if nm:
    miss = [p for p in truth if not found(p, calls | disp)]
    random.Random(int(opts["-seed"])).shuffle(miss)
    print(f"\n# {min(nm, len(miss))} of {len(miss)} misses")
    for p in miss[:nm]:
        cf, line = truth[p]
        print(f"MISS {nodes[p[0]]['qualname']} -> {nodes[p[1]]['qualname']}  @{cf}:{line}  {srcline(cf, line)}")
truthset = set(truth)
ctor = {(c, nodes[t].get("parent")) for c, t in truth if nodes[t]["name"] == "constructor"}
edges = [e for e in g["edges"] if e["kind"] == "calls" and nodes.get(e["target"], {}).get("kind") != "package"]
conf = sum(1 for e in edges if (e["source"], e["target"]) in truthset or (e["source"], e["target"]) in ctor)
print(f"calls edges confirmed by the checker: {conf}/{len(edges)} = {conf/max(len(edges),1):.3f} (a lower bound on precision)")
ns = int(opts["-sample"])
if ns:
    random.Random(int(opts["-seed"])).shuffle(edges)
    ok = 0
    print(f"\n# precision sample: {min(ns, len(edges))} of {len(edges)} calls edges")
    for e in edges[:ns]:
        p = (e["source"], e["target"])
        good = p in truthset or p in ctor
        ok += good
        s, t = nodes[e["source"]], nodes[e["target"]]
        print(f"{'OK ' if good else '?? '}{s['qualname']} -> {t['qualname']}  @{s['path']}:{e.get('line', 0)}  {srcline(s['path'], e.get('line', 0))}")
    print(f"confirmed by the checker: {ok}/{min(ns, len(edges))}")
