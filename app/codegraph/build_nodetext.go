package codegraph

import "slices"

// The last build (builder.final) holds every file's nodes from the start of
// the build to the assembly of the graph, but nothing before the assembly
// reads a definition node's qualified name or content hash: the IDs are
// made from the qualified names when the nodes are made, and the
// resolution reads kinds, names, parents and signatures. Both are strings
// of their own per node (pyenv's stdlib: ≈ 300 k nodes, ≈ 25 MB with the
// 16-byte hashes), live through the resolution, where the heap peaks. So a
// final build clears them once a file's nodes are made (shedNodeText) and
// makes them again from the definitions before the assembly
// (restoreNodeText), after the resolution's tables are dropped. The graph
// is the same.

// shedNodeText clears the qualified names and hashes of fb's definition
// nodes (the file node's stay: its name is the module key, shared).
func shedNodeText(fb *fileBuild) {
	if len(fb.nodes) <= 1 {
		return
	}
	for _, n := range fb.nodes[1:] {
		n.QualName, n.Hash = "", ""
	}
	fb.textShed = true
}

// restoreNodeText makes again what shedNodeText cleared, from fb's
// definitions, as fillFileBuild made it: a definition's qualified name is
// its parent's, a dot and its name; a top-level one's is the module key,
// the language's separator and its name (a Go method's: its receiver
// type's name, a dot and its name).
func restoreNodeText(fb *fileBuild) {
	if !fb.textShed {
		return
	}
	defs := fb.fd.Defs
	quals := make([]string, len(defs))
	sep := fb.lang.qualSep
	for i := range defs {
		d := &defs[i]
		q := defQual(fb.key, sep, quals, d)
		quals[i] = q
		n := fb.nodes[i+1]
		n.QualName, n.Hash = q, hex16(d.Hash)
	}
	fb.textShed = false
}

// defQual is the qualified name fillFileBuild gives definition d of a
// file with module key key: its parent's (quals, by definition index), a
// dot and its name; for a top-level definition the module key, the
// language's separator sep and its name (a Go method's: its receiver
// type's name, a dot and its name).
func defQual(key, sep string, quals []string, d *defRec) string {
	switch {
	case d.Parent >= 0:
		return quals[d.Parent] + "." + d.Name
	case d.receiver() != "":
		return joinQual(key, sep, d.receiver()+"."+d.Name)
	default:
		return joinQual(key, sep, d.Name)
	}
}

// restoreAllNodeText is restoreNodeText for every file, on all CPUs.
func restoreAllNodeText(ordered []*fileBuild) {
	if slices.ContainsFunc(ordered, func(fb *fileBuild) bool { return fb.textShed }) {
		parallelFiles(ordered, restoreNodeText)
	}
}
