#!/bin/sh
# Benchmarks the code graph engine against universal-ctags and a bare
# tree-sitter parse on the same corpus (default: /usr/lib/python3.11).
# Usage: scripts/bench-codegraph.sh [-runs N] [DIR]
set -eu
cd "$(dirname "$0")/.."
export CGO_CFLAGS="${CGO_CFLAGS:--O3 -march=native}" CGO_CXXFLAGS="${CGO_CXXFLAGS:--O3 -march=native}"
command -v ctags >/dev/null || { echo "bench-codegraph: universal-ctags is needed (apt-get install universal-ctags)" >&2; exit 1; }
bin="$(mktemp -d)/bench-codegraph"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./scripts/bench-codegraph
"$bin" "$@"
# The Go benchmarks of the package (IndexCold, BareParse, Reopen, UpdateOneFile*,
# Queries) run with `go test -run '^$' -bench . ./app/codegraph/` (make bench runs
# them for every package).
