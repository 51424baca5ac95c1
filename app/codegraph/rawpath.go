package codegraph

import (
	"encoding/base64"
	"unicode/utf8"
)

// File names are bytes, not text: on Linux a name may hold a newline or
// bytes that are not UTF-8. JSON strings are UTF-8, so encoding/json shows
// such a path with U+FFFD replacement characters, a path that does not
// exist. Nodes and problems whose path is not valid UTF-8 therefore carry
// the exact bytes too, base64-encoded, in "path_b64" (absent otherwise).
// Text output quotes such names instead (see cli's quoteName).

// rawPathB64 returns the base64 of p when p is not valid UTF-8, else "".
func rawPathB64(p string) string {
	if utf8.ValidString(p) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(p))
}

// markRawPaths sets PathB64 on the nodes of files whose path is not valid
// UTF-8, and reports whether there are any. The common case (every path
// valid) costs one check per file.
// Nodes may be shared with earlier snapshots by the incremental builder, so
// a node is only written while its field is still unset.
func markRawPaths(g *Graph, files map[string]*fileData) bool {
	invalid := false
	for rel := range files {
		if !utf8.ValidString(rel) {
			invalid = true
			break
		}
	}
	if !invalid {
		return false
	}
	for _, n := range g.nodes {
		if n.Path != "" && n.PathB64 == "" {
			n.PathB64 = rawPathB64(n.Path)
		}
	}
	return true
}
