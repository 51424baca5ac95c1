package codegraph

// graphParts is everything a Graph holds, as the persisted graph stores it.
// newGraphFromParts is the one place that knows how Graph keeps it (graph.go
// may change its representation; only this function follows).
type graphParts struct {
	root     string
	nodes    []*Node
	edges    []Edge
	from, to []int32 // per edge: index of its endpoints in nodes, -1 when not a node
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
// index (built from the integer endpoints: one backing array per direction,
// no per-node growth).
func newGraphFromParts(p *graphParts) *Graph {
	g := &Graph{
		root: p.root, nodes: p.nodes, edges: p.edges,
		byID:     make(map[string]*Node, len(p.nodes)),
		children: p.children, byFile: p.byFile, fileNode: p.fileNode,
		envNames: p.envNames, envVals: p.envVals, imports: p.imports, globals: p.globals,
		stats: p.stats,
	}
	for _, n := range p.nodes {
		g.byID[n.ID] = n
	}
	if len(p.from) != len(p.edges) || len(p.to) != len(p.edges) {
		return g // the edge index is then built on first use
	}
	g.idxOnce.Do(func() {
		g.out = csrIndex(p.nodes, p.edges, p.from, func(e Edge) string { return e.From })
		g.in = csrIndex(p.nodes, p.edges, p.to, func(e Edge) string { return e.To })
	})
	return g
}

// csrIndex maps each node ID to the indexes of its edges (in edge order) for
// one direction; end[i] is edge i's endpoint in that direction.
func csrIndex(nodes []*Node, edges []Edge, end []int32, id func(Edge) string) map[string][]int32 {
	// Several nodes may share an ID (then the index is by ID, as Graph.index):
	// count per canonical index, the last node with that ID.
	canon := make([]int32, len(nodes))
	last := make(map[string]int32, len(nodes))
	for i, n := range nodes {
		last[n.ID] = int32(i)
	}
	for i, n := range nodes {
		canon[i] = last[n.ID]
	}
	count := make([]int32, len(nodes)+1)
	for _, x := range end {
		if x >= 0 {
			count[canon[x]+1]++
		}
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	slab := make([]int32, count[len(nodes)])
	fill := append([]int32(nil), count[:len(nodes)]...)
	m := make(map[string][]int32, len(nodes))
	for i, x := range end {
		if x < 0 {
			k := id(edges[i])
			m[k] = append(m[k], int32(i))
			continue
		}
		c := canon[x]
		slab[fill[c]] = int32(i)
		fill[c]++
	}
	for i, n := range nodes {
		if int32(i) != canon[i] {
			continue
		}
		if lo, hi := count[i], count[i+1]; hi > lo {
			if extra := m[n.ID]; extra != nil {
				// An ID that is also a non-node endpoint cannot happen (it
				// would be a node); merge in edge order to be safe.
				merged := append(append([]int32(nil), slab[lo:hi:hi]...), extra...)
				sortInt32(merged)
				m[n.ID] = merged
				continue
			}
			m[n.ID] = slab[lo:hi:hi]
		}
	}
	return m
}

func sortInt32(s []int32) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
