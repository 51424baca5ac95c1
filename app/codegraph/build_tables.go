package codegraph

// This file holds the builder's per-file preparation (fillFileBuild) and the
// project-wide name tables that references resolve against.

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// fillFileBuild makes the nodes of one file (fb.fd set).
func (b *builder) fillFileBuild(fb *fileBuild) {
	fd := fb.fd
	trimFileData(fd)
	fb.lang, fb.key = b.langs[fd.Lang], fd.Path
	if fb.lang != nil {
		fb.keys = fb.lang.moduleKeys(b.info, fd.Path)
		fb.key = fb.keys[0]
		if fb.lang.family == "js" {
			fb.fd = jsRefs(fd) // flow_javascript.go
			fd = fb.fd
		}
	}
	// The file's nodes live in one array (one allocation per file, not
	// per node); published nodes are never modified, only replaced. A
	// final build makes the definitions' at the assembly (build_nodetext.go).
	fb.nodesLater = b.final && fb.lang != nil && len(fd.Defs) > 0
	fb.recvParents = nil
	n := len(fd.Defs) + 1
	if fb.nodesLater {
		n = 1
	}
	slab := make([]Node, n)
	fileNode := &slab[0]
	*fileNode = Node{
		ID: nodeID(KindFile, fd.Path, fd.Path, 0), Kind: KindFile, Name: path.Base(fd.Path),
		QualName: fb.key, Path: fd.Path, Language: fd.Lang, StartLine: 1, EndLine: max(fd.Lines, 1),
		StartByte: 0, EndByte: int(fd.Size), Hash: hex16(fd.Sum),
	}
	fb.fileID = fileNode.ID
	fb.nodes = make([]*Node, 1, len(slab))
	fb.nodes[0] = fileNode
	// FNV-1a (64 bits) of the parts, each followed by a 0 byte: inline, as
	// hash.Hash's Write made each part escape (an allocation per string).
	h := ifaceHash(fnvOffset64)
	hs := &h
	hs.add(fd.Lang, fd.Default, strings.Join(fd.Packages, ","))
	if fb.lang == nil {
		fb.iface = uint64(h)
		return
	}
	sep := fb.lang.qualSep
	fb.ids = make([]string, len(fd.Defs))
	quals := make([]string, len(fd.Defs))
	// Duplicates are counted per (kind, qualified name): a struct key, not
	// the two joined into a new string per definition.
	type dupKey struct {
		kind Kind
		qual string
	}
	dups := make(map[dupKey]int, len(fd.Defs))
	for i, d := range fd.Defs {
		q := defQual(fb.key, sep, quals, &d)
		quals[i] = q
		dk := dupKey{d.Kind, q}
		id := nodeID(d.Kind, q, fd.Path, dups[dk])
		dups[dk]++
		fb.ids[i] = id
		if !fb.nodesLater {
			parent := fb.fileID
			if d.Parent >= 0 {
				parent = fb.ids[d.Parent]
			}
			n := &slab[i+1]
			*n = defNode(&d, id, q, fd.Path, fd.Lang, parent)
			fb.nodes = append(fb.nodes, n)
		}
		hs.add("d", string(d.Kind), id, strconv.Itoa(int(d.Parent)), d.receiver())
	}
	rb := b.decodeRefs(fd.Refs)
	defer b.putRefs(rb)
	refs := rb.rs
	fb.inherits = nil
	nLocal := 0
	for _, r := range refs {
		if r.Kind == refLocal {
			nLocal++
		}
	}
	// The scope tables (flow_names.go), sized for the definitions and
	// locals (most of their rows): grown by doubling they left their old
	// tables behind as garbage.
	fill := newTableFill(len(fd.Defs) + nLocal)
	fb.fill = fill
	for i, d := range fd.Defs {
		fill.addNested(d.Parent, d.Name, int32(i))
	}
	for _, r := range refs {
		if r.Kind == refLocal {
			fill.addLocal(r.Def, r.Name)
		}
		if r.Kind == refInherit {
			fb.inherits = append(fb.inherits, nestKey{r.Def, r.Name})
		}
		if r.Kind == refInherit || (r.Kind == refAssign && r.Name == returnHint) || goVisibleType(fd, r) {
			hs.add("r", strconv.Itoa(int(r.Kind)), r.Name, r.Object, strconv.Itoa(int(r.Def)))
		}
	}
	if fb.lang.family == "go" {
		for _, d := range fd.Defs {
			if d.Kind == KindMethod {
				hs.add("s", d.Sig) // interface matching reads method arities
			}
		}
	}
	for _, im := range fd.Imports {
		hs.add("i", im.Module, im.Name, im.Alias, strconv.FormatBool(im.Wildcard))
	}
	fillFlow(fb, refs, hs)
	fb.iface = uint64(h)
	for _, ev := range fd.Env {
		src := fb.fileID
		if ev.Def >= 0 {
			src = fb.ids[ev.Def]
		}
		if fb.envNames == nil {
			fb.envNames = map[string][]string{}
		}
		if !slices.Contains(fb.envNames[src], ev.Name) {
			fb.envNames[src] = append(fb.envNames[src], ev.Name)
		}
	}
	// Variable types from constructor assignments and annotations; names
	// bound locally (they shadow module-level definitions).
	for _, r := range refs {
		if r.Kind == refLocal {
			continue // a local row already
		}
		if r.Kind != refAssign || slices.Contains(fb.lang.selfNames, r.Name) {
			continue // self = str.__new__(cls, v) in __new__ is still self
		}
		k := hintKey{scope: r.Def, name: r.Name}
		if r.Def >= 0 && fd.Defs[r.Def].Kind == KindClass && !strings.Contains(r.Name, ".") && r.Name != returnHint {
			// A class-body attribute (x: Foo, x = Foo()) is also self.x.
			fb.addHint(hintKey{scope: r.Def, attr: true, name: "self." + r.Name}, r.Object)
		}
		if obj, _, ok := strings.Cut(r.Name, "."); ok && (slices.Contains(fb.lang.selfNames, obj) || obj == goReceiverVar(fb, r.Def)) {
			ci := enclosingClassIdx(fd, r.Def)
			if ci < 0 {
				continue
			}
			k = hintKey{scope: ci, attr: true, name: "self." + r.Name[len(obj)+1:]}
		}
		fb.addHint(k, r.Object)
	}
	fb.finishTables() // flow_names.go
	if fb.lang.family == "go" {
		fb.goHintLines()
	}
}

// FNV-1a's 64-bit parameters (hash/fnv).
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// ifaceHash is the FNV-1a hash of what other files can see of a file
// (fileBuild.iface), continued by add. A method of a concrete type, not a
// closure: a call's parts stay on the stack (through a func value each
// call allocated them).
type ifaceHash uint64

// add continues the hash over each part followed by a 0 byte.
func (h *ifaceHash) add(parts ...string) { *h = ifaceHash(fnvParts(uint64(*h), parts...)) }

// fnvParts continues FNV-1a hash h over each part followed by a 0 byte
// (what hash/fnv's New64a gives for the same bytes, without its Write's
// allocation per part).
func fnvParts(h uint64, parts ...string) uint64 {
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= fnvPrime64
		}
		h *= fnvPrime64 // the 0 byte (xor with 0 is a no-op)
	}
	return h
}

// addHint records typ as a possible type of the variable k (once).
func (fb *fileBuild) addHint(k hintKey, typ string) {
	fb.fill.addHint(k, typ) // (once: finishTables drops repeats)
}

// tables rebuilds the cross-file lookup tables and attaches Go methods to
// their receiver types (copying a node whose parent changes: published nodes
// are never modified).
func (b *builder) tables(ordered []*fileBuild) {
	// The largest table is made at its final size: grown by doubling,
	// it left its smaller bucket arrays behind as garbage while every
	// file's tables were held (pyenv: 330 k entries).
	nNodes := len(b.pkgs) + 16
	for _, fb := range ordered {
		nNodes += 1 + len(fb.ids)
	}
	b.modules = map[string][]*fileBuild{}
	b.top = map[string]map[string]string{}
	b.members = map[string]map[string]string{}
	b.locs = newNodeLocs(nNodes)
	b.packages = map[string]map[string]string{}
	b.requires = b.requires[:0]
	for _, fb := range ordered {
		b.locs.addFile(fb, nil)
		if fb.lang == nil {
			b.addManifest(fb)
			continue
		}
		fam := fb.lang.family
		top := b.top[modKey(fam, fb.key)]
		if top == nil {
			top = map[string]string{}
			b.top[modKey(fam, fb.key)] = top
		}
		for _, k := range fb.keys {
			mk := modKey(fam, k)
			fs := append(b.modules[mk], fb)
			if fam == "js" && len(fs) > 1 && jsDeclarationFile(fs[0].fd.Path) && !jsDeclarationFile(fb.fd.Path) {
				// The implementation stands for the module (imports, its
				// scope), not the .d.ts beside it (flow_javascript.go).
				copy(fs[1:], fs[:len(fs)-1])
				fs[0] = fb
			}
			b.modules[mk] = fs
			if _, ok := b.top[mk]; !ok {
				b.top[mk] = top
			}
		}
		for i, d := range fb.fd.Defs {
			id := fb.ids[i]
			if d.Parent < 0 && d.receiver() == "" {
				if prev, dup := top[d.Name]; !dup || (fam == "go" && b.goPrefer(fb, prev)) || (fam == "js" && b.jsPreferTop(prev, d, fb)) {
					top[d.Name] = id
				}
			}
			if d.Parent >= 0 && fb.fd.Defs[d.Parent].Kind == KindClass {
				b.addMember(fb.ids[d.Parent], d.Name, id)
			}
		}
	}
	for _, fb := range ordered {
		b.attachReceivers(fb)
	}
}

// patchTables updates the lookup tables for changed files whose interface is
// unchanged: the same IDs under the same names, only new fileBuild objects.
func (b *builder) patchTables(old map[string]*fileBuild, changed []*fileBuild) {
	for _, fb := range changed {
		prev := old[fb.fd.Path]
		b.locs.addFile(fb, prev)
		if fb.lang == nil {
			continue
		}
		for _, k := range fb.keys {
			mk := modKey(fb.lang.family, k)
			fs := append([]*fileBuild(nil), b.modules[mk]...)
			for i, f := range fs {
				if f == prev {
					fs[i] = fb
				}
			}
			b.modules[mk] = fs
		}
		b.attachReceivers(fb)
	}
}

func joinQual(key, sep, name string) string {
	if key == "" {
		return name
	}
	return key + sep + name
}

func (b *builder) addMember(classID, name, id string) {
	m := b.members[classID]
	if m == nil {
		m = map[string]string{}
		b.members[classID] = m
	}
	if _, dup := m[name]; !dup {
		m[name] = id
	}
}

// addManifest registers package nodes and requires edges for a manifest.
func (b *builder) addManifest(fb *fileBuild) {
	fd := fb.fd
	if len(fd.Packages) == 0 {
		return
	}
	family := ecoFamily(fd.Eco)
	m := b.packages[family]
	if m == nil {
		m = map[string]string{}
		b.packages[family] = m
	}
	for _, name := range fd.Packages {
		norm := name
		if family == "python" {
			norm = normPyName(name)
		}
		id, ok := m[norm]
		if !ok {
			q := fd.Eco + ":" + name
			id = nodeID(KindPackage, q, "", 0)
			m[norm] = id
			if b.pkgs[id] == nil {
				b.pkgs[id] = &Node{ID: id, Kind: KindPackage, Name: name, QualName: q, Language: family}
			}
			b.locs.addPackage(id) // b.pkgs[id]
		}
		b.requires = append(b.requires, Edge{From: fb.fileID, To: id, Kind: EdgeRequires})
	}
}

func ecoFamily(eco string) string {
	switch eco {
	case "pypi":
		return "python"
	case "npm":
		return "js"
	default:
		return eco
	}
}

// attachReceivers makes Go methods children of their receiver type when the
// type is defined in the same package.
func (b *builder) attachReceivers(fb *fileBuild) {
	if fb.lang == nil {
		return
	}
	for i, d := range fb.fd.Defs {
		if d.receiver() == "" {
			continue
		}
		want := fb.fileID
		cls, ok := b.top[modKey(fb.lang.family, fb.key)][d.receiver()]
		if ok {
			want = cls
			b.addMember(cls, d.Name, fb.ids[i])
		}
		switch {
		case fb.nodesLater:
			delete(fb.recvParents, int32(i))
			if fb.defParent(int32(i)) != want {
				if fb.recvParents == nil {
					fb.recvParents = map[int32]string{}
				}
				fb.recvParents[int32(i)] = want
			}
		default:
			if n := fb.nodes[i+1]; n.Parent != want {
				cp := *n
				cp.Parent = want
				fb.nodes[i+1] = &cp // (what b.node returns)
			}
		}
	}
}
