package ui

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
)

// AutomationState is what the window writes to the automation file
// (CODELOOM_AUTOMATION) so end-to-end tests can drive it with xdotool:
// positions are in window (canvas) coordinates.
type AutomationState struct {
	Time      time.Time  `json:"time"`
	Title     string     `json:"title"`
	Project   string     `json:"project"`
	Indexing  bool       `json:"indexing"`
	Error     string     `json:"error,omitempty"`
	Status    string     `json:"status"`
	ViewTitle string     `json:"view_title"`
	NodeCount int        `json:"node_count"` // nodes drawn
	EdgeCount int        `json:"edge_count"`
	Graph     AutoBox    `json:"graph"` // the graph widget
	Nodes     []AutoNode `json:"nodes"`
	Selected  string     `json:"selected"`
	CodePath  string     `json:"code_path"`
	CodeNode  string     `json:"code_node"`
	Code      string     `json:"code"`      // the marked node's lines
	CodeFile  string     `json:"code_file"` // the whole text in the pane
	Editing   bool       `json:"editing"`
	Dirty     bool       `json:"dirty"`
	Versions  int        `json:"versions"`
	Scale     float32    `json:"scale"`
	EditBtn   AutoBox    `json:"edit_button"`   // the code pane's Edit/View button
	OpenBtn   AutoBox    `json:"open_button"`   // Open Folder…
	ExportBtn AutoBox    `json:"export_button"` // the toolbar's Export (SVG…/PNG… menu)
	Editor    AutoBox    `json:"editor"`        // the code pane's text area
	// StallMaxMs is the longest time the UI goroutine did not answer the
	// watchdog (ms), StallWhat what it was running then, Stalls how many
	// blocks passed 100 ms.
	StallMaxMs  float64 `json:"stall_max_ms"`
	StallWhat   string  `json:"stall_what,omitempty"`
	Stalls      int     `json:"stalls"`
	HiddenEdges int     `json:"hidden_edges"`    // edges the view's budget left out
	Fallback    bool    `json:"layout_fallback"` // the grid layout stood in for Graphviz
	References  int     `json:"references"`      // lines in the references panel
	// Timings is when the steps of the last open happened, in ms since the
	// process started: workbench, window_built, open_called, store_opened,
	// indexed, overview_built, graph_drawn (the first view with nodes drawn).
	Timings map[string]float64 `json:"timings_ms,omitempty"`
	// CPUTimings is the process's CPU time (user+system, ms) at those steps.
	CPUTimings map[string]float64 `json:"cpu_ms,omitempty"`
	// PeakRSSMB is the process's peak resident memory (MiB).
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// LayoutMs is how long the view shown took to build and lay out (ms).
	LayoutMs float64         `json:"layout_ms"`
	Extra    json.RawMessage `json:"extra,omitempty"`
}

// AutoBox is a rectangle in window coordinates.
type AutoBox struct {
	X float32 `json:"x"`
	Y float32 `json:"y"`
	W float32 `json:"w"`
	H float32 `json:"h"`
}

// AutoNode is one drawn node: its centre and size in window coordinates.
type AutoNode struct {
	ID    string  `json:"id"`
	Label string  `json:"label"`
	Kind  string  `json:"kind"`
	X     float32 `json:"x"`
	Y     float32 `json:"y"`
	W     float32 `json:"w"`
	H     float32 `json:"h"`
}

// State returns the automation state of the window now.
func (w *Workbench) State() AutomationState {
	s := AutomationState{
		Time: time.Now(), Title: w.win.Title(), Indexing: w.indexing, Error: w.lastErr,
		Status: w.status.Text, Selected: w.graph.Selected(), Scale: w.graph.Scale(),
		CodePath: w.code.Path(), CodeNode: w.code.NodeID(), Code: w.code.MarkedText(), CodeFile: w.code.Text(),
		Editing: w.code.Editing(), Dirty: w.code.Dirty(), Versions: len(w.panes.Versions()),
	}
	if w.project != nil {
		s.Project = w.project.Root()
	}
	var origin fyne.Position
	if d := fyne.CurrentApp().Driver(); d != nil {
		origin = d.AbsolutePositionForObject(w.graph)
	}
	box := func(o fyne.CanvasObject) AutoBox {
		if d := fyne.CurrentApp().Driver(); d != nil && o.Visible() {
			p, sz := d.AbsolutePositionForObject(o), o.Size()
			return AutoBox{p.X, p.Y, sz.Width, sz.Height}
		}
		return AutoBox{}
	}
	s.EditBtn, s.Editor, s.OpenBtn, s.ExportBtn = box(w.code.editBtn), box(w.code.stack), box(w.openBtn), box(w.exportBtn)
	longest, what, n := w.stalls.get()
	s.StallMaxMs, s.StallWhat, s.Stalls = float64(longest.Microseconds())/1000, what, n
	if w.refs != nil {
		s.References = len(w.refs.refs)
	}
	s.Extra = w.workflowExtra(box)
	s.Timings, s.CPUTimings = w.timeline.snapshot()
	s.LayoutMs = float64(w.viewTook.Microseconds()) / 1000
	gs := w.graph.Size()
	s.Graph = AutoBox{origin.X, origin.Y, gs.Width, gs.Height}
	if v, lay := w.graph.View(), w.graph.CurrentLayout(); v != nil && lay != nil {
		s.ViewTitle, s.NodeCount, s.EdgeCount = v.Title, len(v.Nodes), len(v.Edges)
		s.HiddenEdges, s.Fallback = v.HiddenEdges, lay.Fallback
		for _, n := range v.Nodes {
			c, ok := w.graph.NodeCenter(n.ID)
			if !ok {
				continue
			}
			b := lay.Nodes[n.ID]
			sc := w.graph.Scale()
			s.Nodes = append(s.Nodes, AutoNode{ID: n.ID, Label: n.Label, Kind: string(n.Kind),
				X: origin.X + c.X, Y: origin.Y + c.Y, W: float32(b.W) * sc, H: float32(b.H) * sc})
		}
	}
	return s
}

// writeState rewrites the automation file (atomically) when automation is
// on. The state is taken on the UI goroutine; encoding and writing it (and
// reading the peak RSS from /proc) run on a writer goroutine, which always
// writes the newest state taken.
func (w *Workbench) writeState() {
	if w.opts.Automation == "" {
		return
	}
	s := w.State()
	w.autoMu.Lock()
	w.autoNext = &s
	busy := w.autoBusy
	w.autoBusy = true
	w.autoMu.Unlock()
	if !busy {
		go w.stateWriter()
	}
}

// stateWriter writes the pending states until none is left.
func (w *Workbench) stateWriter() {
	for {
		w.autoMu.Lock()
		s := w.autoNext
		w.autoNext = nil
		if s == nil {
			w.autoBusy = false
			w.autoMu.Unlock()
			return
		}
		w.autoMu.Unlock()
		s.PeakRSSMB = peakRSSMB()
		writeStateFile(w.opts.Automation, s)
	}
}

// writeStateFile writes s to path through a temporary file and a rename.
func writeStateFile(path string, s *AutomationState) {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		slog.Warn("automation state", "err", err)
		return
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		slog.Warn("automation state", "err", err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		slog.Warn("automation state", "file", filepath.Base(path), "err", err)
	}
}
