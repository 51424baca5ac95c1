#!/bin/sh
# End-to-end test of the desktop app: the real binary in a real window under
# Xvfb, driven with xdotool (see ui/e2e_test.go). Usage: scripts/e2e-gui.sh [BIN]
# Screenshots and the app's log go to $CODELOOM_E2E_OUT (default build/e2e).
set -eu
cd "$(dirname "$0")/.."
export CGO_CFLAGS="${CGO_CFLAGS:--O3 -march=native}" CGO_CXXFLAGS="${CGO_CXXFLAGS:--O3 -march=native}"
BIN="${1:-}"
if [ -z "$BIN" ]; then
	BIN=build/codeloom-e2e
	mkdir -p build
	go build -o "$BIN" .
fi
for tool in Xvfb xdotool import; do
	command -v "$tool" >/dev/null || { echo "e2e-gui: $tool is missing (make deps installs xvfb, xdotool, imagemagick)"; exit 1; }
done
export CODELOOM_E2E_BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
export CODELOOM_E2E_OUT="${CODELOOM_E2E_OUT:-$(pwd)/build/e2e}"
mkdir -p "$CODELOOM_E2E_OUT"
go test -count=1 -run '^TestEndToEnd' -v ./ui/
echo "e2e-gui: screenshots in $CODELOOM_E2E_OUT"
