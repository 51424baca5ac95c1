package workflow

import (
	"fmt"
	"strings"
	"sync"
)

// GraphNode is a step drawn as a node (the GUI's workflow pane).
type GraphNode struct {
	ID    string `json:"id"`
	Label string `json:"label"` // "id\n(type)"
	Type  string `json:"type"`
	State State  `json:"state"`
}

// GraphEdge is a dependency: From must finish before To starts.
type GraphEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Graph returns w's steps as nodes (file order, all pending) and its
// dependencies (explicit and from templates) as edges. w must be valid.
func Graph(w *Workflow) ([]GraphNode, []GraphEdge) {
	deps := Dependencies(w)
	nodes := make([]GraphNode, 0, len(w.Steps))
	var edges []GraphEdge
	for _, s := range w.Steps {
		nodes = append(nodes, GraphNode{ID: s.ID, Label: s.ID + "\n(" + s.Type + ")", Type: s.Type, State: StatePending})
		for _, d := range deps[s.ID] {
			edges = append(edges, GraphEdge{From: d, To: s.ID})
		}
	}
	return nodes, edges
}

// DOT renders w's step graph in Graphviz DOT, nodes coloured by state
// (states may be nil: everything pending).
func DOT(w *Workflow, states map[string]State) string {
	nodes, edges := Graph(w)
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fontname=\"sans\"];\n", w.ID)
	for _, n := range nodes {
		st := n.State
		if s, ok := states[n.ID]; ok {
			st = s
		}
		fmt.Fprintf(&b, "  %q [label=%q, fillcolor=%q];\n", n.ID, n.Label, StateColor(st))
	}
	for _, e := range edges {
		fmt.Fprintf(&b, "  %q -> %q;\n", e.From, e.To)
	}
	b.WriteString("}\n")
	return b.String()
}

// StateColor is the fill colour (an X11/Graphviz colour name) of a state.
func StateColor(s State) string {
	switch s {
	case StateRunning:
		return "gold"
	case StateDone:
		return "palegreen"
	case StateFailed:
		return "salmon"
	case StateSkipped:
		return "lightgrey"
	default:
		return "white"
	}
}

// Tracker keeps the latest state of every step from a stream of events; the
// GUI feeds it from Executor.OnEvent and redraws from States. It is safe for
// concurrent use.
type Tracker struct {
	mu       sync.Mutex
	workflow string
	states   map[string]State
	last     map[string]string // latest progress text or error per step
}

// NewTracker returns a tracker for workflow id (events of sub-workflows,
// which carry another workflow id or a depth > 0, are ignored).
func NewTracker(id string) *Tracker {
	return &Tracker{workflow: id, states: map[string]State{}, last: map[string]string{}}
}

// Observe records ev.
func (t *Tracker) Observe(ev Event) {
	if ev.Workflow != t.workflow || ev.Depth > 0 || ev.Step == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.states[ev.Step] = ev.State
	switch {
	case ev.Err != "":
		t.last[ev.Step] = ev.Err
	case ev.Text != "":
		t.last[ev.Step] = ev.Text
	}
}

// States returns a copy of the latest state per step.
func (t *Tracker) States() map[string]State {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]State, len(t.states))
	for k, v := range t.states {
		out[k] = v
	}
	return out
}

// Last returns the latest progress text or error of step id.
func (t *Tracker) Last(id string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last[id]
}
