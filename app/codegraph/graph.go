package codegraph

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Graph is an immutable snapshot of a project's code graph. All methods are
// safe for concurrent use; returned nodes must not be modified.
type Graph struct {
	root     string
	nodes    []*Node            // files (each followed by its definitions in source order), then packages
	byID     map[string]int32   // node ID → its position in nodes
	edges    []Edge             // every edge, in segments (graph_overlay.go); nil when ov is set
	ov       *edgeOverlay       // a base graph with some edge segments and map entries replaced; the maps below are then nil (graph_overlay.go)
	byFile   map[string][]*Node // definitions of a file, in source order (file node excluded)
	fileNode map[string]*Node
	children map[string][]*Node
	envNames map[string][]string // node ID → environment variables it reads
	envVals  map[string]string   // from the project's .env
	imports  map[string][]importSpan
	globals  map[string][]globalRec // module-level variables per file
	stats    Stats

	idxOnce sync.Once
	adj     *adjacency // built on first use of Out, In and the walks over them

	classOnce sync.Once
	classes   []uint32 // byteClasses of every node's name, made on the first search (search_filter.go)
}

// adjacency lists every node's edges in compressed sparse rows: the edges
// leaving node i (its position in Graph.nodes) are the indexes
// outEdges[outOff[i]:outOff[i+1]] into Graph.edges, in edge order; the same
// for entering edges. Two int32 per node and per edge and direction, where
// a map of slices per node cost several times that.
type adjacency struct {
	outOff, outEdges []int32
	inOff, inEdges   []int32
	// Edges whose endpoint is not a node of the graph (none in graphs the
	// builder makes), by that endpoint's ID, so Out and In still list them.
	extraOut, extraIn map[string][]int32
}

// importSpan is an import statement of a file that names something outside
// the project; slices copy these so the sliced code can run.
type importSpan struct {
	start, end uint32
	external   bool
}

// Stats summarises a graph.
type Stats struct {
	Files            int              `json:"files"`
	FilesByLanguage  map[string]int   `json:"files_by_language"`
	Lines            int              `json:"lines"`
	Bytes            int64            `json:"bytes"`
	NodesByKind      map[Kind]int     `json:"nodes_by_kind"`
	EdgesByKind      map[EdgeKind]int `json:"edges_by_kind"`
	Nodes            int              `json:"nodes"`
	Edges            int              `json:"edges"`
	Resolved         int              `json:"resolved_refs"`   // references bound to a node
	External         int              `json:"external_refs"`   // references into code outside the project
	Unresolved       int              `json:"unresolved_refs"` // references that could not be bound
	UnresolvedByKind map[string]int   `json:"unresolved_by_kind"`
	UnresolvedSample []UnresolvedRef  `json:"unresolved_sample,omitempty"`
}

// UnresolvedRef is one reference that could not be bound to a definition.
type UnresolvedRef struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Kind string `json:"kind"` // call, inherit, import
	Name string `json:"name"`
}

// Match is a fuzzy search hit.
type Match struct {
	Node  *Node
	Score float64
}

// Ranked is a node with its importance score.
type Ranked struct {
	Node  *Node
	Score float64
}

// Slice is a runnable slice: the source of a target plus everything it needs.
type Slice struct {
	Target string            `json:"target"`
	Nodes  []*Node           `json:"nodes"` // dependency order: dependencies first, target last
	Code   string            `json:"code"`
	Env    map[string]string `json:"env"` // names read from the environment → value in .env ("" if absent)
}

// Root returns the project root (absolute).
func (g *Graph) Root() string { return g.root }

// Node returns the node with the given ID.
func (g *Graph) Node(id string) (*Node, bool) {
	i, ok := g.byID[id]
	if !ok {
		return nil, false
	}
	return g.nodes[i], true
}

// nodePositions maps each node's ID to its position in nodes (Graph.byID);
// for code that makes a Graph from a node list it already has.
func nodePositions(nodes []*Node) map[string]int32 {
	m := make(map[string]int32, len(nodes))
	for i, n := range nodes {
		m[n.ID] = int32(i)
	}
	return m
}

// node returns the node with the given ID, or nil.
func (g *Graph) node(id string) *Node {
	if i, ok := g.byID[id]; ok {
		return g.nodes[i]
	}
	return nil
}

// Nodes returns all nodes: each file followed by its definitions in source
// order, then external packages. The slice must not be modified.
func (g *Graph) Nodes() []*Node { return g.nodes }

// Edges returns all edges. The slice must not be modified. A graph made by
// an update holds its edges as a previous graph's plus the changed files'
// (graph_overlay.go); the first call makes the flat list (a copy of every
// edge), later calls return it.
func (g *Graph) Edges() []Edge { return g.flatGraph().edges }

// Stats returns counts describing the graph.
func (g *Graph) Stats() Stats { return g.stats }

func (g *Graph) index() {
	if g.ov != nil {
		if src, f := g.ov.view(); f != nil {
			f.index()
		} else {
			src.base.index()
		}
		return
	}
	g.idxOnce.Do(func() { g.adj = buildAdjacency(g.nodes, g.byID, g.edges) })
}

// buildAdjacency makes the compressed rows of edges (see adjacency) from
// the edges' string endpoints, looked up once each.
func buildAdjacency(nodes []*Node, byID map[string]int32, edges []Edge) *adjacency {
	pos := func(id string) int32 {
		if i, ok := byID[id]; ok {
			return i
		}
		return -1
	}
	from := make([]int32, len(edges))
	to := make([]int32, len(edges))
	for i, e := range edges {
		from[i], to[i] = pos(e.From), pos(e.To)
	}
	return adjacencyFromEnds(len(nodes), edges, from, to)
}

// adjacencyFromEnds makes the compressed rows of edges from each edge's
// endpoint positions in the node list (-1: not a node; such edges are kept
// by ID in extraOut/extraIn): a counting pass, prefix sums, then a pass
// placing each edge index. The positions must be canonical (Graph.byID's).
func adjacencyFromEnds(n int, edges []Edge, from, to []int32) *adjacency {
	a := &adjacency{
		outOff: make([]int32, n+2), inOff: make([]int32, n+2),
		outEdges: make([]int32, 0, len(edges)), inEdges: make([]int32, 0, len(edges)),
	}
	for i, e := range edges {
		f, t := from[i], to[i]
		if f >= 0 {
			a.outOff[f+2]++
		} else {
			if a.extraOut == nil {
				a.extraOut = map[string][]int32{}
			}
			a.extraOut[e.From] = append(a.extraOut[e.From], int32(i))
		}
		if t >= 0 {
			a.inOff[t+2]++
		} else {
			if a.extraIn == nil {
				a.extraIn = map[string][]int32{}
			}
			a.extraIn[e.To] = append(a.extraIn[e.To], int32(i))
		}
	}
	// outOff[i+2] holds node i's count; after the sums outOff[i+1] is where
	// node i's row starts, and placing its edges advances it to its end,
	// which is node i+1's start.
	for i := 2; i < n+2; i++ {
		a.outOff[i] += a.outOff[i-1]
		a.inOff[i] += a.inOff[i-1]
	}
	a.outEdges = a.outEdges[:a.outOff[n+1]]
	a.inEdges = a.inEdges[:a.inOff[n+1]]
	for i := range edges {
		if f := from[i]; f >= 0 {
			a.outEdges[a.outOff[f+1]] = int32(i)
			a.outOff[f+1]++
		}
		if t := to[i]; t >= 0 {
			a.inEdges[a.inOff[t+1]] = int32(i)
			a.inOff[t+1]++
		}
	}
	a.outOff = a.outOff[:n+1]
	a.inOff = a.inOff[:n+1]
	return a
}

// outIdx returns the indexes of the edges leaving id, in edge order.
func (g *Graph) outIdx(id string) []int32 {
	if g.ov != nil {
		return g.overlayIdx(id, true)
	}
	g.index()
	a := g.adj
	if i, ok := g.byID[id]; ok {
		return a.outEdges[a.outOff[i]:a.outOff[i+1]]
	}
	return a.extraOut[id]
}

// inIdx returns the indexes of the edges entering id, in edge order.
func (g *Graph) inIdx(id string) []int32 {
	if g.ov != nil {
		return g.overlayIdx(id, false)
	}
	g.index()
	a := g.adj
	if i, ok := g.byID[id]; ok {
		return a.inEdges[a.inOff[i]:a.inOff[i+1]]
	}
	return a.extraIn[id]
}

func hasKind(kinds []EdgeKind, k EdgeKind) bool {
	if len(kinds) == 0 {
		return true
	}
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Out returns the edges leaving id, optionally only of the given kinds.
func (g *Graph) Out(id string, kinds ...EdgeKind) []Edge {
	var r []Edge
	for _, i := range g.outIdx(id) {
		if e := g.edgeAt(i); hasKind(kinds, e.Kind) {
			r = append(r, e)
		}
	}
	return r
}

// In returns the edges entering id, optionally only of the given kinds.
func (g *Graph) In(id string, kinds ...EdgeKind) []Edge {
	var r []Edge
	for _, i := range g.inIdx(id) {
		if e := g.edgeAt(i); hasKind(kinds, e.Kind) {
			r = append(r, e)
		}
	}
	return r
}

// Children returns the nodes id contains directly, in source order.
func (g *Graph) Children(id string) []*Node { return g.kidsOf(id) }

// FileNode returns the node of a file by its slash-separated relative path.
func (g *Graph) FileNode(relPath string) (*Node, bool) {
	n, ok := g.fileNodeOf(filepath.ToSlash(relPath))
	return n, ok
}

// NodesInFile returns the definitions in a file, in source order.
func (g *Graph) NodesInFile(relPath string) []*Node { return g.defsOf(filepath.ToSlash(relPath)) }

// NodeAt returns the innermost definition of relPath spanning line (1-based),
// or the file node when no definition does.
func (g *Graph) NodeAt(relPath string, line int) (*Node, bool) {
	relPath = filepath.ToSlash(relPath)
	var best *Node
	for _, n := range g.defsOf(relPath) {
		if n.StartLine <= line && line <= n.EndLine {
			if best == nil || n.EndByte-n.StartByte <= best.EndByte-best.StartByte {
				best = n
			}
		}
	}
	if best != nil {
		return best, true
	}
	f, ok := g.fileNodeOf(relPath)
	if ok && (line < 1 || line > max(f.EndLine, 1)) {
		return nil, false
	}
	return f, ok
}

// depKinds are the edges along which "X needs Y". A call dispatched through
// an interface or a base-class method needs each implementation that can
// receive it; a type that implements an interface needs the interface.
var depKinds = []EdgeKind{EdgeCalls, EdgeUses, EdgeInherits, EdgeImports, EdgeDispatches, EdgeImplements}

// descendants returns id and every node it contains, transitively.
func (g *Graph) descendants(id string) []string {
	out := []string{id}
	for i := 0; i < len(out); i++ {
		for _, c := range g.kidsOf(out[i]) {
			out = append(out, c.ID)
		}
	}
	return out
}

// Deps returns everything id needs, transitively: the targets of calls, uses,
// inherits and imports edges leaving id or anything it contains; reaching a
// method also brings in its class, since a method's code runs only with it.
// The result excludes id and its descendants and is sorted by path and line.
func (g *Graph) Deps(id string) []*Node {
	return g.closure(id, func(cur string, reach func(string) bool) {
		for _, e := range g.Out(cur, depKinds...) {
			g.reachAll(e.To, reach)
			if n := g.node(e.To); n != nil && n.Kind == KindMethod && n.Parent != "" {
				if p := g.node(n.Parent); p != nil && p.Kind == KindClass {
					g.reachAll(p.ID, reach)
				}
			}
		}
	})
}

// RDeps returns everything that uses id, transitively: sources of calls,
// uses, inherits and imports edges into id or anything it contains. Sorted by
// path and line; id and its descendants excluded.
func (g *Graph) RDeps(id string) []*Node {
	return g.closure(id, func(cur string, reach func(string) bool) {
		for _, e := range g.In(cur, depKinds...) {
			reach(e.From)
		}
	})
}

// reachAll hands id and everything it contains to reach (a dependency on a
// class needs its methods too).
func (g *Graph) reachAll(id string, reach func(string) bool) {
	if !reach(id) {
		return // reached before, with everything it contains
	}
	for _, d := range g.descendants(id)[1:] {
		reach(d)
	}
}

// closure walks breadth-first from id and its descendants, letting step
// name the next nodes of each visited one (reach reports whether a node is
// new), and returns what was reached
// beyond id and its descendants, sorted by path and line.
func (g *Graph) closure(id string, step func(cur string, reach func(string) bool)) []*Node {
	if _, ok := g.byID[id]; !ok {
		return nil
	}
	g.index()
	start := g.descendants(id)
	seen := make(map[string]bool, len(start))
	reached := reachFrom(start, func(n string) bool {
		if seen[n] {
			return false
		}
		seen[n] = true
		return true
	}, step)
	r := make([]*Node, 0, len(reached))
	for _, q := range reached {
		r = append(r, g.node(q))
	}
	sortNodes(r)
	return r
}

// reachFrom walks breadth-first from the start nodes: step names the next
// nodes of each visited one through reach, which reports whether a node is
// new (mark records it and says whether it was unmarked). It returns the
// nodes reached beyond start, in the order they were reached. Graph and
// Reader share it over string IDs and positions.
func reachFrom[K any](start []K, mark func(K) bool, step func(cur K, reach func(K) bool)) []K {
	queue := make([]K, 0, len(start))
	for _, s := range start {
		if mark(s) {
			queue = append(queue, s)
		}
	}
	self := len(queue)
	reach := func(n K) bool {
		if !mark(n) {
			return false
		}
		queue = append(queue, n)
		return true
	}
	for i := 0; i < len(queue); i++ {
		step(queue[i], reach)
	}
	return queue[self:]
}

// Path returns the edges of a shortest directed path from one node to
// another (any edge kind), or nil when there is none.
func (g *Graph) Path(from, to string) []Edge {
	if _, ok := g.byID[from]; !ok {
		return nil
	}
	if _, ok := g.byID[to]; !ok || from == to {
		return nil
	}
	g.index()
	prev := map[string]int32{from: -1}
	queue := []string{from}
	for i := 0; i < len(queue); i++ {
		for _, ei := range g.outIdx(queue[i]) {
			e := g.edgeAt(ei)
			if _, ok := prev[e.To]; ok {
				continue
			}
			prev[e.To] = ei
			if e.To == to {
				var path []Edge
				for cur := to; cur != from; {
					pe := g.edgeAt(prev[cur])
					path = append(path, pe)
					cur = pe.From
				}
				for a, b := 0, len(path)-1; a < b; a, b = a+1, b-1 {
					path[a], path[b] = path[b], path[a]
				}
				return path
			}
			queue = append(queue, e.To)
		}
	}
	return nil
}

// Code returns the source text of a node, read from its file by byte range.
// It fails when the file changed size since it was indexed.
func (g *Graph) Code(id string) ([]byte, error) {
	n := g.node(id)
	if n == nil {
		return nil, fmt.Errorf("code: no node %q", id)
	}
	if n.Path == "" {
		return nil, fmt.Errorf("code %s: %s %q has no source", id, n.Kind, n.Name)
	}
	b, err := readProjectFile(filepath.Join(g.root, filepath.FromSlash(n.Path)), maxSourceRead)
	if err != nil {
		return nil, fmt.Errorf("code %s: %w", n.Path, err)
	}
	if n.EndByte > len(b) || n.StartByte > n.EndByte {
		return nil, fmt.Errorf("code %s: file changed since it was indexed (re-index it)", n.Path)
	}
	return b[n.StartByte:n.EndByte], nil
}

// Slice returns the runnable slice of id: the external imports of the files
// involved, then the code of every dependency in dependency order, then id's
// own code, plus the environment variables the code reads with their values
// from the project's .env.
func (g *Graph) Slice(id string) (*Slice, error) {
	target := g.node(id)
	if target == nil {
		return nil, fmt.Errorf("slice: no node %q", id)
	}
	if target.Kind == KindPackage {
		return nil, fmt.Errorf("slice %s: %q is an external package", id, target.Name)
	}
	g.index()
	// A method runs only with its class: slice the class around it.
	unit := target
	for unit.Kind == KindMethod {
		p := g.node(unit.Parent)
		if p == nil || p.Kind != KindClass {
			break
		}
		unit = p
	}
	id = unit.ID
	deps := g.Deps(id)
	// Keep only top-most nodes with code: a method inside an included class
	// comes with the class; packages have no code.
	inSet := map[string]bool{id: true}
	for _, d := range deps {
		inSet[d.ID] = true
	}
	covered := func(n *Node) bool {
		for p := n.Parent; p != ""; {
			if inSet[p] {
				// Covered when the ancestor's code contains it (not so for Go
				// methods, which live outside their type's declaration).
				if pn := g.node(p); pn != nil && pn.Kind != KindFile && pn.Path == n.Path &&
					pn.StartByte <= n.StartByte && n.EndByte <= pn.EndByte {
					return true
				}
			}
			pn := g.node(p)
			if pn == nil {
				break
			}
			p = pn.Parent
		}
		return false
	}
	var units []*Node
	for _, d := range deps {
		if d.Kind == KindPackage || covered(d) {
			continue
		}
		if d.Kind == KindFile && target.Kind != KindFile {
			continue // a dependency on a whole module through an import: its used members are listed
		}
		units = append(units, d)
	}
	order := g.depOrder(units)
	order = append(order, unit)

	var b strings.Builder
	files := map[string][]byte{}
	read := func(p string) ([]byte, error) {
		if src, ok := files[p]; ok {
			return src, nil
		}
		src, err := readProjectFile(filepath.Join(g.root, filepath.FromSlash(p)), maxSourceRead)
		if err != nil {
			return nil, fmt.Errorf("slice %s: %w", p, err)
		}
		files[p] = src
		return src, nil
	}
	// The code of every unit, read by byte range.
	codes := make([][]byte, len(order))
	for i, n := range order {
		src, err := read(n.Path)
		if err != nil {
			return nil, err
		}
		if n.EndByte > len(src) || n.StartByte > n.EndByte {
			return nil, fmt.Errorf("slice %s: file changed since it was indexed (re-index it)", n.Path)
		}
		code := src[n.StartByte:n.EndByte]
		if n.Kind != KindFile {
			// Start at the beginning of the line so indentation stays
			// consistent, when only white space precedes the definition.
			ls := n.StartByte
			for ls > 0 && (src[ls-1] == ' ' || src[ls-1] == '\t') {
				ls--
			}
			if ls > 0 && src[ls-1] != '\n' {
				ls = n.StartByte
			}
			code = dedent(src[ls:n.EndByte])
			if n.Language == "go" && n.Kind == KindClass && !bytes.HasPrefix(code, []byte("type ")) {
				code = append([]byte("type "), code...) // a type spec without its keyword
			}
		}
		codes[i] = code
	}
	// External imports of the files involved.
	seenImp := map[string]bool{}
	var fileOrder []string
	for _, n := range order {
		if n.Kind == KindFile || slices.Contains(fileOrder, n.Path) {
			continue
		}
		fileOrder = append(fileOrder, n.Path)
	}
	for _, p := range fileOrder {
		src := files[p]
		for _, im := range g.importsOf(p) {
			if !im.external || int(im.end) > len(src) || im.start > im.end {
				continue
			}
			line := strings.TrimSpace(string(src[im.start:im.end]))
			if n, _ := g.fileNodeOf(p); n != nil && n.Language == "go" && !strings.HasPrefix(line, "import") {
				line = "import " + line // a spec from an import block
			}
			if !seenImp[line] {
				seenImp[line] = true
				b.WriteString(line)
				b.WriteByte('\n')
			}
		}
	}
	if len(seenImp) > 0 {
		b.WriteByte('\n')
	}
	// Module-level variables the units mention, in source order.
	wroteGlobal := false
	for _, p := range fileOrder {
		src := files[p]
		for _, gl := range g.globalsOf(p) {
			if int(gl.End) > len(src) || gl.Start > gl.End {
				continue
			}
			used := false
			for i, n := range order {
				if n.Path == p && n.Kind != KindFile && mentions(codes[i], gl.Name) {
					used = true
					break
				}
			}
			if used {
				b.Write(src[gl.Start:gl.End])
				b.WriteByte('\n')
				wroteGlobal = true
			}
		}
	}
	if wroteGlobal {
		b.WriteByte('\n')
	}
	for i, n := range order {
		comment := "#"
		if n.Language != "python" && n.Language != "" {
			comment = "//"
		}
		fmt.Fprintf(&b, "%s %s:%d-%d %s\n", comment, n.Path, n.StartLine, n.EndLine, n.QualName)
		b.Write(codes[i])
		b.WriteString("\n\n")
	}
	env := map[string]string{}
	for _, n := range order {
		for _, d := range g.descendants(n.ID) {
			for _, name := range g.envOf(d) {
				env[name] = g.envVals[name]
			}
		}
	}
	return &Slice{Target: target.ID, Nodes: order, Code: b.String(), Env: env}, nil
}

// depOrder orders nodes so that each comes after the nodes it needs (a DFS
// post-order along dependency edges); cycles are broken by source order.
func (g *Graph) depOrder(units []*Node) []*Node {
	unitOf := map[string]string{} // any node in a unit → the unit's ID
	for _, u := range units {
		for _, d := range g.descendants(u.ID) {
			unitOf[d] = u.ID
		}
	}
	state := map[string]int{} // 1 visiting, 2 done
	var out []*Node
	var visit func(u *Node)
	visit = func(u *Node) {
		if state[u.ID] != 0 {
			return
		}
		state[u.ID] = 1
		var next []*Node
		for _, d := range g.descendants(u.ID) {
			for _, e := range g.Out(d, depKinds...) {
				tgt := e.To
				if n := g.node(tgt); n != nil && n.Kind == KindMethod {
					if _, ok := unitOf[tgt]; !ok {
						tgt = n.Parent
					}
				}
				if uid, ok := unitOf[tgt]; ok && uid != u.ID {
					next = append(next, g.node(uid))
				}
			}
		}
		sortNodes(next)
		for _, n := range next {
			visit(n)
		}
		state[u.ID] = 2
		out = append(out, u)
	}
	for _, u := range units {
		visit(u)
	}
	return out
}

// mentions reports whether code contains name as a whole identifier.
func mentions(code []byte, name string) bool {
	isID := func(c byte) bool {
		return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80
	}
	s := string(code)
	for off := 0; ; {
		i := strings.Index(s[off:], name)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(name)
		if (i == 0 || !isID(s[i-1])) && (end == len(s) || !isID(s[end])) {
			return true
		}
		off = i + 1
	}
}

// dedent removes the common leading white space of all non-blank lines.
func dedent(b []byte) []byte {
	lines := strings.Split(string(b), "\n")
	prefix := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if prefix < 0 || n < prefix {
			prefix = n
		}
	}
	if prefix <= 0 {
		return b
	}
	for i, l := range lines {
		if len(l) >= prefix {
			lines[i] = l[prefix:]
		} else {
			lines[i] = strings.TrimLeft(l, " \t")
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// sortNodes orders nodes by path, then position, packages last by name.
func sortNodes(ns []*Node) {
	sort.Slice(ns, func(i, j int) bool {
		a, b := ns[i], ns[j]
		if (a.Path == "") != (b.Path == "") {
			return a.Path != ""
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.StartByte != b.StartByte {
			return a.StartByte < b.StartByte
		}
		if a.Kind != b.Kind {
			return a.Kind == KindFile
		}
		return a.ID < b.ID
	})
}

// elapsed is a small helper for reports.
func elapsed(start time.Time) time.Duration { return time.Since(start) }
