package codegraph

import (
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// maxUnresolvedSample bounds the unresolved references kept for the report.
const maxUnresolvedSample = 200

// nodeID is the stable ID of a node: a hash of kind, qualified name, path and
// an ordinal that tells apart duplicates (e.g. a property getter and setter),
// counted in source order. Line numbers are not part of it.
func nodeID(kind Kind, qual, p string, dup int) string {
	h := fnv.New64a()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(qual))
	h.Write([]byte{0})
	h.Write([]byte(p))
	if dup > 0 {
		h.Write([]byte{0})
		h.Write(strconv.AppendInt(nil, int64(dup), 10))
	}
	return hex16(h.Sum64())
}

// hex16 formats v as 16 lower-case hex digits.
func hex16(v uint64) string {
	var b [8]byte
	var h [16]byte
	binary.BigEndian.PutUint64(b[:], v)
	hex.Encode(h[:], b[:])
	return string(h[:]) // one allocation (EncodeToString makes two)
}

// bindKind says what a name in a file's scope is bound to.
type bindKind uint8

const (
	bDef      bindKind = iota + 1 // a node of the project
	bModule                       // a project module (key in mod)
	bExternal                     // something outside the project
	bLocal                        // a local variable of the enclosing definition
)

type binding struct {
	kind bindKind
	id   string // bDef: node ID; bExternal: package node ID or ""
	mod  string // bModule: module key
}

// fileResult is what resolving one file's imports or references produced.
type fileResult struct {
	edges      []Edge
	seen       map[edgeKey]bool
	resolved   int
	external   int
	unresolved int
	byKind     []kindCount // unresolved references per kind (a few kinds: no map per file)
	sample     []UnresolvedRef
	bases      [][2]string // resolved base classes: class ID, base ID
	extBases   []string    // classes with a base outside the project
}

func newResult() *fileResult {
	return &fileResult{} // seen is made by the first addEdge
}

// kindCount is a count of unresolved references of one kind.
type kindCount struct {
	kind string
	n    int
}

func (r *fileResult) addEdge(from, to string, kind EdgeKind, line int32) {
	if from == to && kind != EdgeCalls {
		return
	}
	if r.seen == nil {
		// Not made yet, or dropped once the file was resolved (see
		// doneResolving): (re)build it.
		r.seen = make(map[edgeKey]bool, len(r.edges)+8)
		for _, e := range r.edges {
			r.seen[edgeKey{e.From, e.To, e.Kind}] = true
		}
	}
	k := edgeKey{from, to, kind}
	if r.seen[k] {
		return
	}
	r.seen[k] = true
	r.edges = append(r.edges, Edge{From: from, To: to, Kind: kind, Line: int(line)})
}

// doneResolving drops the duplicate filter of a resolved file's result: it
// is only needed while edges are added, and was the largest per-edge cost
// kept after a build.
func (r *fileResult) doneResolving() {
	if r != nil {
		r.seen = nil
	}
}

// countKind counts one unresolved reference of kind.
func (r *fileResult) countKind(kind string) {
	for i := range r.byKind {
		if r.byKind[i].kind == kind {
			r.byKind[i].n++
			return
		}
	}
	r.byKind = append(r.byKind, kindCount{kind, 1})
}

func (r *fileResult) unresolvedRef(path, kind, name string, line int32) {
	r.unresolved++
	r.countKind(kind)
	if len(r.sample) < maxUnresolvedSample {
		r.sample = append(r.sample, UnresolvedRef{Path: path, Line: int(line), Kind: kind, Name: name})
	}
}

// fileBuild is the per-file state of the graph builder. It is kept between
// builds: an unchanged file keeps its nodes and its resolved edges.
type fileBuild struct {
	fd       *fileData
	lang     *language
	fileID   string
	key      string   // canonical module key
	keys     []string // every module key
	ids      []string // node ID per definition
	nodes    []*Node  // the file node, then definitions in source order
	iface    uint64   // hash of what other files can see (names, bases, imports, result types)
	nested   map[nestKey]int32
	locals   map[nestKey]bool // (def, name) bound locally in that definition
	hints    map[hintKey][]string
	flow     map[hintKey][]flowSrc // value flow into names (flow.go)
	facts    *flowFacts            // parameters used by calls, decorators (flow.go)
	envNames map[string][]string

	scope      map[string]binding // what the file's imports bind; shadows topScope (see scopeLookup)
	topScope   map[string]string  // its module's top-level definitions (the builder's table, shared, never written)
	scopeState uint8              // 0 none, 1 building, 2 built
	spans      []importSpan
	inh        *fileResult // base classes
	res        *fileResult // imports and other references

	// Go only (build_go.go, flow_go.go).
	goBuild      int8                 // 0 unknown, 1 built on this platform, -1 excluded by build constraints
	goHintAt     map[hintKey][]hintAt // where each recorded type of a variable is assigned
	goParamCalls map[nestKey]bool     // (def, parameter) called in that definition (flow_go_values.go)
}

type nestKey struct {
	parent int32
	name   string
}

// hintKey names a variable in a scope: a definition (or -1 for the module),
// or, for "self.x" style attributes, the class definition.
type hintKey struct {
	scope int32
	attr  bool
	name  string
}

// defLocation is a definition's file and index.
type defLocation struct {
	fb  *fileBuild
	idx int32
}

type edgeKey struct {
	from, to string
	kind     EdgeKind
}

// builder builds graphs incrementally. Tables that join files are rebuilt on
// every build (cheap); parsing results, nodes and resolved edges are reused
// for files that did not change. When no file's interface changed, only the
// changed files' references are resolved again.
type builder struct {
	root  string
	langs map[string]*language
	fbs   map[string]*fileBuild
	pkgs  map[string]*Node // package node cache by ID (stable objects)

	// Rebuilt on every build.
	info     *projectInfo
	modules  map[string][]*fileBuild      // family\x00key → files
	top      map[string]map[string]string // family\x00key → name → node ID
	members  map[string]map[string]string // class ID → member name → node ID
	bases    map[string][]string          // class ID → base class IDs
	subs     map[string][]string          // class ID → direct subclass IDs (flow.go)
	pyNames  map[string]uint8             // Python method names: pyProperty, pyMethod bits (flow_python.go)
	extBase  map[string]bool              // class ID → has a base outside the project
	defLoc   map[string]defLocation       // definition node ID → where it is defined
	nodeByID map[string]*Node
	packages map[string]map[string]string // family → package name → node ID
	requires []Edge
	goEdges  []Edge // Go implements and dispatches edges (iface_go.go)

	last       *Graph  // the previous snapshot
	lastPkgs   []*Node // its package nodes
	fastBuilds int     // snapshots made by assembleFast (for tests)
}

func modKey(family, key string) string { return family + "\x00" + key }

func newBuilder(root string, langs map[string]*language) *builder {
	return &builder{root: root, langs: langs, pkgs: map[string]*Node{}}
}

// build returns the graph of files. Files whose *fileData is the same object
// as in the previous build are not processed again.
func (b *builder) build(files map[string]*fileData, info *projectInfo, env map[string]string) *Graph {
	b.info = info
	old := b.fbs
	// Module names depend on go.mod files and on which folders are Python
	// packages: when one of those files comes or goes, name every file again.
	for p, fd := range files {
		if o := old[p]; (o == nil || o.fd != fd) && namesModules(p) {
			old = nil
			break
		}
	}
	for p := range old {
		if _, ok := files[p]; !ok && namesModules(p) {
			old = nil
			break
		}
	}
	b.fbs = make(map[string]*fileBuild, len(files))
	var changed []*fileBuild
	structural := old == nil
	var todo []*fileBuild
	for p, fd := range files {
		if o := old[p]; o != nil && o.fd == fd {
			b.fbs[p] = o
			continue
		}
		todo = append(todo, &fileBuild{fd: fd})
	}
	parallelFiles(todo, func(fb *fileBuild) { b.fillFileBuild(fb) })
	for _, fb := range todo {
		p := fb.fd.Path
		b.fbs[p] = fb
		changed = append(changed, fb)
		if o := old[p]; o == nil || o.iface != fb.iface {
			structural = true
		}
	}
	for p := range old {
		if _, ok := files[p]; !ok {
			structural = true
		}
	}
	paths := make([]string, 0, len(b.fbs))
	for p := range b.fbs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ordered := make([]*fileBuild, len(paths))
	for i, p := range paths {
		ordered[i] = b.fbs[p]
	}
	// Files came or went: every file may resolve differently.
	sameFiles := old != nil && len(old) == len(files)
	for p := range files {
		if old[p] == nil {
			sameFiles = false
			break
		}
	}
	if structural || b.nodeByID == nil {
		b.tables(ordered)
	} else {
		b.patchTables(old, changed)
	}
	affected := changed
	switch {
	case structural && sameFiles:
		// An interface changed: re-resolve the changed files and every file
		// that can see them (importers, transitively; Go package siblings).
		affected = b.dependents(changed, ordered)
	case structural:
		affected = ordered
	}
	sort.Slice(affected, func(i, j int) bool { return affected[i].fd.Path < affected[j].fd.Path })
	// Every affected file gets its fresh result before any scope is built:
	// building one file's scope can build another's (a re-exported name),
	// whose import edges must land in the result that is kept.
	for _, fb := range affected {
		fb.scopeState = 0
		fb.scope = nil
		fb.topScope = nil
		fb.res = newResult()
	}
	for _, fb := range affected {
		b.ensureScope(fb)
	}
	// Resolution reads the shared tables and writes only per-file results,
	// so files are resolved in parallel.
	parallelFiles(affected, func(fb *fileBuild) {
		fb.inh = newResult()
		b.resolveRefs(fb, fb.inh, true)
	})
	b.bases = map[string][]string{}
	b.extBase = map[string]bool{}
	for _, fb := range ordered {
		if fb.inh == nil {
			continue
		}
		for _, cb := range fb.inh.bases {
			if !containsStr(b.bases[cb[0]], cb[1]) {
				b.bases[cb[0]] = append(b.bases[cb[0]], cb[1])
			}
		}
		for _, c := range fb.inh.extBases {
			b.extBase[c] = true
		}
	}
	b.subs = invertBases(b.bases)
	b.pyNames = pyMemberNames(ordered)
	parallelFiles(affected, func(fb *fileBuild) {
		b.resolveRefs(fb, fb.res, false)
		fb.inh.doneResolving()
		fb.res.doneResolving()
	})
	b.goEdges = b.goInterfaces(ordered) // iface_go.go
	var g *Graph
	if !structural && sameFiles {
		g = b.assembleFast(b.last, ordered, changed, old, env)
	}
	if g == nil {
		g = b.assemble(ordered, env)
	} else {
		b.fastBuilds++
	}
	b.last = g
	b.lastPkgs = b.packageNodes()
	return g
}

// dependents returns the changed files plus every file whose resolution can
// depend on them: importers (from their resolved import edges), transitively,
// and files sharing a module key (Go packages).
func (b *builder) dependents(changed, ordered []*fileBuild) []*fileBuild {
	importers := map[string][]*fileBuild{} // imported file ID → importers
	for _, fb := range ordered {
		if fb.res == nil {
			continue
		}
		for _, e := range fb.res.edges {
			if e.Kind == EdgeImports {
				importers[e.To] = append(importers[e.To], fb)
			}
		}
	}
	seen := map[*fileBuild]bool{}
	queue := append([]*fileBuild(nil), changed...)
	for _, fb := range queue {
		seen[fb] = true
	}
	// Files the changed ones import (not their importers): see flowDependents.
	var extra []*fileBuild
	for _, fb := range changed {
		extra = append(extra, b.flowDependents(fb)...)
	}

	for i := 0; i < len(queue); i++ {
		fb := queue[i]
		next := importers[fb.fileID]
		if fb.lang != nil && fb.lang.sharedScope {
			next = append(next, b.modules[modKey(fb.lang.family, fb.key)]...)
		}
		for _, d := range next {
			if !seen[d] {
				seen[d] = true
				queue = append(queue, d)
			}
		}
	}
	for _, fb := range extra {
		if !seen[fb] {
			seen[fb] = true
			queue = append(queue, fb)
		}
	}
	return queue
}

// namesModules reports files whose presence or content changes how other
// files are named as modules.
func namesModules(p string) bool {
	base := path.Base(p)
	return base == "go.mod" || base == "__init__.py" || base == "__init__.pyi"
}

// parallelFiles runs fn for every file on all CPUs (inline when few).
func parallelFiles(fbs []*fileBuild, fn func(*fileBuild)) {
	workers := min(runtime.NumCPU(), len(fbs)/16+1)
	if workers <= 1 {
		for _, fb := range fbs {
			fn(fb)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(fbs) {
					return
				}
				fn(fbs[i])
			}
		}()
	}
	wg.Wait()
}

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
	// per node); published nodes are never modified, only replaced.
	slab := make([]Node, len(fd.Defs)+1)
	fileNode := &slab[0]
	*fileNode = Node{
		ID: nodeID(KindFile, fd.Path, fd.Path, 0), Kind: KindFile, Name: path.Base(fd.Path),
		QualName: fb.key, Path: fd.Path, Language: fd.Lang, StartLine: 1, EndLine: max(fd.Lines, 1),
		StartByte: 0, EndByte: int(fd.Size), Hash: hex16(fd.Sum),
	}
	fb.fileID = fileNode.ID
	fb.nodes = make([]*Node, 1, len(fd.Defs)+1)
	fb.nodes[0] = fileNode
	h := fnv.New64a()
	hs := func(parts ...string) {
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
	}
	hs(fd.Lang, fd.Default, strings.Join(fd.Packages, ","))
	if fb.lang == nil {
		fb.iface = h.Sum64()
		return
	}
	sep := fb.lang.qualSep
	fb.ids = make([]string, len(fd.Defs))
	quals := make([]string, len(fd.Defs))
	dups := map[string]int{}
	fb.nested = make(map[nestKey]int32, len(fd.Defs))
	for i, d := range fd.Defs {
		var q string
		switch {
		case d.Parent >= 0:
			q = quals[d.Parent] + "." + d.Name
		case d.Receiver != "":
			q = joinQual(fb.key, sep, d.Receiver+"."+d.Name)
		default:
			q = joinQual(fb.key, sep, d.Name)
		}
		quals[i] = q
		dk := string(d.Kind) + "\x00" + q
		id := nodeID(d.Kind, q, fd.Path, dups[dk])
		dups[dk]++
		fb.ids[i] = id
		parent := fb.fileID
		if d.Parent >= 0 {
			parent = fb.ids[d.Parent]
		}
		n := &slab[i+1]
		*n = Node{ID: id, Kind: d.Kind, Name: d.Name, QualName: q, Path: fd.Path, Language: fd.Lang,
			StartLine: int(d.StartLine), EndLine: int(d.EndLine), StartByte: int(d.Start), EndByte: int(d.End),
			Signature: d.Sig, Doc: d.Doc, Hash: hex16(d.Hash), Parent: parent}
		fb.nodes = append(fb.nodes, n)
		if _, dup := fb.nested[nestKey{d.Parent, d.Name}]; !dup {
			fb.nested[nestKey{d.Parent, d.Name}] = int32(i)
		}
		hs("d", string(d.Kind), id, strconv.Itoa(int(d.Parent)), d.Receiver)
	}
	for _, r := range fd.Refs {
		if r.Kind == refInherit || (r.Kind == refAssign && r.Name == returnHint) || goVisibleType(fd, r) {
			hs("r", strconv.Itoa(int(r.Kind)), r.Name, r.Object, strconv.Itoa(int(r.Def)))
		}
	}
	if fb.lang.family == "go" {
		for _, d := range fd.Defs {
			if d.Kind == KindMethod {
				hs("s", d.Sig) // interface matching reads method arities
			}
		}
	}
	for _, im := range fd.Imports {
		hs("i", im.Module, im.Name, im.Alias, strconv.FormatBool(im.Wildcard))
	}
	fillFlow(fb, hs)
	fb.iface = h.Sum64()
	for _, ev := range fd.Env {
		src := fb.fileID
		if ev.Def >= 0 {
			src = fb.ids[ev.Def]
		}
		if fb.envNames == nil {
			fb.envNames = map[string][]string{}
		}
		if !containsStr(fb.envNames[src], ev.Name) {
			fb.envNames[src] = append(fb.envNames[src], ev.Name)
		}
	}
	// Variable types from constructor assignments and annotations; names
	// bound locally (they shadow module-level definitions).
	for _, r := range fd.Refs {
		if r.Kind == refLocal {
			if fb.locals == nil {
				fb.locals = map[nestKey]bool{}
			}
			fb.locals[nestKey{r.Def, r.Name}] = true
			continue
		}
		if r.Kind != refAssign {
			continue
		}
		k := hintKey{scope: r.Def, name: r.Name}
		if r.Def >= 0 && fd.Defs[r.Def].Kind == KindClass && !strings.Contains(r.Name, ".") && r.Name != returnHint {
			// A class-body attribute (x: Foo, x = Foo()) is also self.x.
			fb.addHint(hintKey{scope: r.Def, attr: true, name: "self." + r.Name}, r.Object)
		}
		if obj, _, ok := strings.Cut(r.Name, "."); ok && (containsStr(fb.lang.selfNames, obj) || obj == goReceiverVar(fb, r.Def)) {
			ci := enclosingClassIdx(fd, r.Def)
			if ci < 0 {
				continue
			}
			k = hintKey{scope: ci, attr: true, name: "self." + r.Name[len(obj)+1:]}
		}
		fb.addHint(k, r.Object)
	}
	if fb.lang.family == "go" {
		fb.goHintLines()
	}
}

// addHint records typ as a possible type of the variable k (once).
func (fb *fileBuild) addHint(k hintKey, typ string) {
	if fb.hints == nil {
		fb.hints = map[hintKey][]string{}
	}
	if !containsStr(fb.hints[k], typ) {
		fb.hints[k] = append(fb.hints[k], typ)
	}
}

// tables rebuilds the cross-file lookup tables and attaches Go methods to
// their receiver types (copying a node whose parent changes: published nodes
// are never modified).
func (b *builder) tables(ordered []*fileBuild) {
	b.modules = map[string][]*fileBuild{}
	b.top = map[string]map[string]string{}
	b.members = map[string]map[string]string{}
	b.defLoc = map[string]defLocation{}
	b.nodeByID = make(map[string]*Node, len(b.nodeByID)+16)
	b.packages = map[string]map[string]string{}
	b.requires = b.requires[:0]
	for _, fb := range ordered {
		for _, n := range fb.nodes {
			b.nodeByID[n.ID] = n
		}
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
			b.modules[mk] = append(b.modules[mk], fb)
			if _, ok := b.top[mk]; !ok {
				b.top[mk] = top
			}
		}
		for i, d := range fb.fd.Defs {
			id := fb.ids[i]
			b.defLoc[id] = defLocation{fb, int32(i)}
			if d.Parent < 0 && d.Receiver == "" {
				if prev, dup := top[d.Name]; !dup || (fam == "go" && b.goPrefer(fb, prev)) {
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
		for _, n := range fb.nodes {
			b.nodeByID[n.ID] = n
		}
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
		for i, id := range fb.ids {
			b.defLoc[id] = defLocation{fb, int32(i)}
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

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
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
			b.nodeByID[id] = b.pkgs[id]
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
		if d.Receiver == "" {
			continue
		}
		want := fb.fileID
		cls, ok := b.top[modKey(fb.lang.family, fb.key)][d.Receiver]
		if ok {
			want = cls
			b.addMember(cls, d.Name, fb.ids[i])
		}
		if n := fb.nodes[i+1]; n.Parent != want {
			cp := *n
			cp.Parent = want
			fb.nodes[i+1] = &cp
			b.nodeByID[cp.ID] = &cp
		}
	}
}

// assemble puts the per-file pieces together into an immutable graph.
func (b *builder) assemble(ordered []*fileBuild, env map[string]string) *Graph {
	nNodes, nEdges := len(b.pkgs), len(b.requires)
	for _, fb := range ordered {
		nNodes += len(fb.nodes)
		nEdges += len(fb.nodes) - 1
		if fb.res != nil {
			nEdges += len(fb.res.edges)
		}
		if fb.inh != nil {
			nEdges += len(fb.inh.edges)
		}
	}
	g := &Graph{
		root:     b.root,
		nodes:    make([]*Node, 0, nNodes),
		byID:     make(map[string]int32, nNodes),
		edges:    make([]Edge, 0, nEdges),
		byFile:   make(map[string][]*Node, len(ordered)),
		fileNode: make(map[string]*Node, len(ordered)),
		children: make(map[string][]*Node, nNodes/2),
		envNames: map[string][]string{},
		envVals:  env,
		imports:  make(map[string][]importSpan, len(ordered)),
		globals:  map[string][]globalRec{},
		stats: Stats{FilesByLanguage: map[string]int{}, NodesByKind: map[Kind]int{},
			EdgesByKind: map[EdgeKind]int{}, UnresolvedByKind: map[string]int{}},
	}
	st := &g.stats
	var shared []sharedEdges
	addRes := func(r *fileResult) {
		if r == nil {
			return
		}
		shared = append(shared, sharedEdges{r, len(g.edges)})
		g.edges = append(g.edges, r.edges...)
		st.Resolved += r.resolved
		st.External += r.external
		st.Unresolved += r.unresolved
		for _, kc := range r.byKind {
			st.UnresolvedByKind[kc.kind] += kc.n
		}
		if room := maxUnresolvedSample - len(st.UnresolvedSample); room > 0 {
			st.UnresolvedSample = append(st.UnresolvedSample, r.sample[:min(room, len(r.sample))]...)
		}
	}
	for _, fb := range ordered {
		fd := fb.fd
		st.Files++
		lname := fd.Lang
		if lname == "" {
			lname = "other"
		}
		st.FilesByLanguage[lname]++
		st.Lines += fd.Lines
		st.Bytes += fd.Size
		g.fileNode[fd.Path] = fb.nodes[0]
		if len(fb.nodes) > 1 {
			g.byFile[fd.Path] = fb.nodes[1:]
		}
		for _, n := range fb.nodes {
			g.byID[n.ID] = int32(len(g.nodes))
			g.nodes = append(g.nodes, n)
			if n.Parent != "" {
				g.children[n.Parent] = append(g.children[n.Parent], n)
				g.edges = append(g.edges, Edge{From: n.Parent, To: n.ID, Kind: EdgeContains, Line: n.StartLine})
			}
		}
		for id, names := range fb.envNames {
			g.envNames[id] = names
		}
		g.imports[fd.Path] = fb.spans
		if len(fd.Globals) > 0 {
			g.globals[fd.Path] = fd.Globals
		}
		addRes(fb.inh)
		addRes(fb.res)
	}
	g.edges = append(g.edges, b.requires...)
	g.edges = append(g.edges, b.goEdges...)
	for _, n := range b.packageNodes() {
		g.byID[n.ID] = int32(len(g.nodes))
		g.nodes = append(g.nodes, n)
	}
	shareEdges(g.edges, shared)
	// Children of Go types may come from several files: keep source order.
	for _, fb := range ordered {
		if fb.lang != nil && fb.lang.family == "go" {
			for _, n := range fb.nodes[1:] {
				if kids := g.children[n.ID]; len(kids) > 1 {
					sortNodes(kids)
				}
			}
		}
	}
	for _, n := range g.nodes {
		st.NodesByKind[n.Kind]++
	}
	for _, e := range g.edges {
		st.EdgesByKind[e.Kind]++
	}
	st.Nodes = len(g.nodes)
	st.Edges = len(g.edges)
	return g
}

// lookupModule returns the files of a module key, trying the language's
// candidate keys in order.
func (b *builder) lookupModule(fb *fileBuild, module string) (string, []*fileBuild) {
	for _, k := range fb.lang.importKeys(b.info, fb.fd.Path, module) {
		if fs, ok := b.modules[modKey(fb.lang.family, k)]; ok {
			return k, fs
		}
	}
	return "", nil
}

// packageFor returns the package node an external import names, if any.
func (b *builder) packageFor(fb *fileBuild, module string) string {
	m := b.packages[fb.lang.family]
	if len(m) == 0 {
		return ""
	}
	name := fb.lang.packageName(module)
	if name == "" {
		return ""
	}
	if id, ok := m[name]; ok {
		return id
	}
	// Go and npm: an import path inside a required module path; the longest
	// wins (golang.org/x/tools/gopls over golang.org/x/tools), whatever the
	// map's order.
	best, bestID := "", ""
	for p, id := range m {
		if len(p) > len(best) && strings.HasPrefix(module, p+"/") {
			best, bestID = p, id
		}
	}
	return bestID
}

// ensureScope binds the names a file can use: its own top-level definitions
// (for Go, its package's) and what it imports. Import edges are added here.
func (b *builder) ensureScope(fb *fileBuild) {
	if fb.lang == nil || fb.scopeState != 0 {
		return
	}
	fb.scopeState = 1
	defer func() { fb.scopeState = 2 }()
	if fb.res == nil {
		fb.res = newResult()
	}
	res := fb.res
	fd := fb.fd
	fb.scope = map[string]binding{}
	family := fb.lang.family
	// The module's own top-level names are looked up in the shared table
	// rather than copied into every file's scope (a Go package's names were
	// copied into each of its files: most of the memory of a Go index).
	fb.topScope = b.top[modKey(family, fb.key)]
	var spans []importSpan
	for _, im := range fd.Imports {
		key, targets := b.lookupModule(fb, im.Module)
		local := im.Alias
		if targets == nil {
			// Not in the project: an external package (when a manifest names
			// it) or an unresolved import.
			pkg := b.packageFor(fb, im.Module)
			if pkg != "" {
				res.addEdge(fb.fileID, pkg, EdgeImports, im.Line)
				res.external++
			} else if fb.lang.stdlib != nil && fb.lang.stdlib(im.Module) {
				res.external++
			} else {
				res.unresolvedRef(fd.Path, "import", im.Module, im.Line)
			}
			spans = append(spans, importSpan{im.Start, im.End, true})
			if local == "" {
				local = im.Name
			}
			if local == "" && im.Module != "" {
				local = defaultLocal(fb.lang, im.Module)
			}
			if local != "" && !im.Wildcard {
				if !fb.scopeHas(local) || im.Alias != "" {
					fb.scope[local] = binding{kind: bExternal, id: pkg}
				}
			}
			continue
		}
		spans = append(spans, importSpan{im.Start, im.End, false})
		res.resolved++
		for _, t := range targets[:1] {
			if t != fb {
				res.addEdge(fb.fileID, t.fileID, EdgeImports, im.Line)
			}
		}
		switch {
		case im.Wildcard:
			for name, id := range b.top[modKey(family, key)] {
				if !fb.scopeHas(name) && !strings.HasPrefix(name, "_") {
					fb.scope[name] = binding{kind: bDef, id: id}
				}
			}
		case im.Name != "":
			if local == "" {
				local = im.Name
			}
			name := im.Name
			if name == "default" {
				name = targets[0].fd.Default
			}
			if id, ok := b.top[modKey(family, key)][name]; ok && name != "" {
				fb.scope[local] = binding{kind: bDef, id: id}
				continue
			}
			// A name the module itself imports (a re-export, e.g. in __init__.py).
			if t := targets[0]; t != fb && name != "" {
				b.ensureScope(t)
				if bd, ok := t.scopeLookup(name); ok && t.scopeState == 2 && bd.kind != 0 {
					fb.scope[local] = bd
					continue
				}
			}
			sub := key + "." + im.Name
			if key == "" {
				sub = im.Name
			}
			if subs, ok := b.modules[modKey(family, sub)]; ok {
				res.addEdge(fb.fileID, subs[0].fileID, EdgeImports, im.Line)
				fb.scope[local] = binding{kind: bModule, mod: sub}
				continue
			}
			res.unresolvedRef(fd.Path, "import", im.Module+"."+im.Name, im.Line)
		default:
			if local == "" {
				local = defaultLocal(fb.lang, im.Module)
				if family == "python" {
					// "import a.b" binds "a"; dotted uses are resolved from the root.
					top, _, _ := strings.Cut(im.Module, ".")
					fb.scope[top] = binding{kind: bModule, mod: top}
					continue
				}
			}
			if local != "" && local != "_" && local != "." {
				fb.scope[local] = binding{kind: bModule, mod: key}
			}
		}
	}
	fb.spans = spans
}

// enclosingClassIdx returns the nearest class definition around def in the
// same file, or -1.
func enclosingClassIdx(fd *fileData, def int32) int32 {
	for d := def; d >= 0; d = fd.Defs[d].Parent {
		if fd.Defs[d].Kind == KindClass {
			return d
		}
	}
	return -1
}

// hintFor returns the one type recorded for variable obj as seen from def,
// with the scope it was recorded in.
func (fb *fileBuild) hintFor(obj string, def int32) (string, int32, bool) {
	if fb.hints == nil {
		return "", 0, false
	}
	if o, rest, ok := strings.Cut(obj, "."); ok && (containsStr(fb.lang.selfNames, o) || o == goReceiverVar(fb, def)) {
		ci := enclosingClassIdx(fb.fd, def)
		if ts := fb.hints[hintKey{scope: ci, attr: true, name: "self." + rest}]; ci >= 0 && len(ts) == 1 {
			return ts[0], def, true
		}
		return "", 0, false
	}
	for d := def; ; d = fb.fd.Defs[d].Parent {
		if ts, ok := fb.hints[hintKey{scope: d, name: obj}]; ok {
			if len(ts) == 1 {
				return ts[0], d, true
			}
			return "", 0, false
		}
		if d < 0 {
			return "", 0, false
		}
	}
}

// defaultLocal is the name an import without alias binds.
func defaultLocal(l *language, module string) string {
	switch l.family {
	case "go":
		base := path.Base(module)
		// gopkg.in/yaml.v3 → yaml, github.com/x/y/v2 → y
		if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
			base = path.Base(path.Dir(module))
		}
		base, _, _ = strings.Cut(base, ".")
		return strings.TrimPrefix(base, "go-")
	case "python":
		top, _, _ := strings.Cut(module, ".")
		return top
	}
	return ""
}

// enclosingClass returns the node ID of the class a reference inside def
// belongs to (its nearest class ancestor, or a Go method's receiver type).
func (b *builder) enclosingClass(fb *fileBuild, def int32) (string, bool) {
	for d := def; d >= 0; d = fb.fd.Defs[d].Parent {
		if fb.fd.Defs[d].Kind == KindClass {
			return fb.ids[d], true
		}
		n := b.nodeByID[fb.ids[d]]
		if p := b.nodeByID[n.Parent]; p != nil && p.Kind == KindClass && fb.fd.Defs[d].Receiver != "" {
			return p.ID, true
		}
	}
	return "", false
}

// member finds name in class cls or its bases (breadth first).
func (b *builder) member(cls, name string, skipSelf bool) (string, bool) {
	// The common cases without the walk's allocations: found in the class
	// itself, or a class without bases.
	if !skipSelf {
		if id, ok := b.members[cls][name]; ok {
			return id, true
		}
	}
	if len(b.bases[cls]) == 0 {
		return "", false
	}
	seen := map[string]bool{cls: true}
	queue := []string{cls}
	for i := 0; i < len(queue); i++ {
		c := queue[i]
		if !(skipSelf && i == 0) {
			if id, ok := b.members[c][name]; ok {
				return id, true
			}
		}
		for _, base := range b.bases[c] {
			if !seen[base] {
				seen[base] = true
				queue = append(queue, base)
			}
		}
	}
	return "", false
}

// lookupName binds a bare name seen inside definition def: definitions nested
// in an enclosing scope first, then the file's scope.
func (fb *fileBuild) lookupName(name string, def int32) (binding, bool) {
	for d := def; ; d = fb.fd.Defs[d].Parent {
		// A class body is not an enclosing scope of the functions inside it.
		if d >= 0 && d != def && fb.fd.Defs[d].Kind == KindClass {
			continue
		}
		if i, ok := fb.nested[nestKey{d, name}]; ok && d >= 0 {
			return binding{kind: bDef, id: fb.ids[i]}, true
		}
		if d < 0 {
			break
		}
		if fb.locals[nestKey{d, name}] {
			return binding{kind: bLocal}, true // a local variable: its value is unknown
		}
	}
	return fb.scopeLookup(name)
}

// scopeLookup binds name in the file's scope: what its imports bind, else
// its module's top-level definitions.
func (fb *fileBuild) scopeLookup(name string) (binding, bool) {
	if bd, ok := fb.scope[name]; ok {
		return bd, true
	}
	if id, ok := fb.topScope[name]; ok {
		return binding{kind: bDef, id: id}, true
	}
	return binding{}, false
}

// scopeHas reports whether name is bound in the file's scope.
func (fb *fileBuild) scopeHas(name string) bool {
	_, ok := fb.scopeLookup(name)
	return ok
}

func isDottedIdent(s string) bool {
	if s == "" {
		return false
	}
	for rest, more := s, true; more; {
		var part string
		part, rest, more = strings.Cut(rest, ".")
		if part == "" {
			return false
		}
		for i, r := range part {
			if !(r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') || r > 127) {
				return false
			}
		}
	}
	return true
}

// resolveRefs binds a file's references. With inherits set it handles base
// classes only (they must be known before method lookups through bases).
func (b *builder) resolveRefs(fb *fileBuild, res *fileResult, inherits bool) {
	if fb.lang == nil {
		return
	}
	fd := fb.fd
	family := fb.lang.family
	var fe *flowEval
	if !inherits && flowFamily(fb.lang) {
		fe = newFlowEval(b, fb)
	}
	for _, r := range fd.Refs {
		if r.Kind == refAssign || r.Kind == refLocal || r.Kind == refValue || (r.Kind == refInherit) != inherits {
			continue
		}
		if r.Kind == refDecorator && r.Def >= 0 {
			r.Def = fd.Defs[r.Def].Parent // applied in the scope around the definition
		}
		src := fb.fileID
		if r.Def >= 0 {
			src = fb.ids[r.Def]
		}
		if r.Kind == refArg || r.Kind == refImplicit {
			if fe != nil {
				b.resolveFlowExtra(fe, fb, r, src, res)
			} else if family == "go" && r.Kind == refArg {
				b.goResolveArg(fb, r, res) // flow_go_values.go
			}
			continue
		}
		ek := EdgeCalls
		kindName := "call"
		switch r.Kind {
		case refUse:
			ek = EdgeUses
		case refInherit:
			ek = EdgeInherits
			kindName = "inherit"
		}
		var target string
		var outcome outcome
		if family == "go" && r.Kind != refInherit && (r.Object != "" || r.Kind == refCall) {
			target, outcome = b.goResolveRef(fb, r) // flow_go.go
		} else {
			target, outcome = b.resolveRef(fb, family, r, 0)
		}
		if outcome == outUnresolved && family == "js" && r.Object == "this" {
			if id, ok := b.jsThisProperty(fb, r); ok { // flow_javascript.go
				target, outcome = id, outResolved
			}
		}
		if fe != nil && b.resolveFlowRef(fe, fb, r, src, target, outcome, res) {
			res.resolved++
			continue
		}
		switch outcome {
		case outResolved:
			if r.Kind == refUse && target == src {
				continue
			}
			res.addEdge(src, target, ek, r.Line)
			res.resolved++
			if r.Kind == refInherit {
				if n := b.nodeByID[target]; n != nil && n.Kind == KindClass {
					res.bases = append(res.bases, [2]string{src, target})
				}
			}
		case outExternal:
			if r.Kind != refUse {
				res.external++
			}
			if r.Kind == refInherit {
				res.extBases = append(res.extBases, src)
			}
		case outBuiltin:
		case outUnresolved:
			if r.Kind == refInherit {
				res.extBases = append(res.extBases, src)
			}
			if r.Kind != refUse {
				name := r.Name
				if r.Object != "" {
					name = r.Object + "." + r.Name
				}
				res.unresolvedRef(fb.fd.Path, kindName, name, r.Line)
			}
		}
	}
}

type outcome uint8

const (
	outResolved outcome = iota
	outExternal
	outBuiltin
	outUnresolved
)

// memberOutcome looks name up in class cls; a miss in a class with a base
// outside the project is external (the member may be inherited from it).
func (b *builder) memberOutcome(cls, name string, skipSelf bool) (string, outcome) {
	if id, ok := b.member(cls, name, skipSelf); ok {
		return id, outResolved
	}
	if len(b.bases[cls]) == 0 { // no walk needed
		if b.extBase[cls] {
			return "", outExternal
		}
		return "", outUnresolved
	}
	seen := map[string]bool{cls: true}
	queue := []string{cls}
	for i := 0; i < len(queue); i++ {
		if b.extBase[queue[i]] {
			return "", outExternal
		}
		for _, base := range b.bases[queue[i]] {
			if !seen[base] {
				seen[base] = true
				queue = append(queue, base)
			}
		}
	}
	return "", outUnresolved
}

// resolveType resolves a type expression written in scope def to a class.
func (b *builder) resolveType(fb *fileBuild, family, typ string, def int32, depth int) (string, outcome) {
	t := strings.TrimLeft(strings.TrimSpace(typ), "*&")
	if i := strings.IndexAny(t, "[(<"); i > 0 {
		t = t[:i]
	}
	obj, name := "", t
	if i := strings.LastIndex(t, "."); i > 0 {
		obj, name = t[:i], t[i+1:]
	}
	if t == "" || strings.ContainsAny(t[:1], "\"'[{`") {
		return "", outBuiltin // a literal: list, dict, str…
	}
	id, out := b.resolveRef(fb, family, refRec{Kind: refUse, Name: name, Object: obj, Def: def}, depth+1)
	if out == outResolved {
		n := b.nodeByID[id]
		if n != nil && (n.Kind == KindFunction || n.Kind == KindMethod) {
			// A call result: the function's recorded result type.
			if loc, ok := b.defLoc[id]; ok && loc.fb.hints != nil {
				if ts := loc.fb.hints[hintKey{scope: loc.idx, name: returnHint}]; len(ts) == 1 && depth < 4 {
					return b.resolveType(loc.fb, family, ts[0], loc.idx, depth+1)
				}
			}
			return "", outUnresolved
		}
		if n == nil || n.Kind != KindClass {
			return "", outUnresolved
		}
	}
	if out == outBuiltin {
		out = outExternal
	}
	return id, out
}

func (b *builder) resolveRef(fb *fileBuild, family string, r refRec, depth int) (string, outcome) {
	if depth > 4 {
		return "", outUnresolved
	}
	if r.Object != "" {
		if typ, scope, ok := fb.hintFor(r.Object, r.Def); ok {
			cls, out := b.resolveType(fb, family, typ, scope, depth)
			if out != outResolved {
				return "", out
			}
			return b.memberOutcome(cls, r.Name, false)
		}
		if c := r.Object[0]; c == '"' || c == '\'' || c == '[' || c == '{' || c == '`' {
			return "", outBuiltin // a method of a literal
		}
		if strings.HasSuffix(r.Object, "()") && isDottedIdent(r.Object[:len(r.Object)-2]) && r.Object != "super()" {
			// Foo().method(): the constructor's class, or a function's result type.
			cls, out := b.resolveType(fb, family, r.Object[:len(r.Object)-2], r.Def, depth)
			if out != outResolved {
				return "", out
			}
			return b.memberOutcome(cls, r.Name, false)
		}
	}
	if r.Object == "" {
		bd, ok := fb.lookupName(r.Name, r.Def)
		if !ok {
			if fb.lang.builtins[r.Name] {
				return "", outBuiltin
			}
			return "", outUnresolved
		}
		switch bd.kind {
		case bDef:
			return bd.id, outResolved
		case bExternal:
			return "", outExternal
		}
		return "", outUnresolved
	}
	obj := r.Object
	if containsStr(fb.lang.selfNames, obj) || (r.Def >= 0 && fb.fd.Defs[r.Def].Receiver != "" && obj == goReceiverVar(fb, r.Def)) {
		cls, ok := b.enclosingClass(fb, r.Def)
		if !ok {
			return "", outUnresolved
		}
		return b.memberOutcome(cls, r.Name, false)
	}
	if obj == "super()" || strings.HasPrefix(obj, "super(") {
		cls, ok := b.enclosingClass(fb, r.Def)
		if !ok {
			return "", outUnresolved
		}
		return b.memberOutcome(cls, r.Name, true)
	}
	if !isDottedIdent(obj) {
		return "", outUnresolved
	}
	segs := strings.Split(obj, ".")
	bd, ok := fb.lookupName(segs[0], r.Def)
	if !ok {
		if fb.lang.builtins[segs[0]] {
			return "", outBuiltin
		}
		return "", outUnresolved
	}
	switch bd.kind {
	case bExternal:
		return "", outExternal
	case bDef:
		if len(segs) == 1 {
			if n := b.nodeByID[bd.id]; n != nil && n.Kind == KindClass {
				return b.memberOutcome(bd.id, r.Name, false)
			}
		}
		return "", outUnresolved
	case bModule:
		key := bd.mod
		for i, s := range segs[1:] {
			next := key + "." + s
			if _, ok := b.modules[modKey(family, next)]; ok {
				key = next
				continue
			}
			last := i == len(segs)-2
			// A class in the module, then a member of it.
			if cid, ok := b.top[modKey(family, key)][s]; ok && last {
				if n := b.nodeByID[cid]; n != nil && n.Kind == KindClass {
					return b.memberOutcome(cid, r.Name, false)
				}
			}
			// A name the module imports (os.path, a re-exported class).
			if mb, ok := b.moduleScope(family, key, s); ok {
				switch {
				case mb.kind == bModule:
					key = mb.mod
					continue
				case mb.kind == bExternal:
					return "", outExternal
				case mb.kind == bDef && last:
					if n := b.nodeByID[mb.id]; n != nil && n.Kind == KindClass {
						return b.memberOutcome(mb.id, r.Name, false)
					}
				}
			}
			return "", outUnresolved
		}
		if id, ok := b.top[modKey(family, key)][r.Name]; ok {
			return id, outResolved
		}
		if mb, ok := b.moduleScope(family, key, r.Name); ok {
			switch mb.kind {
			case bDef:
				return mb.id, outResolved
			case bExternal:
				return "", outExternal
			}
		}
		if _, ok := b.modules[modKey(family, key)]; !ok {
			// e.g. "import os.path" binds "os" which is not in the project.
			return "", outExternal
		}
		return "", outUnresolved
	}
	return "", outUnresolved
}

// moduleScope looks name up among the names a module binds by importing
// them (its scope is built before references are resolved).
func (b *builder) moduleScope(family, key, name string) (binding, bool) {
	fs := b.modules[modKey(family, key)]
	if len(fs) == 0 || fs[0].scopeState != 2 {
		return binding{}, false
	}
	bd, ok := fs[0].scopeLookup(name)
	return bd, ok && bd.kind != bLocal
}

// goReceiverVar returns the receiver variable name of a Go method def (or of
// the method enclosing def), stored after the receiver type as "Type var".
func goReceiverVar(fb *fileBuild, def int32) string {
	for d := def; d >= 0; d = fb.fd.Defs[d].Parent {
		if fb.fd.Defs[d].Receiver != "" {
			return fb.fd.Defs[d].SelfVar
		}
	}
	return ""
}
