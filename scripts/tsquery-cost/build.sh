#!/bin/sh
# Per-pattern cost of a tree-sitter query (Python grammar), outside the Go
# build: compiles go-tree-sitter's C sources from the module cache into
#   qbench  time a query over parsed files with subsets of its patterns
#           (ts_query_disable_pattern): all | minus (all, and all minus each
#           pattern) | only (each alone) | dump (every match, for diffs)
#   qcount  per-pattern work counters (instrument.py): deterministic, where
#           CPU timings are too noisy under load
# Usage: scripts/tsquery-cost/build.sh OUTDIR, then e.g.
#   sed -n '/^const pythonQuery = `/,/^`/p' app/codegraph/lang_python.go | sed '1d;$d' > q.scm
#   find /usr/lib/python3.11 -name '*.py' > files
#   OUTDIR/qbench q.scm 5 all < files;  OUTDIR/qcount q.scm < files
# See BENCHMARKS.md (tscost) for what it measured.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out/ts/python" "$out/obj"
cd "$here/../.."
m=$(go list -m -f '{{.Dir}}' github.com/smacker/go-tree-sitter)
cp "$m"/*.c "$m"/*.h "$out/ts/"
cp "$m"/python/*.c "$m"/python/*.h "$out/ts/python/"
chmod -R u+w "$out/ts"
cp "$out/ts/query.c" "$out/ts/query_instr.c"
python3 "$here/instrument.py" "$out/ts/query_instr.c"
cd "$out"
F="-O3 -march=native -g -Its -Its/python"
for f in alloc get_changed_ranges language lexer node parser query stack subtree tree tree_cursor wasm_store; do
	gcc $F -w -c ts/$f.c -o obj/$f.o
done
gcc $F -w -c ts/python/parser.c -o obj/pyparser.o
gcc $F -w -c ts/python/scanner.c -o obj/pyscanner.o
gcc $F -w -c ts/query_instr.c -o query_instr.o
gcc $F "$here/qbench.c" obj/*.o -o qbench
gcc $F "$here/qcount.c" query_instr.o $(ls obj/*.o | grep -v '/query.o') -o qcount
