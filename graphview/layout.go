package graphview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-graphviz"

	"codeloom/app/codegraph"
)

// Point is a position in layout space: points (1/72 inch), y growing downward,
// origin at the top-left corner of the drawing.
type Point struct{ X, Y float64 }

// NodeBox is a laid-out node: centre and size in points.
type NodeBox struct {
	ID         string
	X, Y, W, H float64
}

// EdgePath is a laid-out edge: a polyline that follows Graphviz's spline and
// the tip of its arrowhead.
type EdgePath struct {
	From, To string
	Kind     codegraph.EdgeKind
	Count    int     // code graph edges it stands for (see ViewEdge.Count)
	Points   []Point // flattened spline, from the tail to where the arrowhead starts
	Tip      *Point  // arrowhead tip, nil when Graphviz drew none
}

// ClusterBox is a laid-out cluster (a folder or a file).
type ClusterBox struct {
	Label          string
	X0, Y0, X1, Y1 float64
}

// Layout is the geometry of one view.
type Layout struct {
	Key           string
	Width, Height float64
	Nodes         map[string]NodeBox
	Edges         []EdgePath
	Clusters      []ClusterBox
	// Fallback is set when the grid layout stood in for Graphviz (the view
	// was too big, or Graphviz ran past its time budget).
	Fallback bool
}

// Engine runs Graphviz's dot layout on DOT text and returns Graphviz's JSON
// output (-Tjson). Implementations: GraphvizEngine (in process) and
// NativeEngine (the dot binary, for comparison).
type Engine interface {
	LayoutJSON(ctx context.Context, dot []byte) ([]byte, error)
	Render(ctx context.Context, dot []byte, format string, w io.Writer) error
}

// GraphvizEngine lays out with github.com/goccy/go-graphviz (Graphviz compiled
// to WebAssembly, run by wazero). Its WebAssembly module is process-wide and
// not safe for concurrent use, so the engine serialises calls; create one per
// process and share it. A call already inside Graphviz cannot be interrupted:
// cancellation is checked before and after it.
type GraphvizEngine struct {
	mu sync.Mutex
	gv *graphviz.Graphviz
}

// NewGraphvizEngine starts the in-process Graphviz. go-graphviz keeps its
// compiled WebAssembly module in a cache directory under os.TempDir()
// ("go-graphviz"), so later starts are fast.
func NewGraphvizEngine(ctx context.Context) (*GraphvizEngine, error) {
	gv, err := graphviz.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("start graphviz: %w", err)
	}
	return &GraphvizEngine{gv: gv}, nil
}

// Close releases the Graphviz context.
func (e *GraphvizEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gv == nil {
		return nil
	}
	err := e.gv.Close()
	e.gv = nil
	return err
}

// LayoutJSON implements Engine.
func (e *GraphvizEngine) LayoutJSON(ctx context.Context, dot []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := e.Render(ctx, dot, "json", &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Render implements Engine: lays dot out and writes it in format (json, svg, png, dot).
func (e *GraphvizEngine) Render(ctx context.Context, dot []byte, format string, w io.Writer) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.gv == nil {
		return errors.New("graphviz engine is closed")
	}
	g, err := graphviz.ParseBytes(dot)
	if err != nil {
		return fmt.Errorf("graphviz parse: %w", err)
	}
	defer g.Close()
	if err := e.gv.Render(ctx, g, graphviz.Format(format), w); err != nil {
		return fmt.Errorf("graphviz render %s: %w", format, err)
	}
	return ctx.Err()
}

// NativeEngine runs the native Graphviz `dot` binary as a subprocess. It is
// used to compare speed with the in-process engine.
type NativeEngine struct {
	Path string // the dot binary; "dot" when empty
}

// LayoutJSON implements Engine.
func (e NativeEngine) LayoutJSON(ctx context.Context, dot []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := e.Render(ctx, dot, "json", &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Render implements Engine.
func (e NativeEngine) Render(ctx context.Context, dot []byte, format string, w io.Writer) error {
	bin := e.Path
	if bin == "" {
		bin = "dot"
	}
	cmd := exec.CommandContext(ctx, bin, "-T"+format)
	cmd.Stdin = bytes.NewReader(dot)
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s -T%s: %w: %s", bin, format, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// Layouter lays views out with an Engine and caches the results by view key.
// It is safe for concurrent use.
type Layouter struct {
	engine Engine
	mu     sync.Mutex
	cache  map[string]*Layout
	order  []string // least recently used first
	limit  int
	// Budget is how long a layout may wait for Graphviz before the grid
	// layout stands in (Graphviz keeps running and caches its result for
	// the next time). 0 means DefaultLayoutBudget; negative waits forever.
	Budget time.Duration
}

// DefaultLayoutBudget is how long a view waits for Graphviz.
const DefaultLayoutBudget = 1500 * time.Millisecond

// NewLayouter returns a Layouter that keeps up to 64 layouts.
func NewLayouter(e Engine) *Layouter {
	return &Layouter{engine: e, cache: map[string]*Layout{}, limit: 64}
}

// Engine returns the layout engine (for export).
func (l *Layouter) Engine() Engine { return l.engine }

// Cached returns the cached layout of v, if any.
func (l *Layouter) Cached(v *View) (*Layout, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lay, ok := l.cache[v.Key()]
	return lay, ok
}

// Layout lays v out, or returns the cached layout of an identical view.
func (l *Layouter) Layout(ctx context.Context, v *View) (*Layout, error) {
	key := v.Key()
	l.mu.Lock()
	if lay, ok := l.cache[key]; ok {
		l.touch(key)
		l.mu.Unlock()
		return lay, nil
	}
	l.mu.Unlock()
	if v.Layout == LayoutSymbol {
		lay := SymbolLayout(v)
		lay.Key = key
		l.store(key, lay)
		return lay, nil
	}
	if v.Layout == LayoutGrid {
		lay := GridLayout(v)
		lay.Key = key
		l.store(key, lay)
		return lay, nil
	}
	if len(v.Nodes) > MaxGraphvizNodes || len(v.Edges) > MaxGraphvizEdges {
		lay := GridLayout(v)
		lay.Key, lay.Fallback = key, true
		l.store(key, lay)
		return lay, nil
	}
	type result struct {
		lay *Layout
		err error
	}
	done := make(chan result, 1)
	go func() {
		lay, err := l.graphviz(ctx, v, key)
		if err == nil {
			l.store(key, lay)
		}
		done <- result{lay, err}
	}()
	budget := l.Budget
	if budget == 0 {
		budget = DefaultLayoutBudget
	}
	var timeout <-chan time.Time
	if budget > 0 {
		t := time.NewTimer(budget)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case r := <-done:
		return r.lay, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timeout:
		slog.Warn("graphviz over its time budget: grid layout instead", "view", v.Title, "nodes", len(v.Nodes), "edges", len(v.Edges), "budget", budget)
		lay := GridLayout(v)
		lay.Key, lay.Fallback = key, true
		return lay, nil
	}
}

// Prepare lays out and caches a view whose layout is computed in Go
// (symbol and grid views), so that GraphView.ShowView then draws it at
// once instead of laying it out on another goroutine and coming back; a
// Graphviz view is left alone. Safe to call from any goroutine.
func (l *Layouter) Prepare(v *View) {
	if v == nil || (v.Layout != LayoutSymbol && v.Layout != LayoutGrid) {
		return
	}
	if _, err := l.Layout(context.Background(), v); err != nil {
		slog.Warn("layout", "view", v.Title, "err", err)
	}
}

// graphviz lays v out with the engine.
func (l *Layouter) graphviz(ctx context.Context, v *View, key string) (*Layout, error) {
	dot, ids := DOT(v)
	out, err := l.engine.LayoutJSON(ctx, dot)
	if err != nil {
		return nil, fmt.Errorf("layout %q (%d nodes): %w", v.Title, len(v.Nodes), err)
	}
	lay, err := ParseJSON(out, ids, v)
	if err != nil {
		return nil, fmt.Errorf("layout %q: %w", v.Title, err)
	}
	lay.Key = key
	return lay, nil
}

// store caches lay under key.
func (l *Layouter) store(key string, lay *Layout) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.cache[key]; !ok {
		l.cache[key] = lay
		l.order = append(l.order, key)
		for len(l.order) > l.limit {
			delete(l.cache, l.order[0])
			l.order = l.order[1:]
		}
	}
}

func (l *Layouter) touch(key string) {
	for i, k := range l.order {
		if k == key {
			l.order = append(append(l.order[:i:i], l.order[i+1:]...), key)
			return
		}
	}
}

// Export renders v with Graphviz in format "svg" or "png" and writes it to w.
func (l *Layouter) Export(ctx context.Context, v *View, format string, w io.Writer) error {
	switch format {
	case "svg", "png":
	default:
		return fmt.Errorf("export: unsupported format %q (want svg or png)", format)
	}
	dot, _ := DOTStyled(v)
	return l.engine.Render(ctx, dot, format, w)
}

// Text metrics used for node sizes: nodes are fixed-size so the in-process
// and native engines agree and the drawn label always fits.
const (
	fontSize    = 10.0 // points
	charWidthIn = 0.085
	nodeHeight  = 0.34
)

func nodeWidth(label string) float64 {
	w := float64(len([]rune(label)))*charWidthIn + 0.3
	return math.Max(w, 0.6)
}

func quote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	s = strings.ReplaceAll(s, "\n", `\n`)
	return `"` + s + `"`
}

// DOT writes v as DOT text for layout. Node names are n0, n1, …; ids maps
// them back to view node IDs.
func DOT(v *View) ([]byte, map[string]string) { return dotText(v, false) }

// DOTStyled is DOT with colours, for export.
func DOTStyled(v *View) ([]byte, map[string]string) { return dotText(v, true) }

func dotText(v *View, styled bool) ([]byte, map[string]string) {
	var b bytes.Buffer
	ids := make(map[string]string, len(v.Nodes))
	names := make(map[string]string, len(v.Nodes))
	for i, n := range v.Nodes {
		name := "n" + strconv.Itoa(i)
		ids[name] = n.ID
		names[n.ID] = name
	}
	b.WriteString("digraph G {\n graph [rankdir=LR, nodesep=0.18, ranksep=0.6, fontsize=9, fontname=\"Helvetica\"];\n")
	b.WriteString(" node [shape=box, fixedsize=true, fontsize=10, fontname=\"Helvetica\"];\n edge [arrowsize=0.6];\n")
	clusters := map[string][]int{}
	var clusterNames []string
	for i, n := range v.Nodes {
		if n.Cluster == "" {
			continue
		}
		if _, ok := clusters[n.Cluster]; !ok {
			clusterNames = append(clusterNames, n.Cluster)
		}
		clusters[n.Cluster] = append(clusters[n.Cluster], i)
	}
	sort.Strings(clusterNames)
	writeNode := func(i int, indent string) {
		n := v.Nodes[i]
		fmt.Fprintf(&b, "%sn%d [label=%s, width=%.3f, height=%.2f", indent, i, quote(n.Label), nodeWidth(n.Label), nodeHeight)
		if styled {
			fill, line := KindColorHex(n)
			fmt.Fprintf(&b, ", style=\"rounded,filled\", fillcolor=%q, color=%q", fill, line)
		}
		b.WriteString("];\n")
	}
	for ci, c := range clusterNames {
		fmt.Fprintf(&b, " subgraph cluster_%d {\n  label=%s;\n", ci, quote(c))
		if styled {
			b.WriteString("  style=\"rounded\"; color=\"#9aa5b1\";\n")
		}
		for _, i := range clusters[c] {
			writeNode(i, "  ")
		}
		b.WriteString(" }\n")
	}
	for i, n := range v.Nodes {
		if n.Cluster == "" {
			writeNode(i, " ")
		}
	}
	for _, e := range v.Edges {
		from, ok1 := names[e.From]
		to, ok2 := names[e.To]
		if !ok1 || !ok2 {
			continue
		}
		fmt.Fprintf(&b, " %s -> %s", from, to)
		attrs := []string{}
		if e.Kind == codegraph.EdgeContains {
			attrs = append(attrs, "weight=4")
		} else if e.Count > 1 {
			attrs = append(attrs, fmt.Sprintf("weight=%d", 1+int(math.Log2(float64(e.Count)))))
		}
		if styled {
			attrs = append(attrs, fmt.Sprintf("color=%q", EdgeColorHex(e.Kind)))
			if e.Count > 1 {
				attrs = append(attrs, fmt.Sprintf("penwidth=%.1f, xlabel=\"%d\", fontsize=9", EdgeWidth(e.Count), e.Count))
			}
			if Dashed(e.Kind) {
				attrs = append(attrs, "style=dashed")
			}
		}
		if len(attrs) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(attrs, ", "))
		}
		b.WriteString(";\n")
	}
	b.WriteString("}\n")
	return b.Bytes(), ids
}

// jsonGraph is the part of Graphviz's -Tjson output that a layout needs.
type jsonGraph struct {
	BB      string `json:"bb"`
	Objects []struct {
		GVID   int     `json:"_gvid"`
		Name   string  `json:"name"`
		Label  string  `json:"label"`
		Pos    string  `json:"pos"`
		Width  string  `json:"width"`
		Height string  `json:"height"`
		BB     string  `json:"bb"`
		Nodes  []int   `json:"nodes"`
		Sub    []int   `json:"subgraphs"`
		Edges  []int   `json:"edges"`
		Extra  float64 `json:"-"`
	} `json:"objects"`
	Edges []struct {
		Tail int    `json:"tail"`
		Head int    `json:"head"`
		Pos  string `json:"pos"`
	} `json:"edges"`
}

func parseFloats(s string) ([]float64, error) {
	parts := strings.Split(s, ",")
	out := make([]float64, 0, len(parts))
	for _, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q: %w", p, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseJSON reads Graphviz -Tjson output of DOT(v) into a Layout in y-down
// coordinates. ids maps DOT node names to view IDs.
func ParseJSON(data []byte, ids map[string]string, v *View) (*Layout, error) {
	var g jsonGraph
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("parse graphviz json: %w", err)
	}
	bb, err := parseFloats(g.BB)
	if err != nil || len(bb) != 4 {
		return nil, fmt.Errorf("parse graphviz json: bad bounding box %q", g.BB)
	}
	height := bb[3]
	flip := func(x, y float64) Point { return Point{X: x - bb[0], Y: height - y} }
	lay := &Layout{Width: bb[2] - bb[0], Height: bb[3] - bb[1], Nodes: map[string]NodeBox{}}
	byGVID := map[int]string{}
	for _, o := range g.Objects {
		if o.Nodes != nil || o.BB != "" {
			cb, err := parseFloats(o.BB)
			if err != nil || len(cb) != 4 {
				continue
			}
			p0, p1 := flip(cb[0], cb[3]), flip(cb[2], cb[1])
			lay.Clusters = append(lay.Clusters, ClusterBox{Label: o.Label, X0: p0.X, Y0: p0.Y, X1: p1.X, Y1: p1.Y})
			continue
		}
		id, ok := ids[o.Name]
		if !ok {
			continue
		}
		byGVID[o.GVID] = id
		pos, err := parseFloats(o.Pos)
		if err != nil || len(pos) != 2 {
			return nil, fmt.Errorf("parse graphviz json: node %s: bad pos %q", o.Name, o.Pos)
		}
		w, _ := strconv.ParseFloat(o.Width, 64)
		h, _ := strconv.ParseFloat(o.Height, 64)
		c := flip(pos[0], pos[1])
		lay.Nodes[id] = NodeBox{ID: id, X: c.X, Y: c.Y, W: w * 72, H: h * 72}
	}
	kinds := map[[2]string][]codegraph.EdgeKind{}
	counts := map[[2]string]int{}
	for _, e := range v.Edges {
		k := [2]string{e.From, e.To}
		kinds[k] = append(kinds[k], e.Kind)
		counts[k] = max(counts[k], e.Count)
	}
	for _, e := range g.Edges {
		from, to := byGVID[e.Tail], byGVID[e.Head]
		if from == "" || to == "" {
			continue
		}
		ep := EdgePath{From: from, To: to}
		if ks := kinds[[2]string{from, to}]; len(ks) > 0 {
			ep.Kind = ks[0]
			kinds[[2]string{from, to}] = ks[1:]
		}
		ep.Count = counts[[2]string{from, to}]
		var ctrl []Point
		for _, f := range strings.Fields(e.Pos) {
			switch {
			case strings.HasPrefix(f, "e,"):
				xy, err := parseFloats(f[2:])
				if err == nil && len(xy) == 2 {
					p := flip(xy[0], xy[1])
					ep.Tip = &p
				}
			case strings.HasPrefix(f, "s,"):
				// start arrow: not used (edges have no arrowtail)
			default:
				xy, err := parseFloats(f)
				if err == nil && len(xy) == 2 {
					ctrl = append(ctrl, flip(xy[0], xy[1]))
				}
			}
		}
		ep.Points = flattenBezier(ctrl, 6)
		lay.Edges = append(lay.Edges, ep)
	}
	if len(lay.Nodes) != len(v.Nodes) {
		return nil, fmt.Errorf("parse graphviz json: %d of %d nodes placed", len(lay.Nodes), len(v.Nodes))
	}
	return lay, nil
}

// flattenBezier turns a Graphviz B-spline (1+3k control points) into a
// polyline with steps segments per cubic piece.
func flattenBezier(ctrl []Point, steps int) []Point {
	if len(ctrl) < 4 || (len(ctrl)-1)%3 != 0 {
		return ctrl
	}
	out := []Point{ctrl[0]}
	for i := 0; i+3 < len(ctrl); i += 3 {
		p0, p1, p2, p3 := ctrl[i], ctrl[i+1], ctrl[i+2], ctrl[i+3]
		for s := 1; s <= steps; s++ {
			t := float64(s) / float64(steps)
			u := 1 - t
			a, b, c, d := u*u*u, 3*u*u*t, 3*u*t*t, t*t*t
			out = append(out, Point{
				X: a*p0.X + b*p1.X + c*p2.X + d*p3.X,
				Y: a*p0.Y + b*p1.Y + c*p2.Y + d*p3.Y,
			})
		}
	}
	return out
}
