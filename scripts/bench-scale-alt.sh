#!/usr/bin/env bash
# bench-scale-alt.sh — warm CLI queries of two binaries alternated in one
# run (issue 11): before, after, before, after … for each query, so both
# see the same machine load. Each binary answers from its own indexed copy
# of the corpus (their persisted-graph formats may differ).
#
# usage: BEFORE=old-binary [BIN=bin/codeloom] scripts/bench-scale-alt.sh [CORPUS_DIR]
#   CORPUS_DIR  default /usr/lib/python3.11; copied twice (files > 1 MiB
#               removed), cold-indexed once by each binary (measured)
#   A=dir B=dir reuse copies already indexed by BEFORE (A) and BIN (B);
#               no copy, no cold index
#   ROUNDS=N    alternations per query (default 3); the last row, warm
#               `index`, is the full load the app does on open
#   NODE=...    node for rdeps/deps/neighbors (default json/decoder.py or
#               fmt/print.go); SEARCH=... search text (default parse)
# Prints one row per run: round, binary, query, wall s, CPU s (user+sys),
# peak RSS MB, and the 1-minute load average when it started.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${1:-/usr/lib/python3.11}
BIN=${BIN:-bin/codeloom}
SEARCH=${SEARCH:-parse}
ROUNDS=${ROUNDS:-3}
# make bench runs every scripts/bench-*.sh without arguments: with nothing
# to compare, say so and leave the run to bench-scale.sh.
[ -n "${BEFORE:-}" ] || { echo "bench-scale-alt: skipped (set BEFORE=old-binary to compare two binaries)"; exit 0; }
[ -x /usr/bin/time ] || { echo "bench-scale-alt: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/bench-alt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

measure() { # LABEL CMD... → prints a row
	local label=$1 load
	shift
	load=$(cut -d' ' -f1 /proc/loadavg)
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" nice -n 10 "$@" >"$tmp/out" 2>"$tmp/err" || {
		echo "bench-scale-alt: $label failed:" >&2
		cat "$tmp/err" >&2
		return 1
	}
	read -r wall user sys rss <"$tmp/time"
	printf '%-34s %7s %7s %7s %6s\n' "$label" "$wall" \
		"$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.2f", u+s}')" "$((rss / 1024))" "$load"
}

printf '%-34s %7s %7s %7s %6s\n' "what" "wall s" "CPU s" "RSS MB" "load"
if [ -z "${A:-}" ]; then
	A=$tmp/a B=$tmp/b
	cp -r "$CORPUS/." "$A"
	find "$A" -type f -size +1M -delete
	rm -rf "$A/.codeloom"
	cp -a "$A/." "$B"
	measure "before cold index" "$BEFORE" index "$A"
	measure "after  cold index" "$BIN" index "$B"
fi
if [ -z "${NODE:-}" ]; then
	for c in json/decoder.py fmt/print.go; do
		[ -f "$A/$c" ] && NODE=$c && break
	done
fi
echo "corpus $CORPUS; node $NODE; search $SEARCH; persisted: before $(du -k "$A/.codeloom/cache/graph.snap" | cut -f1) KB, after $(du -k "$B/.codeloom/cache/graph.snap" | cut -f1) KB"
for q in "search $SEARCH" "rdeps $NODE" "neighbors $NODE" "rank" "index"; do
	for r in $(seq "$ROUNDS"); do
		# shellcheck disable=SC2086 # q is a query and its argument
		if [ "$q" = index ]; then # the full load (what the app does on open)
			measure "$r before warm index" "$BEFORE" index "$A"
			measure "$r after  warm index" "$BIN" index "$B"
			continue
		fi
		measure "$r before query $q" "$BEFORE" query "$A" $q
		# shellcheck disable=SC2086
		measure "$r after  query $q" "$BIN" query "$B" $q
	done
done
# The answers must be the same.
for q in "search $SEARCH" "rdeps $NODE" "neighbors $NODE" "rank"; do
	# shellcheck disable=SC2086
	"$BEFORE" query "$A" $q >"$tmp/o1" 2>/dev/null
	# shellcheck disable=SC2086
	"$BIN" query "$B" $q >"$tmp/o2" 2>/dev/null
	if cmp -s "$tmp/o1" "$tmp/o2"; then echo "same answer: $q ($(wc -l <"$tmp/o1") lines)"; else echo "DIFFERENT answer: $q"; fi
done
