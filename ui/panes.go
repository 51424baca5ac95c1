package ui

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/app/pipeline"
	"codeloom/models"
	"codeloom/runtime"
)

// bottomPanes are the tabs under the graph: prompt/answer, runs, history and lessons.
type bottomPanes struct {
	w    *Workbench
	tabs *container.AppTabs

	prompt    *widget.Entry
	askBtn    *widget.Button
	taskBtn   *widget.Button
	modelRow  fyne.CanvasObject
	modelSel  *widget.Select
	modelPath map[string]string // select label → file
	loadBtn   *widget.Button
	loadBar   *widget.ProgressBar
	modelInfo *widget.Label
	stopBtn   *widget.Button
	answer    *widget.Label
	answerBox *container.Scroll
	askMu     sync.Mutex // guards askCancel
	askCancel context.CancelFunc

	runs      []memory.RunRecord
	runTests  *widget.Button
	stopRun   *widget.Button
	runMu     sync.Mutex // guards runCancel
	runCancel context.CancelFunc
	runList   *widget.List
	runDetail *widget.Label
	plot      *MetricsPlot

	versions  []memory.Version
	verList   *widget.List
	verLabel  *widget.Label
	revertBtn *widget.Button
	undoBtn   *widget.Button // reverts the newest change CodeLoom landed (undo.go)
	verSel    int
	lessons   []memory.Lesson
	lessonBox *widget.Label

	wf    *workflowPane // the Workflow tab
	wfTab *container.TabItem
}

func newBottomPanes(w *Workbench) *bottomPanes {
	p := &bottomPanes{w: w, verSel: -1}

	// Prompt / answer.
	p.prompt = widget.NewMultiLineEntry()
	p.prompt.SetPlaceHolder("Ask about the selected code, e.g. \"why does this fail when qty is 0?\"")
	p.prompt.SetMinRowsVisible(2)
	p.answer = widget.NewLabel("")
	p.answer.Wrapping = fyne.TextWrapWord
	p.answer.TextStyle = fyne.TextStyle{Monospace: true}
	p.answerBox = container.NewVScroll(p.answer)
	p.askBtn = widget.NewButtonWithIcon("Ask", theme.MailSendIcon(), p.ask)
	p.taskBtn = widget.NewButtonWithIcon("Task", theme.MediaPlayIcon(), p.runTask)
	p.stopBtn = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), p.stopAsk)
	p.stopBtn.Disable()
	if w.engine == nil {
		p.answer.SetText("No model loaded. Pick a GGUF model above and press Load (or start with CODELOOM_MODEL=path/to/model.gguf). " +
			"Ask answers questions about the selected code; Task plans, patches, tests and debugs a change, asking before anything is applied or run.")
	}
	p.buildModelRow()
	promptTab := container.NewBorder(
		container.NewVBox(p.modelRow, container.NewBorder(nil, nil, nil, container.NewGridWithColumns(3, p.askBtn, p.taskBtn, p.stopBtn), p.prompt)),
		nil, nil, nil, p.answerBox)

	// Runs.
	p.runList = widget.NewList(
		func() int { return len(p.runs) },
		func() fyne.CanvasObject { return widget.NewLabel("run template") },
		func(i widget.ListItemID, o fyne.CanvasObject) { o.(*widget.Label).SetText(runSummary(p.runs[i])) },
	)
	p.runDetail = widget.NewLabel("Runs recorded for this project (codeloom exec/test, pipeline gates) appear here.")
	p.runDetail.Wrapping = fyne.TextWrapWord
	p.runDetail.TextStyle = fyne.TextStyle{Monospace: true}
	p.plot = NewMetricsPlot()
	p.runList.OnSelected = func(i widget.ListItemID) {
		r := p.runs[i]
		p.runDetail.SetText(runDetail(r))
		p.plot.SetSamples(r.Samples)
	}
	refreshRuns := widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), func() { p.refresh() })
	p.runTests = widget.NewButtonWithIcon("Run tests", theme.MediaPlayIcon(), p.startTests)
	p.stopRun = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), p.cancelRun)
	p.stopRun.Disable()
	runsRight := container.NewVSplit(p.plot, container.NewVScroll(p.runDetail))
	runsRight.Offset = 0.45
	runsSplit := container.NewHSplit(container.NewBorder(container.NewHBox(p.runTests, p.stopRun, refreshRuns), nil, nil, nil, p.runList), runsRight)
	runsSplit.Offset = 0.4

	// History and lessons.
	p.verLabel = widget.NewLabel("Versions of the open file")
	p.verList = widget.NewList(
		func() int { return len(p.versions) },
		func() fyne.CanvasObject { return widget.NewLabel("version template") },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			v := p.versions[i]
			name := v.NodeName
			if name == "" {
				name = v.Path
			}
			o.(*widget.Label).SetText(fmt.Sprintf("%s  %s  (%s, %d bytes)", v.Time.Format("15:04:05 Jan 2"), name, v.Reason, len(v.Content)))
		},
	)
	p.verList.OnSelected = func(i widget.ListItemID) { p.verSel = i; p.revertBtn.Enable() }
	p.revertBtn = widget.NewButtonWithIcon("Revert to selected", theme.ContentUndoIcon(), p.revert)
	p.revertBtn.Disable()
	p.undoBtn = widget.NewButtonWithIcon("Undo last change", theme.ContentUndoIcon(), w.undoLast)
	p.lessonBox = widget.NewLabel("")
	p.lessonBox.Wrapping = fyne.TextWrapWord
	hist := container.NewBorder(p.verLabel, container.NewHBox(p.revertBtn, p.undoBtn), nil, nil, p.verList)
	lessons := container.NewBorder(widget.NewLabelWithStyle("Lessons and activity", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil, container.NewVScroll(p.lessonBox))
	histSplit := container.NewHSplit(hist, lessons)

	p.tabs = container.NewAppTabs(
		container.NewTabItemWithIcon("Prompt", theme.MailComposeIcon(), promptTab),
		container.NewTabItemWithIcon("Runs", theme.MediaPlayIcon(), runsSplit),
		container.NewTabItemWithIcon("History & lessons", theme.HistoryIcon(), histSplit),
	)
	p.wf = newWorkflowPane(w)
	p.wfTab = container.NewTabItemWithIcon("Workflow", theme.GridIcon(), p.wf.Object())
	p.tabs.Append(p.wfTab)
	p.tabs.OnSelected = func(t *container.TabItem) {
		if t == p.wfTab {
			p.wf.refreshList()
		}
	}
	return p
}

// Object returns the tabs.
func (p *bottomPanes) Object() fyne.CanvasObject { return p.tabs }

func runSummary(r memory.RunRecord) string {
	status := fmt.Sprintf("exit %d", r.ExitCode)
	if r.TimedOut {
		status = "timed out"
	} else if r.Signal != "" {
		status = "killed " + r.Signal
	}
	return fmt.Sprintf("%s  %s  %s  %s  %s", r.Start.Format("15:04:05"), status, r.Wall.Round(time.Millisecond), humanBytes(r.PeakRSS), strings.Join(r.Command, " "))
}

func runDetail(r memory.RunRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ %s\n(in %s, %s)\n", strings.Join(r.Command, " "), r.Dir, r.Origin)
	fmt.Fprintf(&b, "exit %d  wall %s  cpu user %s sys %s  peak RSS %s\n", r.ExitCode, r.Wall.Round(time.Millisecond), r.CPUUser.Round(time.Millisecond), r.CPUSys.Round(time.Millisecond), humanBytes(r.PeakRSS))
	if r.Limit != "" {
		fmt.Fprintf(&b, "stopped by limit: %s\n", r.Limit)
	}
	if r.Err != "" {
		fmt.Fprintf(&b, "error: %s\n", r.Err)
	}
	if r.Stdout != "" {
		fmt.Fprintf(&b, "\n--- stdout (%d bytes) ---\n%s", r.StdoutBytes, tail(r.Stdout, 4000))
	}
	if r.Stderr != "" {
		fmt.Fprintf(&b, "\n--- stderr (%d bytes) ---\n%s", r.StderrBytes, tail(r.Stderr, 4000))
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// refresh reloads runs, lessons and history from memory.
func (p *bottomPanes) refresh() {
	st := p.w.storeOrNil()
	if st == nil {
		p.runs, p.lessons = nil, nil
		p.runList.Refresh()
		p.lessonBox.SetText("No project memory open.")
		p.refreshHistory()
		return
	}
	runs, err := st.Runs(50)
	if err != nil {
		slog.Warn("read runs", "err", err)
	}
	p.runs = runs
	p.runList.UnselectAll()
	p.runList.Refresh()
	p.markLastTestRun()
	if len(runs) == 0 {
		p.runDetail.SetText("No runs recorded yet. Runs from `codeloom exec`, `codeloom test` and the pipeline's gates appear here with their CPU and memory plot.")
		p.plot.SetSamples(nil)
	}
	lessons, err := st.Lessons(30)
	if err != nil {
		slog.Warn("read lessons", "err", err)
	}
	p.lessons = lessons
	acts, _ := st.Activities(15)
	var b strings.Builder
	if len(lessons) == 0 {
		b.WriteString("No lesson cards yet: the pipeline writes one after each fixed failure.\n")
	}
	for _, l := range lessons {
		fmt.Fprintf(&b, "• %s\n  failed: %s\n  fixed by: %s\n", l.Task, l.Failure, l.Fix)
		if l.DiffSummary != "" {
			fmt.Fprintf(&b, "  diff: %s\n", l.DiffSummary)
		}
	}
	if len(acts) > 0 {
		b.WriteString("\nRecent activity:\n")
		for _, a := range acts {
			fmt.Fprintf(&b, "  %s %s/%s %s (%s)\n", a.Time.Format("15:04:05"), a.Module, a.Action, a.Outcome, a.Duration.Round(time.Millisecond))
		}
	}
	p.lessonBox.SetText(b.String())
	p.refreshHistory()
}

// markLastTestRun colours the graph by the newest test run's results.
func (p *bottomPanes) markLastTestRun() {
	for _, r := range p.runs {
		if r.Origin != "test" && !strings.HasPrefix(r.Origin, "gate:test") {
			continue
		}
		marks, passed, failed := runMarks(p.w.snap, r)
		if marks == nil {
			continue
		}
		p.w.graph.SetMarks(marks)
		p.w.setStatus(fmt.Sprintf("Last test run (%s): %d passed, %d failed; tests and their files are coloured green/red in the graph",
			r.Start.Format("15:04:05"), passed, failed))
		return
	}
	p.w.graph.SetMarks(nil)
}

// refreshHistory lists the saved versions of the file in the code pane.
func (p *bottomPanes) refreshHistory() {
	p.versions, p.verSel = nil, -1
	p.revertBtn.Disable()
	path := p.w.code.Path()
	st := p.w.storeOrNil()
	switch {
	case path == "":
		p.verLabel.SetText("Versions of the open file (none open)")
	case st == nil:
		p.verLabel.SetText("Versions: no project memory open")
	default:
		vs, err := st.Versions(path, 100)
		if err != nil {
			p.verLabel.SetText("Versions: " + err.Error())
		} else {
			p.versions = vs
			p.verLabel.SetText(fmt.Sprintf("Versions of %s (%d, newest first)", path, len(vs)))
		}
	}
	p.verList.UnselectAll()
	p.verList.Refresh()
}

// Versions returns the versions listed in the history tab.
func (p *bottomPanes) Versions() []memory.Version { return p.versions }

func (p *bottomPanes) revert() {
	if p.verSel < 0 || p.verSel >= len(p.versions) {
		return
	}
	v := p.versions[p.verSel]
	p.w.confirmDiscard(func() {
		dialog.ShowConfirm("Revert file",
			fmt.Sprintf("Replace %s with the version from %s (%d bytes)?\nThe current content is kept as a new version.", v.Path, v.Time.Format("15:04:05 Jan 2"), len(v.Content)),
			func(ok bool) {
				if ok {
					p.w.Revert(v)
				}
			}, p.w.win)
	})
}

// ---- running tests -----------------------------------------------------------

// startTests asks, then runs the project's tests with live output and a
// live CPU/RSS plot; the run is recorded in memory.
func (p *bottomPanes) startTests() {
	w := p.w
	if w.project == nil {
		return
	}
	root, store := w.project.Root(), w.store
	approver := w.newApprover()
	ctx, cancel := context.WithCancel(context.Background())
	p.runMu.Lock()
	p.runCancel = cancel
	p.runMu.Unlock()
	p.runTests.Disable()
	p.stopRun.Enable()
	go func() {
		defer cancel()
		done := func(msg string) {
			p.w.do(func() {
				p.runTests.Enable()
				p.stopRun.Disable()
				if msg != "" {
					p.runDetail.SetText(msg)
				}
				p.refresh()
			})
		}
		fw, cmd, err := runtime.DetectFramework(ctx, root)
		if err != nil {
			done("Cannot run tests: " + err.Error())
			return
		}
		ok, err := approver.Approve(ctx, Question{Title: "Run the project's tests?",
			Detail: fmt.Sprintf("%s\n\n$ %s\n(in %s; timeout 10 minutes; output, CPU and memory are recorded)", fw, strings.Join(cmd, " "), root)})
		if err != nil || !ok {
			done("Test run not started (declined).")
			return
		}
		var opts []runtime.Option
		if store != nil {
			opts = append(opts, runtime.WithRecorder(store))
		}
		var mu sync.Mutex
		var out strings.Builder
		var samples []memory.Sample
		var last time.Time
		flush := func(force bool) {
			mu.Lock()
			if !force && time.Since(last) < 200*time.Millisecond {
				mu.Unlock()
				return
			}
			last = time.Now()
			text := tail(out.String(), 6000)
			ss := append([]memory.Sample(nil), samples...)
			mu.Unlock()
			p.w.do(func() {
				p.runDetail.SetText("$ " + strings.Join(cmd, " ") + "\n" + text)
				p.plot.SetSamples(ss)
			})
		}
		p.w.do(func() { p.tabs.SelectIndex(1); p.runDetail.SetText("$ " + strings.Join(cmd, " ") + "\n(running…)") })
		rep, err := runtime.RunTests(ctx, runtime.New(opts...), root, runtime.TestOptions{
			OnOutput: func(_ runtime.Stream, b []byte) {
				mu.Lock()
				if out.Len() < 1<<20 {
					out.Write(b)
				}
				mu.Unlock()
				flush(false)
			},
			OnSample: func(s runtime.Sample) {
				mu.Lock()
				samples = append(samples, memory.Sample{At: s.At, CPUPercent: s.CPUPercent, RSS: s.RSS})
				mu.Unlock()
				flush(false)
			},
		})
		flush(true)
		var msg string
		if err != nil {
			msg = "Test run failed to start: " + err.Error()
		} else {
			msg = fmt.Sprintf("%s: %d passed, %d failed, %d errors, %d skipped in %s (peak RSS %s)\n\n%s",
				rep.Framework, rep.Passed, rep.Failed, rep.Errors, rep.Skipped, rep.Result.Wall.Round(time.Millisecond),
				humanBytes(rep.Result.PeakRSS), tail(string(rep.Result.Stdout)+string(rep.Result.Stderr), 6000))
		}
		p.w.do(func() {
			p.refresh()
			p.runDetail.SetText(msg)
			p.plot.SetSamples(func() []memory.Sample { mu.Lock(); defer mu.Unlock(); return samples }())
			p.stopRun.Disable()
			p.runTests.Enable() // last: enabled means the run is fully shown
		})
	}()
}

func (p *bottomPanes) cancelRun() {
	p.runMu.Lock()
	c := p.runCancel
	p.runMu.Unlock()
	if c != nil {
		c()
	}
}

// ---- prompt ------------------------------------------------------------------

func (p *bottomPanes) ask() {
	q := strings.TrimSpace(p.prompt.Text)
	if q == "" {
		return
	}
	eng := p.w.engine
	if eng == nil {
		dialog.ShowInformation("No model loaded", "Pick a GGUF model in the Prompt tab and press Load first (or use the CLI: codeloom ask DIR \"question\" --model PATH).", p.w.win)
		return
	}
	var ctxText string
	if code := p.w.code.MarkedText(); code != "" {
		ctxText = fmt.Sprintf("Code of %s (%s):\n```\n%s\n```\n\n", p.w.code.nodeName, p.w.code.Path(), code)
	}
	var gather func(ctx context.Context) (string, error)
	if cgp, ok := p.w.project.(interface{ Codegraph() *codegraph.Project }); ok {
		rc := pipeline.RetrievalContext{Graph: cgp.Codegraph().Graph, Engine: eng, ModelID: p.w.model}
		gather = func(ctx context.Context) (string, error) { return rc.Gather(ctx, q, 1500) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.askMu.Lock()
	p.askCancel = cancel
	p.askMu.Unlock()
	p.setBusy(true)
	p.answer.SetText("")
	var mu sync.Mutex
	var buf strings.Builder
	go func() {
		defer cancel()
		// Context: the selected node's code plus what retrieval finds in the
		// project for the question (graph + lexical search).
		if gather != nil {
			if found, err := gather(ctx); err == nil && found != "" {
				ctxText += "Relevant code from the project:\n" + found + "\n\n"
			} else if err != nil {
				slog.Warn("ask: gather context", "err", err)
			}
		}
		msgs := []models.Message{
			{Role: "system", Content: "You are CodeLoom, a careful coding assistant. Answer briefly and concretely."},
			{Role: "user", Content: ctxText + q},
		}
		_, err := eng.Generate(ctx, msgs, models.GenOptions{MaxTokens: 512, Temperature: 0.2}, func(tok string) {
			mu.Lock()
			buf.WriteString(tok)
			s := buf.String()
			mu.Unlock()
			p.w.do(func() { p.answer.SetText(s); p.answerBox.ScrollToBottom() })
		})
		p.w.do(func() {
			p.setBusy(false)
			if err != nil {
				p.answer.SetText(p.answer.Text + "\n\n[stopped: " + err.Error() + "]")
			}
		})
	}()
}

func (p *bottomPanes) stopAsk() {
	p.askMu.Lock()
	c := p.askCancel
	p.askMu.Unlock()
	if c != nil {
		c()
	}
}
