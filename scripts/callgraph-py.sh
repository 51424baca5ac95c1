#!/bin/sh
# Python call-graph oracle: runs stdlib test suites under sys.setprofile
# (scripts/callgraph-py/trace.py), indexes the same sources with CodeLoom
# (scripts/callgraph-py/dump) and prints recall plus a precision sample
# (the shared scripts/callgraph-score/score.py, -oracle trace).
# Usage: scripts/callgraph-py.sh [-base COMMIT] [-misses N] [-sample N] [-list FILE] [-keep DIR]
#   -base COMMIT  measure the engine as of COMMIT (built from `git archive`)
#   -keep DIR     keep each package's sources, trace and graph in DIR (for
#                 scripts/callgraph-py/newedges.py)
#   -list FILE    other packages, one "name|sources|test modules" a line
#                 (scripts/callgraph-py/heldout.list: projects the rules were
#                 not written on)
set -eu
cd "$(dirname "$0")/.."
repo=$(pwd)
base="" misses=0 sample=0 list="" keep=""
while [ $# -gt 0 ]; do
	case "$1" in
	-base) base=$2; shift 2 ;;
	-misses) misses=$2; shift 2 ;;
	-sample) sample=$2; shift 2 ;;
	-list) list=$(cat "$2"); shift 2 ;;
	-keep) keep=$2; shift 2 ;;
	*) echo "usage: $0 [-base COMMIT] [-misses N] [-sample N] [-list FILE] [-keep DIR]" >&2; exit 2 ;;
	esac
done
PY=${PY:-$(ls -d /root/.pyenv/versions/3.11.*/bin/python3 2>/dev/null | head -1)}
LIB=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$base" ]; then
	mkdir "$tmp/src"
	git archive "$base" | tar -x -C "$tmp/src"
	mkdir -p "$tmp/src/scripts/callgraph-py"
	rm -rf "$tmp/src/scripts/callgraph-py/dump"
	cp -r scripts/callgraph-py/dump "$tmp/src/scripts/callgraph-py/"
	(cd "$tmp/src" && go build -o "$tmp/dump" ./scripts/callgraph-py/dump)
else
	go build -o "$tmp/dump" ./scripts/callgraph-py/dump
fi
# name | sources (relative to the stdlib) | test modules
while IFS='|' read -r name srcs tests; do
	[ -n "$name" ] || continue
	proj="$tmp/proj-$name"
	mkdir -p "$proj"
	abs=""
	for s in $(echo "$srcs" | tr ',' ' '); do
		cp -r "$LIB/$s" "$proj/"
		abs="$abs${abs:+,}$LIB/$s"
	done
	find "$proj" -name __pycache__ -prune -exec rm -rf {} +
	(cd "$tmp" && "$PY" "$repo/scripts/callgraph-py/trace.py" "$abs" "$tmp/$name.pairs.json" $tests 2>/dev/null)
	"$tmp/dump" "$proj" > "$tmp/$name.graph.json"
	echo "== $name ($srcs; $tests)"
	"$PY" scripts/callgraph-score/score.py -oracle trace "$tmp/$name.graph.json" "$tmp/$name.pairs.json" "$proj" -misses "$misses" -sample "$sample"
	if [ -n "$keep" ]; then
		mkdir -p "$keep"
		rm -rf "${keep:?}/proj-$name"
		cp -r "$proj" "$tmp/$name.pairs.json" "$tmp/$name.graph.json" "$keep/"
	fi
done <<LIST
${list:-json|json|test.test_json
email|email|test.test_email
argparse|argparse.py|test.test_argparse
configparser|configparser.py|test.test_configparser}
LIST
