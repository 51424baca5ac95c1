package codegraph

import "slices"

// The last build (builder.final) makes no definition nodes until the
// assembly. Nothing before it needs them: the IDs are made from the
// qualified names when a file's tables are filled (fb.ids), and the
// resolution reads only kinds, names, parents, signatures and languages,
// which the definitions hold (builder.node returns them as a nodeView).
// A Node is 208 bytes with its qualified name and hash strings; pyenv's
// stdlib has ≈ 350 k of them (≈ 75 MB of slabs), live through the
// resolution, where a cold index peaks. So a final build makes only each
// file's file node in fillFileBuild and the others (makeDefNodes) once
// the resolution's tables are dropped. The graph is the same.

// nodeView is what the resolution reads of a node: builder.node's answer,
// from the node or, before a final build makes its nodes, from the
// definition. The zero value is "no such node" (found).
type nodeView struct {
	ID, Name, Parent, Signature, Language string
	Kind                                  Kind
}

// found reports whether v is a node's (not the zero value).
func (v nodeView) found() bool { return v.ID != "" }

// viewOf returns n's view (the zero value for nil).
func viewOf(n *Node) nodeView {
	if n == nil {
		return nodeView{}
	}
	return nodeView{ID: n.ID, Name: n.Name, Parent: n.Parent, Signature: n.Signature, Language: n.Language, Kind: n.Kind}
}

// defView returns the view of fb's definition i whose node is not made
// yet: what fillFileBuild and attachReceivers would have put in it.
func (fb *fileBuild) defView(i int32) nodeView {
	d := &fb.fd.Defs[i]
	return nodeView{ID: fb.ids[i], Name: d.Name, Parent: fb.defParent(i), Signature: d.Sig, Language: fb.fd.Lang, Kind: d.Kind}
}

// defParent is the parent node ID of fb's definition i: the receiver type
// attachReceivers chose for a Go method, else the enclosing definition's
// or the file's.
func (fb *fileBuild) defParent(i int32) string {
	if p, ok := fb.recvParents[i]; ok {
		return p
	}
	if d := fb.fd.Defs[i].Parent; d >= 0 {
		return fb.ids[d]
	}
	return fb.fileID
}

// makeDefNodes makes the definition nodes of a file whose nodes were
// deferred (fb.nodesLater), as fillFileBuild makes them in other builds: a
// definition's qualified name is its parent's, a dot and its name; a
// top-level one's is the module key, the language's separator and its name
// (a Go method's: its receiver type's name, a dot and its name).
func makeDefNodes(fb *fileBuild) {
	if !fb.nodesLater {
		return
	}
	defs := fb.fd.Defs
	slab := make([]Node, len(defs))
	quals := make([]string, len(defs))
	sep := fb.lang.qualSep
	path, lang := fb.fd.Path, fb.fd.Lang
	fb.nodes = append(make([]*Node, 0, len(defs)+1), fb.nodes[0])
	for i := range defs {
		d := &defs[i]
		q := defQual(fb.key, sep, quals, d)
		quals[i] = q
		n := &slab[i]
		*n = defNode(d, fb.ids[i], q, path, lang, fb.defParent(int32(i)))
		fb.nodes = append(fb.nodes, n)
	}
	fb.nodesLater, fb.recvParents = false, nil
}

// defNode is the node of definition d.
func defNode(d *defRec, id, qual, path, lang, parent string) Node {
	return Node{ID: id, Kind: d.Kind, Name: d.Name, QualName: qual, Path: path, Language: lang,
		StartLine: int(d.StartLine), EndLine: int(d.EndLine), StartByte: int(d.Start), EndByte: int(d.End),
		Signature: d.Sig, Doc: d.Doc, Hash: hex16(d.Hash), Parent: parent}
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

// makeAllDefNodes is makeDefNodes for every file, on all CPUs.
func makeAllDefNodes(ordered []*fileBuild) {
	if slices.ContainsFunc(ordered, func(fb *fileBuild) bool { return fb.nodesLater }) {
		parallelFiles(ordered, makeDefNodes)
	}
}
