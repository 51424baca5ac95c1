package codegraph

// graphParts is everything a Graph holds, as the persisted graph stores it.
// newGraphFromParts is the one place that knows how Graph keeps it (graph.go
// may change its representation; only this function follows).
type graphParts struct {
	root     string
	nodes    []*Node
	edges    []Edge
	from, to []int32    // per edge: index of its endpoints in nodes, -1 when not a node
	adj      *adjacency // the edge index as persisted (canonical positions); nil: built from from/to
	children map[string][]*Node
	byFile   map[string][]*Node
	fileNode map[string]*Node
	envNames map[string][]string
	envVals  map[string]string
	imports  map[string][]importSpan
	globals  map[string][]globalRec
	stats    Stats
}

// newGraphFromParts builds a Graph from loaded parts, including its edge
// index, made from the integer endpoints without looking up any ID.
func newGraphFromParts(p *graphParts) *Graph {
	g := &Graph{
		root: p.root, nodes: p.nodes, edges: p.edges,
		byID:     nodePositions(p.nodes),
		children: p.children, byFile: p.byFile, fileNode: p.fileNode,
		envNames: p.envNames, envVals: p.envVals, imports: p.imports, globals: p.globals,
		stats: p.stats,
	}
	if p.adj != nil {
		g.idxOnce.Do(func() { g.adj = p.adj })
		return g
	}
	if len(p.from) != len(p.edges) || len(p.to) != len(p.edges) {
		return g // the edge index is then built on first use
	}
	// Several nodes may share an ID; the index is by ID, at the position
	// byID keeps for it (the last node with that ID).
	pos := make([]int32, len(p.nodes))
	for i, n := range p.nodes {
		pos[i] = g.byID[n.ID]
	}
	canon := func(x int32) int32 {
		if x < 0 || int(x) >= len(pos) {
			return -1
		}
		return pos[x]
	}
	from := make([]int32, len(p.edges))
	to := make([]int32, len(p.edges))
	for i := range p.edges {
		from[i], to[i] = canon(p.from[i]), canon(p.to[i])
	}
	g.idxOnce.Do(func() { g.adj = adjacencyFromEnds(len(p.nodes), p.edges, from, to) })
	return g
}
