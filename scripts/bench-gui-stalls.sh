#!/bin/sh
# Count the UI stalls the app's watchdog logs (every block over 100 ms, with
# the UI goroutine's innermost frames) while a project is open and one node
# is clicked, and how many of them are in CodeLoom's code rather than in
# Fyne/GL. Usage: scripts/bench-gui-stalls.sh BIN PROJECT NODE_LABEL [SECONDS]
# PROJECT must be a scratch copy (the app writes .codeloom/ into it), ideally
# warm (`codeloom index PROJECT` first).
set -eu
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); PROJECT=$2; LABEL=$3; WATCH=${4:-20}
for tool in Xvfb xdotool python3; do
	command -v "$tool" >/dev/null || { echo "bench-gui-stalls: $tool is missing"; exit 1; }
done
TMP=$(mktemp -d)
trap 'kill $APP 2>/dev/null || true; kill $XVFB 2>/dev/null || true; rm -rf "$TMP"' EXIT
exec 3>"$TMP/display"
Xvfb -displayfd 3 -screen 0 1400x900x24 -nolisten tcp >/dev/null 2>&1 &
XVFB=$!
for _ in $(seq 1 50); do [ -s "$TMP/display" ] && break; sleep 0.2; done
DISPLAY=:$(head -1 "$TMP/display"); export DISPLAY
STATE=$TMP/state.json
FYNE_SCALE=1 LANG=C.UTF-8 HOME=$TMP XDG_CONFIG_HOME=$TMP/config XDG_DATA_HOME=$TMP/data CODELOOM_AUTOMATION=$STATE \
	"$BIN" open "$PROJECT" >"$TMP/app.log" 2>&1 &
APP=$!
python3 - "$STATE" "$LABEL" <<'PY'
import json, subprocess, sys, time
state, label = sys.argv[1], sys.argv[2]
deadline = time.time() + 180
while time.time() < deadline:
    try:
        s = json.load(open(state))
        if s["node_count"] > 0 and not s["indexing"]:
            break
    except (OSError, ValueError):
        pass
    time.sleep(0.5)
else:
    sys.exit("bench-gui-stalls: no graph within 180 s")
time.sleep(3)
n = [n for n in s["nodes"] if n["label"] == label]
if not n:
    sys.exit("bench-gui-stalls: no drawn node labelled %r" % label)
subprocess.run(["xdotool", "mousemove", str(int(n[0]["x"])), str(int(n[0]["y"])), "click", "1"], check=True)
PY
sleep "$WATCH"
all=$(grep -c "stalled" "$TMP/app.log" || true)
ours=$(grep "stalled" "$TMP/app.log" | grep -vc 'in="[^"]*\(glfw\|go-gl\|fyne\.io\|rasterx\|encoding/xml\|oksvg\)' || true)
echo "stalls over 100 ms: $all, in CodeLoom's code: $ours"
grep "stalled" "$TMP/app.log" | sed -E 's/.*for=([0-9.]+m?s) in="([^"]*)".*/  \1  \2/' | cut -c1-200
