#!/usr/bin/env python3
"""Compare `codeloom query DIR rdeps NAME` with the callers gopls finds.

For each NAME (a CodeLoom qualified name: strconv.Quote,
github.com/BurntSushi/toml.lexer.next), the declaration's position comes
from `codeloom query DIR neighbors NAME --json`; `gopls call_hierarchy` at
that position (run in GOPLS_DIR, the same tree: a pristine original or the
copy) lists the incoming calls. Each gopls caller (function, method or
function literal's enclosing function, by file and line) must be a node of
CodeLoom's rdeps; a caller is "direct" when CodeLoom also has an in-edge
(calls, dispatches or uses) from it. Misses are printed with the call line.

Usage: rdeps.py --codeloom BIN --gopls BIN --dir DIR [--gopls-dir DIR] [-v] NAME...
"""
import argparse
import json
import os
import re
import subprocess
import sys


def codeloom(binary, d, *args):
    out = subprocess.run([binary, "query", d, *args, "--json"], capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise SystemExit(f"codeloom query {' '.join(args)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


CALLER = re.compile(r"^caller\[\d+\]: ranges (.*) in (\S+) from/to (\S+) (\S+) in (\S+?):(\d+):\d+-\d+$")


def gopls_callers(binary, gdir, path, line, col):
    pos = f"{os.path.join(gdir, path)}:{line}:{col}"
    out = subprocess.run([binary, "call_hierarchy", pos], capture_output=True, text=True, timeout=1800, cwd=gdir)
    if out.returncode != 0:
        raise SystemExit(f"gopls call_hierarchy {pos}: {out.stderr.strip()}")
    callers = []
    for ln in out.stdout.splitlines():
        m = CALLER.match(ln.strip())
        if not m:
            continue
        ranges, callfile, kind, name, declfile, declline = m.groups()
        first = int(ranges.split(":")[0])
        callers.append({"call_file": os.path.relpath(callfile, gdir), "call_line": first,
                        "file": os.path.relpath(declfile, gdir), "line": int(declline), "kind": kind, "name": name})
    return callers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--codeloom", required=True)
    ap.add_argument("--gopls", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--gopls-dir")
    ap.add_argument("-v", action="store_true")
    ap.add_argument("names", nargs="+")
    a = ap.parse_args()
    gdir = os.path.abspath(a.gopls_dir or a.dir)
    print("| function | gopls callers | in rdeps | direct caller edge | outside its package (gopls / rdeps) | rdeps nodes |")
    print("|---|---|---|---|---|---|")
    total = [0, 0, 0]
    for name in a.names:
        nb = codeloom(a.codeloom, a.dir, "neighbors", name)
        t = nb["target"]
        src = open(os.path.join(a.dir, t["path"]), encoding="utf-8", errors="replace").read().splitlines()
        decl = src[t["start_line"] - 1]
        col = decl.find(" " + t["name"] + "(")
        if col < 0:
            col = decl.find(t["name"])
        else:
            col += 1
        callers = gopls_callers(a.gopls, gdir, t["path"], t["start_line"], col + 1)
        rd = codeloom(a.codeloom, a.dir, "rdeps", name)["nodes"]
        direct = {e["source"] for e in nb["in"] if e["kind"] in ("calls", "dispatches", "uses")}
        funcs = [n for n in rd if n["kind"] in ("function", "method", "file")]
        pkg = os.path.dirname(t["path"])

        def find(c):
            best = None
            for n in funcs:
                if n["path"] == c["file"] and (n["kind"] == "file" or n["start_line"] <= c["call_line"] <= n["end_line"]):
                    if best is None or best["kind"] == "file" or n["start_line"] >= best["start_line"]:
                        best = n
            return best

        seen, hit, dhit, outside, outside_hit, misses = set(), 0, 0, 0, 0, []
        for c in callers:
            key = (c["file"], c["line"], c["name"])
            if key in seen:
                continue
            seen.add(key)
            n = find(c)
            out_pkg = os.path.dirname(c["file"]) != pkg
            outside += out_pkg
            if n is not None:
                hit += 1
                outside_hit += out_pkg
                dhit += n["id"] in direct
            else:
                line = src_line(a.dir, c["call_file"], c["call_line"])
                misses.append(f"{c['call_file']}:{c['call_line']} ({c['kind']} {c['name']}): {line}")
        total[0] += len(seen)
        total[1] += hit
        total[2] += dhit
        print(f"| `{name}` | {len(seen)} | {hit} | {dhit} | {outside} / {outside_hit} | {len(rd)} |")
        if a.v or misses:
            for m in misses:
                print(f"  miss: {m}", file=sys.stderr)
    print(f"| total | {total[0]} | {total[1]} | {total[2]} | | |")


def src_line(d, path, line):
    try:
        with open(os.path.join(d, path), encoding="utf-8", errors="replace") as f:
            for i, ln in enumerate(f, 1):
                if i == line:
                    return ln.strip()[:120]
    except OSError:
        pass
    return "?"


if __name__ == "__main__":
    main()
