"""Lists the `calls` edges one CodeLoom graph has and another has not, with
the trace's verdict, to judge the precision of a change by hand.

usage: newedges.py OLD.json NEW.json PAIRS.json SRCDIR [-sample N] [-seed S]

Edges are compared by (source qualname, target qualname). Each new edge is
printed as OK (the trace has the pair, or a constructor call of a class whose
__init__ the trace saw) or ?? (to judge), with the line of the call.
"""
import json
import os
import random
import sys

args = sys.argv[1:]
opts = {"-sample": "0", "-seed": "1"}
pos = []
i = 0
while i < len(args):
    if args[i] in opts:
        opts[args[i]] = args[i + 1]
        i += 2
    else:
        pos.append(args[i])
        i += 1
oldp, newp, pairsp, src = pos


def load(p):
    g = json.load(open(p))
    nodes = {n["id"]: n for n in g["nodes"]}
    return g, nodes


og, onodes = load(oldp)
ng, nnodes = load(newp)
old = {(onodes[e["source"]]["qualname"], onodes[e["target"]]["qualname"]) for e in og["edges"] if e["kind"] == "calls"}
byfile = {}
for n in ng["nodes"]:
    if n["kind"] in ("function", "method", "class"):
        byfile.setdefault(n["path"], []).append(n)
filenode = {n["path"]: n for n in ng["nodes"] if n["kind"] == "file"}


def at(path, line, name):
    for n in byfile.get(path, []):
        if n["start_line"] == line and n["name"] == name:
            return n
    return None


def inner(path, line):
    best = None
    for n in byfile.get(path, []):
        if n["start_line"] <= line <= n["end_line"] and (best is None or n["start_line"] >= best["start_line"]):
            best = n
    return best or filenode.get(path)


truth = set()
for cf, cl, cn, tf, tl, tn, line in json.load(open(pairsp)):
    callee = at(tf, tl, tn)
    if callee is None:
        continue
    caller = filenode.get(cf) if cn == "<module>" else (at(cf, cl, cn) or inner(cf, line))
    if caller is None:
        continue
    truth.add((caller["qualname"], callee["qualname"]))
    if tn in ("__init__", "__new__") and callee.get("parent") in nnodes:
        truth.add((caller["qualname"], nnodes[callee["parent"]]["qualname"]))

cache = {}


def srcline(path, line):
    if path not in cache:
        try:
            cache[path] = open(os.path.join(src, path), errors="replace").read().split("\n")
        except OSError:
            cache[path] = []
    ls = cache[path]
    return ls[line - 1].strip() if 0 < line <= len(ls) else ""


new = []
for e in ng["edges"]:
    if e["kind"] != "calls":
        continue
    s, t = nnodes[e["source"]], nnodes[e["target"]]
    if t["kind"] == "package" or s["path"].startswith("test"):
        continue
    k = (s["qualname"], t["qualname"])
    if k not in old:
        new.append((k, s["path"], e.get("line", 0)))
new.sort()
ns = int(opts["-sample"])
if ns:
    random.Random(int(opts["-seed"])).shuffle(new)
    new = new[:ns]
ok = 0
for (sq, tq), path, line in new:
    tag = "OK " if (sq, tq) in truth else "?? "
    ok += tag == "OK "
    print(f"{tag}{sq} -> {tq}  @{path}:{line}  {srcline(path, line)}")
print(f"new calls edges listed {len(new)}, confirmed by the trace {ok}")
