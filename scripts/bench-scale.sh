#!/usr/bin/env bash
# bench-scale.sh — cold index vs warm CLI queries from the persisted graph
# (issue 11). For each corpus: copies it to a temporary folder (files over
# 1 MiB removed, as the indexer skips them anyway), then for each binary
# runs, one after another, under /usr/bin/time:
#   process start (`version`), cold `index` (no .codeloom), warm `index`,
#   warm `query search|rdeps|neighbors|rank` (ROUNDS runs each: median CPU
#   and wall, largest RSS), and the same warm queries on a git work tree
#   copy of the corpus (GIT=1, the default: git's file set takes another
#   walk).
# Prints wall, CPU (user+sys), peak RSS, each warm figure as a % of the
# cold index's CPU, and each of issue 11's targets as met / NOT met.
#
# usage: scripts/bench-scale.sh [CORPUS_DIR...]
#   CORPUS_DIR   default: the issue's corpora that exist here
#                (/root/.pyenv/versions/3.11.*/lib/python3.11, /usr/local/go/src),
#                else /usr/lib/python3.11 (0.3 M lines, fast)
#   BIN=path     the binary to measure (default bin/codeloom)
#   BEFORE=path  also measure this binary first (e.g. one built from main)
#   NODE=...     node for rdeps/neighbors (default: json/decoder.py or
#                fmt/print.go when present, else the first file found)
#   SEARCH=...   search text (default "parse")
#   ROUNDS=N     runs of each warm query (default 3)
#   GIT=0        skip the git work tree copy
#   KEEP=1       keep the copies (indexed by BIN) for further measurements
#   BEFORE_SHORT=1  only cold index, warm index and search for BEFORE (each
#                warm command of code without a persisted graph is a re-open)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/codeloom}
SEARCH=${SEARCH:-parse}
ROUNDS=${ROUNDS:-3}
GIT=${GIT:-1}
USER_NODE=${NODE:-}
corpora=("$@")
if [ ${#corpora[@]} -eq 0 ]; then
	for c in /root/.pyenv/versions/3.11.*/lib/python3.11 /usr/local/go/src; do
		[ -d "$c" ] && corpora+=("$c")
	done
	[ ${#corpora[@]} -gt 0 ] || corpora=(/usr/lib/python3.11)
fi
if [ ! -x /usr/bin/time ]; then
	echo "bench-scale: /usr/bin/time missing (apt-get install time)" >&2
	exit 1
fi
[ -x "$BIN" ] || { echo "bench-scale: $BIN not built (make build)" >&2; exit 1; }
command -v git >/dev/null || GIT=0
tmp=$(mktemp -d /tmp/bench-scale.XXXXXX)
if [ -z "${KEEP:-}" ]; then
	trap 'rm -rf "$tmp"' EXIT
else
	echo "copies kept in $tmp"
fi

# measure LABEL CMD...: sets WALL, CPU (seconds) and RSS (MB) of one run.
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

# measure_n LABEL CMD...: ROUNDS runs; sets WALL and CPU (medians), RSS (max).
measure_n() {
	local label=$1 walls=() cpus=() maxrss=0
	shift
	for _ in $(seq "$ROUNDS"); do
		measure "$label" "$@"
		walls+=("$WALL")
		cpus+=("$CPU")
		if [ "$RSS" -gt "$maxrss" ]; then maxrss=$RSS; fi
	done
	WALL=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
	CPU=$(printf '%s\n' "${cpus[@]}" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
	RSS=$maxrss
}

# verdict WHAT VALUE LIMIT: "met" or "NOT met".
verdict() {
	if awk -v v="$2" -v l="$3" 'BEGIN{exit !(v <= l)}'; then echo "$1: met ($2 <= $3)"; else echo "$1: NOT met ($2 > $3)"; fi
}

run_binary() {
	local bin=$1 name=$2 src=$3 gsrc=$4
	rm -rf "$src/.codeloom"
	measure_n start "$bin" version
	printf '%-8s %-32s %8s %8s %8s %8s\n' "$name" "what" "wall s" "CPU s" "RSS MB" "% cold"
	printf '%-8s %-32s %8s %8s %8s %8s\n' "$name" "process start (version)" "$WALL" "$CPU" "$RSS" "-"
	measure cold "$bin" index "$src"
	local cold=$CPU cold_rss=$RSS
	printf '%-8s %-32s %8s %8s %8s %8s\n' "$name" "cold index" "$WALL" "$CPU" "$RSS" "100"
	local checks=()
	checks+=("$(verdict "$name cold index peak RSS <= 700 MB" "$cold_rss" 700)")
	row() { # LABEL LIMIT% CMD...
		local label=$1 limit=$2
		shift 2
		measure_n "$label" "$@"
		local pct
		pct=$(awk -v c="$CPU" -v t="$cold" 'BEGIN{printf "%.1f", 100*c/t}')
		printf '%-8s %-32s %8s %8s %8s %8s\n' "$name" "$label" "$WALL" "$CPU" "$RSS" "$pct"
		if [ "$limit" != - ]; then
			checks+=("$(verdict "$name $label CPU <= $limit % of cold" "$pct" "$limit")")
			checks+=("$(verdict "$name $label peak RSS <= 400 MB" "$RSS" 400)")
		fi
	}
	row "warm index" - "$bin" index "$src"
	row "warm query search" 5 "$bin" query "$src" search "$SEARCH"
	if [ "$name" = before ] && [ -n "${BEFORE_SHORT:-}" ]; then
		return # every warm command of the old code costs about a re-open
	fi
	row "warm query rdeps" 5 "$bin" query "$src" rdeps "$NODE"
	row "warm query neighbors" 5 "$bin" query "$src" neighbors "$NODE"
	row "warm query rank" 10 "$bin" query "$src" rank
	if [ -n "$gsrc" ]; then
		# The git copy is indexed once (not timed: the same build as above).
		rm -rf "$gsrc/.codeloom"
		nice -n 10 "$bin" index "$gsrc" >/dev/null 2>&1
		row "git: warm query search" 5 "$bin" query "$gsrc" search "$SEARCH"
		row "git: warm query rdeps" 5 "$bin" query "$gsrc" rdeps "$NODE"
		row "git: warm query neighbors" 5 "$bin" query "$gsrc" neighbors "$NODE"
		row "git: warm query rank" 10 "$bin" query "$gsrc" rank
	fi
	printf '%s\n' "${checks[@]}"
}

for CORPUS in "${corpora[@]}"; do
	if [ ! -d "$CORPUS" ]; then
		echo "bench-scale: corpus $CORPUS not found; using assets/sample" >&2
		CORPUS=assets/sample
	fi
	name=$(echo "$CORPUS" | tr -c 'A-Za-z0-9\n' _)
	src=$tmp/$name/src
	mkdir -p "$tmp/$name"
	cp -r "$CORPUS/." "$src"
	find "$src" -type f -size +1M -delete
	rm -rf "$src/.codeloom"
	gsrc=
	if [ "$GIT" != 0 ]; then
		gsrc=$tmp/$name/git
		cp -a "$src/." "$gsrc"
		(cd "$gsrc" && git init -q && git add -A && git -c user.name=bench -c user.email=bench@localhost commit -qm corpus) >/dev/null
	fi
	node=$USER_NODE
	if [ -z "$node" ]; then
		for c in json/decoder.py fmt/print.go; do
			[ -f "$src/$c" ] && node=$c && break
		done
		if [ -z "$node" ]; then
			node=$(cd "$src" && find . -type f \( -name '*.py' -o -name '*.go' -o -name '*.js' \) | head -1 | sed 's|^\./||')
		fi
	fi
	NODE=$node
	lines=$(find "$src" -type f \( -name '*.py' -o -name '*.go' -o -name '*.js' -o -name '*.ts' \) -print0 | xargs -0 cat | wc -l)
	echo "corpus $CORPUS: $lines lines (copy in $src); node $NODE; $ROUNDS runs per warm query; load $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ -n "${BEFORE:-}" ]; then
		run_binary "$BEFORE" before "$src" "$gsrc"
	fi
	run_binary "$BIN" after "$src" "$gsrc"
	if [ -f "$src/.codeloom/cache/graph.snap" ]; then
		echo "persisted graph: $(du -k "$src/.codeloom/cache/graph.snap" | cut -f1) KB; store: $(du -k "$src/.codeloom/codeloom.db" | cut -f1) KB"
	fi
	[ -n "${KEEP:-}" ] || rm -rf "${tmp:?}/$name"
done
