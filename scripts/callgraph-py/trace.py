"""Dynamic call graph of a package, from running tests under sys.setprofile.

usage: trace.py SRC[,SRC...] OUT.json TESTMODULE...

Records (caller code, callee code) for every Python-level call whose caller
and callee are both defined in the SRC packages (folders) or modules (files),
as [caller_file, caller_firstline, caller_name, callee_file,
callee_firstline, callee_name, call_line], paths relative to SRC's folder
("json/decoder.py", "argparse.py").
"""
import json
import os
import sys
import threading
import unittest

srcs = [os.path.realpath(p) for p in sys.argv[1].split(",")]
out = sys.argv[2]
mods = sys.argv[3:]
pairs = set()
inpkg = {}


def rel(fn):
    r = inpkg.get(fn)
    if r is None:
        real = os.path.realpath(fn)
        r = ""
        for p in srcs:
            if real == p or real.startswith(p + os.sep):
                r = os.path.relpath(real, os.path.dirname(p))
        inpkg[fn] = r
    return r


def prof(frame, event, arg):
    if event != "call":
        return
    co = frame.f_code
    callee = rel(co.co_filename)
    if not callee:
        return
    back = frame.f_back
    if back is None:
        return
    cco = back.f_code
    caller = rel(cco.co_filename)
    if not caller:
        return
    pairs.add((caller, cco.co_firstlineno, cco.co_name, callee, co.co_firstlineno, co.co_name, back.f_lineno))


suite = unittest.defaultTestLoader.loadTestsFromNames(mods)
threading.setprofile(prof)
sys.setprofile(prof)
try:
    unittest.TextTestRunner(stream=open(os.devnull, "w"), verbosity=0).run(suite)
finally:
    sys.setprofile(None)
    threading.setprofile(None)
with open(out, "w") as f:
    json.dump(sorted(pairs), f)
print(f"trace: {len(pairs)} call pairs inside {srcs}", file=sys.stderr)
