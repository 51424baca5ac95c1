package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/app/pipeline"
	"codeloom/app/workflow"
	"codeloom/graphview"
	"codeloom/models"
	"codeloom/runtime"
)

// projectSuffix marks a project workflow in the picker.
const projectSuffix = "  (project)"

// stepKind and afterEdge are the kinds of the workflow graph's nodes and edges.
const (
	stepKind  codegraph.Kind     = "step"
	afterEdge codegraph.EdgeKind = "after"
)

// StepColors returns the fill and outline of a workflow step in state s: the
// same hues as workflow.StateColor (white, gold, palegreen, salmon,
// lightgrey) with a darker outline.
func StepColors(s workflow.State) (fill, line color.NRGBA) {
	switch s {
	case workflow.StateRunning:
		return color.NRGBA{0xfd, 0xe0, 0x47, 0xff}, color.NRGBA{0xb4, 0x53, 0x09, 0xff}
	case workflow.StateDone:
		return color.NRGBA{0x98, 0xfb, 0x98, 0xff}, color.NRGBA{0x16, 0xa3, 0x4a, 0xff}
	case workflow.StateFailed:
		return color.NRGBA{0xfa, 0x80, 0x72, 0xff}, color.NRGBA{0xb9, 0x1c, 0x1c, 0xff}
	case workflow.StateSkipped:
		return color.NRGBA{0xd3, 0xd3, 0xd3, 0xff}, color.NRGBA{0x6b, 0x72, 0x80, 0xff}
	default:
		return color.NRGBA{0xff, 0xff, 0xff, 0xff}, color.NRGBA{0x64, 0x74, 0x8b, 0xff}
	}
}

// WorkflowView returns the steps of w as a graph view (one node per step,
// labelled with its id, its type and command in the tooltip; one edge per
// dependency) for graphview's layout.
func WorkflowView(w *workflow.Workflow) *graphview.View {
	nodes, edges := workflow.Graph(w)
	v := &graphview.View{Title: "Workflow " + w.ID}
	byID := map[string]*workflow.Step{}
	for i := range w.Steps {
		byID[w.Steps[i].ID] = &w.Steps[i]
	}
	for _, n := range nodes {
		tip := n.ID + " (" + n.Type + ")"
		if s := byID[n.ID]; s != nil {
			if s.Description != "" {
				tip += "\n" + s.Description
			}
			if len(s.Command.Args) > 0 {
				tip += "\n$ " + strings.Join(s.Command.Args, " ")
			}
		}
		v.Nodes = append(v.Nodes, graphview.ViewNode{ID: n.ID, Label: n.ID, Kind: stepKind, Tooltip: tip})
	}
	for _, e := range edges {
		v.Edges = append(v.Edges, graphview.ViewEdge{From: e.From, To: e.To, Kind: afterEdge})
	}
	return v
}

// workflowPane is the Workflow tab: pick a workflow, fill its inputs, run or
// stop it; its steps are drawn as a graph coloured by state while it runs,
// with a log of the steps' outputs.
type workflowPane struct {
	w       *Workbench
	root    fyne.CanvasObject
	picker  *widget.Select
	refresh *widget.Button
	form    *widget.Form
	formBox *fyne.Container // holds form (a new one per workflow)
	inputs  map[string]*widget.Entry
	runBtn  *widget.Button
	stopBtn *widget.Button
	info    *widget.Label
	graph   *graphview.GraphView
	log     *widget.Label
	logBox  *container.Scroll

	current *workflow.Workflow // shown in the graph (UI goroutine)
	states  map[string]workflow.State
	running bool
	runs    int // runs finished (tests wait on it)

	mu       sync.Mutex // guards cancel, logBuf and question (written from the executor's goroutines)
	cancel   context.CancelFunc
	question string // the approval being asked now ("" for none)
	logBuf   strings.Builder
	shown    time.Time
}

func newWorkflowPane(w *Workbench) *workflowPane {
	p := &workflowPane{w: w, inputs: map[string]*widget.Entry{}, states: map[string]workflow.State{}}
	p.picker = widget.NewSelect(nil, func(string) { p.loadSelected() })
	p.picker.PlaceHolder = "Choose a workflow"
	p.refresh = widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), func() { p.refreshList() })
	p.runBtn = widget.NewButtonWithIcon("Run", theme.MediaPlayIcon(), p.run)
	p.runBtn.Importance = widget.HighImportance
	p.stopBtn = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), p.stop)
	p.stopBtn.Disable()
	p.form = widget.NewForm()
	p.formBox = container.NewStack(p.form)
	p.info = widget.NewLabel("Workflows: built-ins and the project's .codeloom/workflows/*.yaml")
	p.info.Wrapping = fyne.TextWrapWord
	p.graph = graphview.NewGraphView(w.layouter)
	p.graph.NodeColor = func(id string) (color.NRGBA, color.NRGBA, bool) {
		f, l := StepColors(p.states[id])
		return f, l, true
	}
	p.graph.OnSelect = func(id string) { p.graph.Select(id) }
	p.graph.OnLayout = func(*graphview.View, error) {
		if w.panes != nil && w.status != nil { // not while the window is being built
			w.writeState()
		}
	}
	p.log = widget.NewLabel("")
	p.log.Wrapping = fyne.TextWrapWord
	p.log.TextStyle = fyne.TextStyle{Monospace: true}
	p.logBox = container.NewVScroll(p.log)
	legend := container.NewHBox()
	for _, s := range []workflow.State{workflow.StatePending, workflow.StateRunning, workflow.StateDone, workflow.StateFailed, workflow.StateSkipped} {
		f, l := StepColors(s)
		sw := canvasSwatch(f, l)
		legend.Add(container.NewHBox(sw, widget.NewLabel(string(s))))
	}
	controls := container.NewVBox(
		container.NewBorder(nil, nil, nil, p.refresh, p.picker),
		p.formBox,
		container.NewGridWithColumns(2, p.runBtn, p.stopBtn),
		p.info,
	)
	left := container.NewBorder(nil, nil, nil, nil, container.NewVScroll(controls))
	graphPane := container.NewBorder(nil, legend, nil, nil, p.graph)
	right := container.NewHSplit(graphPane, p.logBox)
	right.Offset = 0.64
	split := container.NewHSplit(left, right)
	split.Offset = 0.2
	p.root = split
	p.refreshList()
	p.Select("hello") // a small example, so the tab is never blank
	return p
}

// Object returns the pane.
func (p *workflowPane) Object() fyne.CanvasObject { return p.root }

// refreshList fills the picker with the built-ins and the open project's
// workflows, keeping the selection when it still exists.
func (p *workflowPane) refreshList() {
	opts := workflow.BuiltinNames()
	if root := p.projectRoot(); root != "" {
		matches, _ := filepath.Glob(filepath.Join(memory.DataDir(root), "workflows", "*.yaml"))
		sort.Strings(matches)
		for _, m := range matches {
			opts = append(opts, strings.TrimSuffix(filepath.Base(m), ".yaml")+projectSuffix)
		}
	}
	p.picker.SetOptions(opts)
	sel := p.picker.Selected
	keep := false
	for _, o := range opts {
		keep = keep || o == sel
	}
	if !keep && sel != "" {
		p.picker.ClearSelected()
	}
}

func (p *workflowPane) projectRoot() string {
	if p.w.project == nil {
		return ""
	}
	return p.w.project.Root()
}

// Select picks the workflow named name (a built-in, or a project workflow's
// file name without .yaml) in the picker.
func (p *workflowPane) Select(name string) {
	p.refreshList()
	for _, o := range p.picker.Options {
		if o == name || o == name+projectSuffix {
			p.picker.SetSelected(o)
			return
		}
	}
}

// resolve reads the selected workflow.
func (p *workflowPane) resolve() (*workflow.Workflow, error) {
	sel := p.picker.Selected
	if sel == "" {
		return nil, errors.New("no workflow chosen")
	}
	if name, ok := strings.CutSuffix(sel, projectSuffix); ok {
		return workflow.Load(filepath.Join(memory.DataDir(p.projectRoot()), "workflows", name+".yaml"))
	}
	return workflow.Builtin(sel)
}

// loadSelected shows the chosen workflow: its inputs as a form and its steps
// as a graph, all pending.
func (p *workflowPane) loadSelected() {
	if p.running || p.picker.Selected == "" {
		return
	}
	wf, err := p.resolve()
	if err != nil {
		p.info.SetText("Cannot read the workflow: " + err.Error())
		return
	}
	if err := workflow.Validate(wf, workflow.TypeBuild, workflow.TypeWrite, workflow.TypeTask); err != nil {
		p.info.SetText("Invalid workflow:\n" + err.Error())
		return
	}
	p.setForm()
	p.inputs = map[string]*widget.Entry{}
	for _, in := range wf.Inputs {
		e := widget.NewEntry()
		if in.Default != nil {
			e.SetText(*in.Default)
		}
		e.SetPlaceHolder(in.Description)
		p.inputs[in.Name] = e
		label := in.Name
		if in.Required() {
			label += " *"
		}
		p.form.Append(label, e)
	}
	desc := wf.Description
	if desc == "" {
		desc = wf.ID
	}
	p.info.SetText(fmt.Sprintf("%s\n%d steps", strings.TrimSpace(desc), len(wf.Steps)))
	p.show(wf)
}

// setForm replaces the inputs form with an empty one (a Form keeps the
// widgets of rows it already drew).
func (p *workflowPane) setForm() {
	p.form = widget.NewForm()
	p.formBox.Objects = []fyne.CanvasObject{p.form}
	p.formBox.Refresh()
}

// show draws wf's steps, all pending.
func (p *workflowPane) show(wf *workflow.Workflow) {
	p.current = wf
	p.states = map[string]workflow.State{}
	p.graph.ShowView(WorkflowView(wf))
}

// States returns the latest state of every step shown (pending when no event came).
func (p *workflowPane) States() map[string]workflow.State {
	out := map[string]workflow.State{}
	if p.current == nil {
		return out
	}
	for _, s := range p.current.Steps {
		st := p.states[s.ID]
		if st == "" {
			st = workflow.StatePending
		}
		out[s.ID] = st
	}
	return out
}

// appendLog adds text to the log and shows it (at most ten times a second
// unless force).
func (p *workflowPane) appendLog(text string, force bool) {
	p.mu.Lock()
	p.logBuf.WriteString(text)
	if !force && time.Since(p.shown) < 100*time.Millisecond {
		p.mu.Unlock()
		return
	}
	p.shown = time.Now()
	out := tail(p.logBuf.String(), 30000)
	p.mu.Unlock()
	p.w.do(func() { p.log.SetText(out); p.logBox.ScrollToBottom() })
}

func (p *workflowPane) resetLog(text string) {
	p.mu.Lock()
	p.logBuf.Reset()
	p.logBuf.WriteString(text)
	p.mu.Unlock()
	p.log.SetText(text)
}

// event receives the executor's events (from its goroutines): the state is
// applied on the UI goroutine and the graph recoloured; text goes to the log.
func (p *workflowPane) event(wfID string) func(workflow.Event) {
	return func(ev workflow.Event) {
		top := ev.Workflow == wfID && ev.Depth == 0
		if top && ev.Step != "" {
			st, id := ev.State, ev.Step
			p.w.do(func() {
				if p.states[id] != st {
					p.states[id] = st
					p.graph.Refresh()
					if p.w.panes != nil {
						p.w.writeState()
					}
				}
			})
		}
		pad := strings.Repeat("  ", ev.Depth)
		name := ev.Step
		if !top && ev.Step != "" {
			name = ev.Workflow + "/" + ev.Step
		}
		switch {
		case ev.Step == "":
			p.appendLog(fmt.Sprintf("%s== workflow %s: %s %s\n", pad, ev.Workflow, ev.State, ev.Err), true)
		case ev.State == workflow.StateRunning && ev.Text != "":
			p.appendLog(ev.Text, false)
		case ev.State == workflow.StateRunning:
			att := ""
			if ev.Attempt > 1 {
				att = fmt.Sprintf(" (attempt %d)", ev.Attempt)
			}
			p.appendLog(fmt.Sprintf("\n%s▶ %s%s\n", pad, name, att), true)
		case ev.State == workflow.StateDone && ev.Type == workflow.TypeBuild:
			p.appendLog(fmt.Sprintf("\n%s✓ %s: %s\n", pad, name, buildSummary(ev.Text)), true)
		case ev.State == workflow.StateDone:
			p.appendLog(fmt.Sprintf("\n%s✓ %s: %s\n", pad, name, clipOutput(ev.Text)), true)
		case ev.State == workflow.StateFailed:
			p.appendLog(fmt.Sprintf("\n%s✗ %s failed: %s\n", pad, name, ev.Err), true)
		case ev.State == workflow.StateSkipped:
			p.appendLog(fmt.Sprintf("%s– %s skipped\n", pad, name), true)
		}
	}
}

// buildSummary renders a build step's output (a workflow.Package as JSON)
// as its files and test results.
func buildSummary(out string) string {
	var pkg workflow.Package
	if err := json.Unmarshal([]byte(out), &pkg); err != nil {
		return clipOutput(out)
	}
	s := fmt.Sprintf("files %s; %s", strings.Join(pkg.Paths(), ", "), pkg.Tests.Line())
	if n := len(pkg.DebugLog); n > 0 {
		s += fmt.Sprintf("; %d debugger attempt(s)", n)
	}
	return s
}

// clipOutput shortens a step output for the log.
func clipOutput(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = s[:2000] + " …"
	}
	if strings.Contains(s, "\n") {
		return "\n" + s
	}
	return s
}

func (p *workflowPane) setRunning(on bool) {
	p.running = on
	if on {
		p.runBtn.Disable()
		p.picker.Disable()
		p.stopBtn.Enable()
		return
	}
	p.runBtn.Enable()
	p.picker.Enable()
	p.stopBtn.Disable()
}

// begin marks the pane busy with a cancellable context; false when a run is
// already going.
func (p *workflowPane) begin() (context.Context, bool) {
	if p.running {
		return nil, false
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.mu.Lock()
	p.cancel = cancel
	p.mu.Unlock()
	p.setRunning(true)
	if sc := p.w.splitCenter; sc != nil && sc.Offset > 0.6 {
		sc.SetOffset(0.52) // room for the step graph and its log while it runs
	}
	return ctx, true
}

// end clears the busy state (UI goroutine).
func (p *workflowPane) end() {
	p.mu.Lock()
	if p.cancel != nil {
		p.cancel()
		p.cancel = nil
	}
	p.mu.Unlock()
	p.setRunning(false)
	p.runs++
	p.w.writeState()
}

// stop cancels the running workflow (its steps are cancelled, the rest skipped).
func (p *workflowPane) stop() {
	p.mu.Lock()
	if p.cancel != nil {
		p.cancel()
	}
	p.mu.Unlock()
	p.appendLog("\n[stop requested]\n", true)
}

// askingApprover records the question being asked (for the status bar and
// the automation state) around the wrapped approver.
type askingApprover struct {
	inner pipeline.Approver
	p     *workflowPane
}

// Approve implements pipeline.Approver.
func (a askingApprover) Approve(ctx context.Context, q pipeline.Question) (bool, error) {
	a.p.mu.Lock()
	a.p.question = q.Title
	a.p.mu.Unlock()
	defer func() {
		a.p.mu.Lock()
		a.p.question = ""
		a.p.mu.Unlock()
	}()
	a.p.w.do(func() { a.p.w.setStatus("Waiting for your answer: " + q.Title); a.p.w.writeState() })
	return a.inner.Approve(ctx, q)
}

// Question returns the approval being asked now ("" for none).
func (p *workflowPane) Question() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.question
}

// approver returns the window's Approver for a run from this pane.
func (p *workflowPane) approver() pipeline.Approver {
	return askingApprover{inner: p.w.newApprover().ForPipeline(), p: p}
}

// needsModel lists the steps of wf that need a model.
func needsModel(wf *workflow.Workflow) []string {
	var out []string
	for _, s := range wf.Steps {
		switch s.Type {
		case workflow.TypeLLM, workflow.TypeBuild, workflow.TypeTask:
			out = append(out, s.ID)
		}
	}
	return out
}

// run runs the selected workflow in the open project after one approval
// (Describe lists the steps); steps that write files or run generated code
// ask again through the Approver.
func (p *workflowPane) run() {
	w := p.w
	wf, err := p.resolve()
	if err != nil {
		dialog.ShowInformation("No workflow", "Choose a workflow first.", w.win)
		return
	}
	root := p.projectRoot()
	if root == "" {
		dialog.ShowInformation("No project open", "Workflows run in a project folder: open one with File → Open Folder (or create one with File → New project from requirements…).", w.win)
		return
	}
	if steps := needsModel(wf); len(steps) > 0 && w.engine == nil {
		dialog.ShowInformation("No model loaded", fmt.Sprintf("Step(s) %s of %s need a model: load a GGUF model in the Prompt tab first.", strings.Join(steps, ", "), wf.ID), w.win)
		return
	}
	given := map[string]string{}
	for name, e := range p.inputs {
		if e.Text != "" {
			given[name] = e.Text
		}
	}
	inputs, err := workflow.CheckInputs(wf, given)
	if err != nil {
		dialog.ShowError(fmt.Errorf("workflow %s: %w\n\nFill in the inputs marked *.", wf.ID, err), w.win)
		return
	}
	approver := p.approver()
	var store *memory.Store = w.store
	var recOpts []runtime.Option
	ex := &workflow.Executor{OnEvent: p.event(wf.ID)}
	if store != nil {
		ex.Activity = store
		recOpts = append(recOpts, runtime.WithRecorder(store))
	}
	runner := runtime.New(recOpts...)
	ex.Handlers = workflow.StandardHandlers(ex, root, w.engine, runner, approver, func(r string) (*workflow.Workflow, error) { return workflow.Resolve(root, r) })
	llm := &workflow.LLMHandler{Engine: w.engine, Model: w.model, Options: models.GenOptions{MaxTokens: 2048}}
	patchH := &workflow.PatchHandler{Root: root, Approver: approver}
	builder := &workflow.Builder{Engine: w.engine, Runner: runner, Approver: approver}
	taskCfg := pipeline.Config{Root: root, Engine: w.engine, ModelName: w.model, Runner: runner, Approver: approver, Guidance: guidanceDialog{w.win, w.do}}
	if store != nil {
		llm.Memory, patchH.Versions, builder.Memory, taskCfg.Memory = store, store, store, store
	}
	ex.Handlers[workflow.TypeLLM] = llm
	ex.Handlers[workflow.TypePatch] = patchH
	ex.Handlers[workflow.TypeBuild] = builder
	ex.Handlers[workflow.TypeWrite] = &workflow.Writer{Approver: approver}
	ex.Handlers[workflow.TypeTask] = &workflow.TaskRunner{Config: taskCfg}
	if err := ex.Validate(wf); err != nil {
		dialog.ShowError(err, w.win)
		return
	}
	ctx, ok := p.begin()
	if !ok {
		return
	}
	p.show(wf)
	p.resetLog(fmt.Sprintf("Workflow %s in %s\n", wf.ID, root))
	w.setStatus("Workflow " + wf.ID + ": waiting for approval")
	go func() {
		ok, err := approver.Approve(ctx, pipeline.Question{Kind: pipeline.AskRun, Title: "Run workflow " + wf.ID + "?", Detail: workflow.Describe(wf)})
		if err != nil || !ok {
			p.appendLog("\n[not run]\n", true)
			w.do(func() { p.end(); w.setStatus("Workflow " + wf.ID + " not run") })
			return
		}
		rep, runErr := ex.Run(ctx, wf, inputs)
		var b strings.Builder
		if rep != nil {
			keys := make([]string, 0, len(rep.Outputs))
			for k := range rep.Outputs {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "%s = %s\n", k, rep.Outputs[k])
			}
		}
		status := "Workflow " + wf.ID + " finished"
		if runErr != nil {
			status = "Workflow " + wf.ID + " failed: " + runErr.Error()
			fmt.Fprintf(&b, "[failed: %v]\n", runErr)
		} else {
			fmt.Fprintf(&b, "[done in %s]\n", rep.Duration.Round(time.Millisecond))
		}
		p.appendLog("\n"+b.String(), true)
		w.do(func() {
			defer p.end()
			w.setStatus(status)
			if w.project != nil && w.project.Root() == root {
				w.panes.refresh()
			}
		})
	}()
}

// canvasSwatch is a small coloured box for the legend.
func canvasSwatch(fill, line color.NRGBA) fyne.CanvasObject {
	r := canvas.NewRectangle(fill)
	r.StrokeColor, r.StrokeWidth, r.CornerRadius = line, 1, 3
	return container.NewCenter(container.NewGridWrap(fyne.NewSize(14, 14), r))
}
