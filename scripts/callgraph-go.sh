#!/bin/sh
# Measures CodeLoom's Go call graph against golang.org/x/tools/cmd/callgraph
# (-algo=static and -algo=vta) on real modules from the module cache (fetched
# from the Go module proxy when missing). The oracle is installed pinned into
# a temporary GOBIN; nothing is left behind.
# Usage: scripts/callgraph-go.sh [--base REV] [-v] [MODULE@VERSION ...]
#   --base REV  also measure the code graph of commit REV (same comparator)
#   -v          list the edges each side misses (on stderr)
set -eu
cd "$(dirname "$0")/.."
export CGO_CFLAGS="${CGO_CFLAGS:--O3 -march=native}" CGO_CXXFLAGS="${CGO_CXXFLAGS:--O3 -march=native}"
base="" verbose=""
while [ $# -gt 0 ]; do
	case "$1" in
	--base) base="$2"; shift 2 ;;
	-v) verbose="-v"; shift ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- go.etcd.io/bbolt@v1.4.3 gopkg.in/yaml.v3@v3.0.1 github.com/yuin/goldmark@v1.7.8 github.com/sahilm/fuzzy@v0.1.1
repo="$(pwd)"
tmp="$(mktemp -d)"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
GOBIN="$tmp/bin" go install golang.org/x/tools/cmd/callgraph@v0.39.0
go build -o "$tmp/cmp" ./scripts/callgraph-go
if [ -n "$base" ]; then
	mkdir -p "$tmp/base"
	git archive "$base" | tar -x -C "$tmp/base"
	mkdir -p "$tmp/base/scripts/callgraph-go"
	cp scripts/callgraph-go/main.go "$tmp/base/scripts/callgraph-go/"
	(cd "$tmp/base" && go build -o "$tmp/cmp-base" ./scripts/callgraph-go)
fi
echo "| module | static edges | calls | precision vs static | precision vs static∪VTA | recall vs static | VTA edges | dispatches | calls∪dispatches recall vs VTA |"
echo "|---|---|---|---|---|---|---|---|---|"
for m in "$@"; do
	dir="$(cd "$tmp" && go mod download -json "$m" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	[ -n "$dir" ] || { echo "callgraph-go: cannot download $m" >&2; exit 1; }
	name="$(basename "${m%@*}")"
	work="$tmp/mods/$name"
	mkdir -p "$tmp/mods"
	cp -r "$dir" "$work"
	chmod -R u+w "$work"
	[ -f "$work/go.mod" ] || printf 'module %s\n\ngo 1.20\n' "${m%@*}" >"$work/go.mod"
	if [ -n "$base" ]; then
		(cd "$work" && nice "$tmp/cmp-base" -callgraph "$tmp/bin/callgraph" -dir . -name "$name (before, $base)")
		rm -rf "$work/.codeloom"
	fi
	(cd "$work" && nice "$tmp/cmp" -callgraph "$tmp/bin/callgraph" -dir . -name "$name" $verbose)
done
