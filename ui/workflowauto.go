package ui

import (
	"encoding/json"

	"fyne.io/fyne/v2"
)

// AutoWorkflow is the Workflow tab's part of the automation state (in
// AutomationState.Extra under "workflow"): the steps shown with their state
// and screen position, whether a run is going, and the boxes of the controls
// an end-to-end test clicks.
type AutoWorkflow struct {
	Workflow string            `json:"workflow"`
	Running  bool              `json:"running"`
	Runs     int               `json:"runs"` // runs finished
	States   map[string]string `json:"states"`
	Nodes    []AutoNode        `json:"nodes"`
	Graph    AutoBox           `json:"graph"`
	RunBtn   AutoBox           `json:"run_button"`
	Log      string            `json:"log"`                // tail of the log
	Question string            `json:"question,omitempty"` // the approval being asked now
	Window   AutoBox           `json:"window"`             // the window's canvas
	// The New project dialog's fields and button (zero when it is closed).
	NewRequirements     AutoBox `json:"new_requirements"`
	NewFolder           AutoBox `json:"new_folder"`
	NewCreate           AutoBox `json:"new_create"`
	NewProblem          string  `json:"new_problem,omitempty"`
	NewRequirementsText string  `json:"new_requirements_text,omitempty"` // what the requirements field holds
}

// workflowState returns the Workflow tab's automation state.
func (w *Workbench) workflowState(box func(fyne.CanvasObject) AutoBox) AutoWorkflow {
	p := w.panes.wf
	s := AutoWorkflow{Running: p.running, Runs: p.runs, States: map[string]string{}, Log: tail(p.log.Text, 2000)}
	if p.current != nil {
		s.Workflow = p.current.ID
	}
	for id, st := range p.States() {
		s.States[id] = string(st)
	}
	s.Question = p.Question()
	sz := w.win.Canvas().Size()
	s.Window = AutoBox{W: sz.Width, H: sz.Height}
	s.RunBtn = box(p.runBtn)
	s.Graph = box(p.graph)
	if v, lay := p.graph.View(), p.graph.CurrentLayout(); v != nil && lay != nil && s.Graph.W > 0 {
		sc := p.graph.Scale()
		for _, n := range v.Nodes {
			c, ok := p.graph.NodeCenter(n.ID)
			if !ok {
				continue
			}
			b := lay.Nodes[n.ID]
			s.Nodes = append(s.Nodes, AutoNode{ID: n.ID, Label: n.Label, Kind: string(p.States()[n.ID]),
				X: s.Graph.X + c.X, Y: s.Graph.Y + c.Y, W: float32(b.W) * sc, H: float32(b.H) * sc})
		}
	}
	if f := w.newProject; f != nil {
		s.NewRequirements, s.NewFolder, s.NewCreate, s.NewProblem = box(f.req), box(f.folder), box(f.create), f.problem.Text
		s.NewRequirementsText = f.req.Text
	}
	return s
}

// workflowExtra is the JSON put in AutomationState.Extra.
func (w *Workbench) workflowExtra(box func(fyne.CanvasObject) AutoBox) json.RawMessage {
	if w.panes == nil || w.panes.wf == nil {
		return nil
	}
	data, err := json.Marshal(map[string]any{"workflow": w.workflowState(box)})
	if err != nil {
		return nil
	}
	return data
}
