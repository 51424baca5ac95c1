#!/usr/bin/env bash
# bench-scale.sh — cold index vs warm CLI queries from the persisted graph
# (issue 11). Copies the corpus to a temporary folder (files over 1 MiB
# removed, as the indexer skips them anyway), then for each binary runs,
# one after another, under /usr/bin/time -v:
#   cold `index` (no .codeloom), warm `index`, warm `query search|rdeps|
#   neighbors|rank`, and `query rank` without the persisted ranks' help
#   (`--no-cache` is a cold index, so that is not measured).
# Prints wall, CPU (user+sys), peak RSS and each warm figure as a % of the
# cold index's CPU.
#
# usage: scripts/bench-scale.sh [CORPUS_DIR]
#   CORPUS_DIR   default /usr/lib/python3.11 (0.3 M lines, fast); the issue's
#                corpora: /root/.pyenv/versions/3.11.*/lib/python3.11 and
#                /usr/local/go/src
#   BIN=path     the binary to measure (default bin/codeloom)
#   BEFORE=path  also measure this binary first (e.g. one built from main)
#   NODE=...     node for rdeps/neighbors (default: json/decoder.py or
#                fmt/print.go when present, else the first file found)
#   SEARCH=...   search text (default "parse")
#   KEEP=1       keep the copy (indexed by BIN) for further measurements
#   BEFORE_SHORT=1  only cold index, warm index and search for BEFORE (each
#                warm command of code without a persisted graph is a re-open)
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${1:-/usr/lib/python3.11}
BIN=${BIN:-bin/codeloom}
SEARCH=${SEARCH:-parse}
if [ ! -d "$CORPUS" ]; then
	echo "bench-scale: corpus $CORPUS not found; using assets/sample" >&2
	CORPUS=assets/sample
fi
if [ ! -x /usr/bin/time ]; then
	echo "bench-scale: /usr/bin/time missing (apt-get install time)" >&2
	exit 1
fi
[ -x "$BIN" ] || { echo "bench-scale: $BIN not built (make build)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/bench-scale.XXXXXX)
if [ -z "${KEEP:-}" ]; then
	trap 'rm -rf "$tmp"' EXIT
fi
cp -r "$CORPUS/." "$tmp/src"
find "$tmp/src" -type f -size +1M -delete
rm -rf "$tmp/src/.codeloom"
if [ -z "${NODE:-}" ]; then
	for c in json/decoder.py fmt/print.go; do
		[ -f "$tmp/src/$c" ] && NODE=$c && break
	done
	if [ -z "${NODE:-}" ]; then
		NODE=$(cd "$tmp/src" && find . -type f \( -name '*.py' -o -name '*.go' -o -name '*.js' \) | head -1 | sed 's|^\./||')
	fi
fi
lines=$(find "$tmp/src" -type f \( -name '*.py' -o -name '*.go' -o -name '*.js' -o -name '*.ts' \) -print0 | xargs -0 cat | wc -l)
echo "corpus $CORPUS: $lines lines (copy in $tmp/src); node $NODE; load $(cut -d' ' -f1-3 /proc/loadavg)"

# measure LABEL CMD...: prints "label wall cpu rss" and sets CPU (seconds).
measure() {
	local label=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" nice -n 10 "$@" >"$tmp/out" 2>"$tmp/err" || {
		echo "bench-scale: $label failed:" >&2
		cat "$tmp/err" >&2
		return 1
	}
	read -r wall user sys rss <"$tmp/time"
	CPU=$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.2f", u+s}')
	RSS=$((rss / 1024))
	WALL=$wall
}

run_binary() {
	local bin=$1 name=$2
	rm -rf "$tmp/src/.codeloom"
	measure cold "$bin" index "$tmp/src"
	local cold=$CPU
	printf '%-8s %-28s %8s %8s %8s %8s\n' "$name" "what" "wall s" "CPU s" "RSS MB" "% cold"
	printf '%-8s %-28s %8s %8s %8s %8s\n' "$name" "cold index" "$WALL" "$CPU" "$RSS" "100"
	row() {
		measure "$1" "${@:2}"
		printf '%-8s %-28s %8s %8s %8s %8s\n' "$name" "$1" "$WALL" "$CPU" "$RSS" \
			"$(awk -v c="$CPU" -v t="$cold" 'BEGIN{printf "%.1f", 100*c/t}')"
	}
	row "warm index" "$bin" index "$tmp/src"
	row "warm query search" "$bin" query "$tmp/src" search "$SEARCH"
	if [ "$name" = before ] && [ -n "${BEFORE_SHORT:-}" ]; then
		return # every warm command of the old code costs about a re-open
	fi
	row "warm query rdeps" "$bin" query "$tmp/src" rdeps "$NODE"
	row "warm query neighbors" "$bin" query "$tmp/src" neighbors "$NODE"
	row "warm query rank" "$bin" query "$tmp/src" rank
}

if [ -n "${BEFORE:-}" ]; then
	run_binary "$BEFORE" before
fi
run_binary "$BIN" after
if [ -f "$tmp/src/.codeloom/cache/graph.snap" ]; then
	echo "persisted graph: $(du -k "$tmp/src/.codeloom/cache/graph.snap" | cut -f1) KB; store: $(du -k "$tmp/src/.codeloom/codeloom.db" | cut -f1) KB"
fi
