#!/bin/sh
# TS/JS call-graph oracle: the TypeScript checker's resolved signature at
# each call (scripts/callgraph-js/oracle.js) against CodeLoom's graph of the
# same sources (scripts/callgraph-py/dump), scored by the shared
# scripts/callgraph-score/score.py (-oracle checker).
# Needs node and npm (installs typescript and packs the package into a temp dir).
# Usage: scripts/callgraph-js.sh [-base COMMIT] [-misses N] [-sample N] [PKG@VERSION SUBDIR]
#   default package: rxjs@7.8.1, sources under package/src
set -eu
cd "$(dirname "$0")/.."
repo=$(pwd)
base="" misses=0 sample=0
while [ $# -gt 0 ]; do
	case "$1" in
	-base) base=$2; shift 2 ;;
	-misses) misses=$2; shift 2 ;;
	-sample) sample=$2; shift 2 ;;
	*) break ;;
	esac
done
pkg=${1:-rxjs@7.8.1}
sub=${2:-package/src}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$base" ]; then
	mkdir "$tmp/src"
	git archive "$base" | tar -x -C "$tmp/src"
	mkdir -p "$tmp/src/scripts/callgraph-py"
	cp -r scripts/callgraph-py/dump "$tmp/src/scripts/callgraph-py/"
	(cd "$tmp/src" && go build -o "$tmp/dump" ./scripts/callgraph-py/dump)
else
	go build -o "$tmp/dump" ./scripts/callgraph-py/dump
fi
(cd "$tmp" && npm install --silent --no-audit --no-fund typescript@5.4.5 >/dev/null 2>&1 && npm pack --silent "$pkg" >/dev/null 2>&1)
mkdir "$tmp/pkg"
tar -xzf "$tmp"/*.tgz -C "$tmp/pkg"
proj="$tmp/pkg/$sub"
NODE_PATH="$tmp/node_modules" node scripts/callgraph-js/oracle.js "$proj" "$tmp/pairs.json"
"$tmp/dump" "$proj" > "$tmp/graph.json"
echo "== $pkg ($sub)"
python3 scripts/callgraph-score/score.py -oracle checker "$tmp/graph.json" "$tmp/pairs.json" "$proj" -misses "$misses" -sample "$sample"
