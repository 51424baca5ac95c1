#!/bin/bash
# finish.sh TREE: completes the tree `fyne package` wrote (unpacked in TREE):
# the AppStream metainfo beside the .desktop file, and the headless binary
# (bin/codeloom-cli, built here with the package's CGO flags) beside the app;
# the package's own Makefile installs and uninstalls both.
set -euo pipefail
tree=$1
GO=${GO:-go}
share=$(dirname "$(find "$tree" -path '*/share/applications' -type d | head -1)")
bin=$(find "$tree" -path '*/bin/codeloom' -type f | head -1)
mk=$(find "$tree" -maxdepth 2 -name Makefile | head -1)
if [ ! -d "$share" ] || [ -z "$bin" ] || [ -z "$mk" ]; then
	echo "finish.sh: $tree has no share/applications, bin/codeloom or Makefile: not what fyne package writes" >&2
	exit 1
fi
mkdir -p "$share/metainfo"
cp packaging/dev.codeloom.app.metainfo.xml "$share/metainfo/"
"$GO" build -o "$(dirname "$bin")/codeloom-cli" ./cmd/codeloom-cli
# After each line of the Makefile that handles the app binary, the same for
# the headless one; after the icon's, the metainfo's (system installs only).
awk '{
	print
	if ($0 ~ /usr\/local\/bin\/\$\(Exec\)/ || $0 ~ /\/bin\/\$\(Exec\)$/) {
		line = $0; gsub(/\$\(Exec\)/, "codeloom-cli", line); print line
	}
	if ($0 ~ /^\tinstall .*pixmaps\/\$\(Icon\) \$\(DESTDIR\)\$\(PREFIX\)/) {
		print "\tinstall -Dm00644 usr/local/share/metainfo/dev.codeloom.app.metainfo.xml $(DESTDIR)$(PREFIX)/share/metainfo/dev.codeloom.app.metainfo.xml"
	}
	if ($0 ~ /^\t-rm \$\(DESTDIR\)\$\(PREFIX\)\/share\/pixmaps/) {
		print "\t-rm $(DESTDIR)$(PREFIX)/share/metainfo/dev.codeloom.app.metainfo.xml"
	}
}' "$mk" > "$mk.new"
mv "$mk.new" "$mk"
grep -q 'bin/codeloom-cli' "$mk" || { echo "finish.sh: the package's Makefile does not install bin/codeloom-cli" >&2; exit 1; }
