#!/bin/sh
# GUI benchmarks: Graphviz layout of 50/150/500-node neighbourhood views with
# the in-process go-graphviz (WebAssembly) versus the native dot binary on the
# same DOT text in the same run, and the per-frame cost of a 500-node view.
# Usage: scripts/bench-gui.sh [benchtime, default 5x]
set -eu
cd "$(dirname "$0")/.."
export CGO_CFLAGS="${CGO_CFLAGS:--O3 -march=native}" CGO_CXXFLAGS="${CGO_CXXFLAGS:--O3 -march=native}"
BT="${1:-5x}"
OUT=$(mktemp)
go test -run '^$' -bench 'BenchmarkLayout|BenchmarkFrame500|BenchmarkGraphvizInit' -benchtime "$BT" ./graphview/ 2>&1 | grep -v '^[0-9/: ]*\(Fyne error\|  Cause\|  At\)' | tee "$OUT"
echo
echo "go-graphviz / native dot (time ratio, same run):"
awk '/^BenchmarkLayout\/nodes=/ {
	split($1, p, "/"); n=p[2] " " p[3]; e=p[4]; sub(/-[0-9]+$/, "", e);
	t[n "," e]=$3; ns[n]=1
} END {
	for (k in ns) if (t[k ",native-dot"] > 0)
		printf "  %-20s go-graphviz %7.1f ms  native %7.1f ms  ratio %.2f\n", k, t[k ",gographviz"]/1e6, t[k ",native-dot"]/1e6, t[k ",gographviz"]/t[k ",native-dot"]
}' "$OUT" | sort -t= -k2 -n
rm -f "$OUT"

# The real window (issue 12): first graph, stalls, node size and click → code
# on a copy of a real library, measured from outside through the automation
# file under Xvfb. Needs the built binary (make bench builds bin/codeloom),
# Xvfb, xdotool and ImageMagick; set BENCH_GUI_PROJECT to measure another tree
# and BENCH_GUI_BASE=COMMIT for before/after figures of the same run.
if [ -x bin/codeloom ] && command -v Xvfb >/dev/null && command -v xdotool >/dev/null; then
	P="${BENCH_GUI_PROJECT:-/usr/lib/python3.11}"
	if [ -d "$P" ] && [ -n "${BENCH_GUI_BASE:-}" ]; then
		# Before/after in one run: BENCH_GUI_BASE is the commit to compare with.
		echo
		echo "real window on $P, $BENCH_GUI_BASE (base) vs the work tree (new), alternating:"
		RUNS="${BENCH_GUI_RUNS:-2}" sh scripts/bench-gui-compare.sh "$BENCH_GUI_BASE" "$P"
	elif [ -d "$P" ]; then
		echo
		echo "real window on $P (warm graph cache; one JSON line per run):"
		python3 scripts/bench-gui-window.py bin/codeloom "$P" --runs 2
	fi
fi
