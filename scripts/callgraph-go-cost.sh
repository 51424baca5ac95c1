#!/bin/sh
# Cold-index CPU of two CodeLoom builds on the same corpora, interleaved
# (A B A B …) so that both see the same machine load: `codeloom index DIR
# --no-cache` on a temporary copy of each corpus under /usr/bin/time.
# Prints one line per run (user s, sys s, max RSS KiB) and the ratio of the
# summed user+sys CPU.
# Usage: scripts/callgraph-go-cost.sh BASE_REV [ROUNDS] [CORPUS ...]
#   default corpora: /usr/lib/python3.11 /usr/local/go/src; ROUNDS 3
set -eu
cd "$(dirname "$0")/.."
base=$1
rounds=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
[ $# -gt 0 ] || set -- /usr/lib/python3.11 /usr/local/go/src
export CGO_CFLAGS="${CGO_CFLAGS:--O3 -march=native}" CGO_CXXFLAGS="${CGO_CXXFLAGS:--O3 -march=native}"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$tmp/base"
git archive "$base" | tar -x -C "$tmp/base"
(cd "$tmp/base" && nice go build -o "$tmp/codeloom-base" .)
nice go build -o "$tmp/codeloom-new" .
for corpus in "$@"; do
	work="$tmp/corpus"
	cp -r "$corpus" "$work"
	a=0 b=0
	i=0
	while [ $i -lt "$rounds" ]; do
		for which in base new; do
			rm -rf "$work/.codeloom"
			/usr/bin/time -f '%U %S %M' -o "$tmp/t" nice "$tmp/codeloom-$which" index "$work" --no-cache >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
			read -r u s m <"$tmp/t"
			echo "$corpus $which round $((i + 1)): user $u s, sys $s s, max RSS $((m / 1024)) MiB"
			c=$(echo "$u + $s" | bc)
			if [ $which = base ]; then a=$(echo "$a + $c" | bc); else b=$(echo "$b + $c" | bc); fi
		done
		i=$((i + 1))
	done
	echo "$corpus: base $a s, new $b s CPU in total, new/base $(echo "scale=3; $b / $a" | bc)"
	chmod -R u+w "$work"
	rm -rf "$work"
done
