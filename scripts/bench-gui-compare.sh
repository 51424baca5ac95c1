#!/bin/sh
# Before/after figures of the real window (issue 12) in one run: builds the
# app at BASE (a commit) and at the work tree, then measures both on each
# PROJECT, alternating, with scripts/bench-gui-window.py (one JSON line per
# run, "binary" naming which). The projects are copied once to a scratch
# folder and their graph cache warmed by the first measured binary.
# Usage: scripts/bench-gui-compare.sh BASE PROJECT... (env RUNS, default 2;
# DISPLAY_NUM to use a running X server, e.g. :98)
set -eu
cd "$(dirname "$0")/.."
# make bench runs every scripts/bench-*.sh without arguments: skip, do not fail.
[ $# -ge 2 ] || { echo "bench-gui-compare: skipped (usage: scripts/bench-gui-compare.sh BASE PROJECT...)"; exit 0; }
BASE="$1"; shift
RUNS="${RUNS:-2}"
TMP=$(mktemp -d /tmp/codeloom-bench-cmp.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/base"
git archive "$BASE" | tar -x -C "$TMP/base"
(cd "$TMP/base" && go build -o "$TMP/codeloom-base" .)
go build -o "$TMP/codeloom-new" .
DISP=""
[ -n "${DISPLAY_NUM:-}" ] && DISP="--display $DISPLAY_NUM"
for P in "$@"; do
	name=$(basename "$P")
	cp -r "$P" "$TMP/$name"
	first=1
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		for b in base new; do
			warm="--no-warm"
			[ "$first" = 1 ] && warm="" && first=0
			# shellcheck disable=SC2086
			python3 scripts/bench-gui-window.py "$TMP/codeloom-$b" "$TMP/$name" --no-copy $warm $DISP --runs 1 |
				sed "s/^{/{\"binary\": \"$b\", /"
		done
		i=$((i + 1))
	done
	rm -rf "${TMP:?}/$name"
done
