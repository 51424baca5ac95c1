package ui

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/codegraph"
	"codeloom/app/pipeline"
	"codeloom/models"
	"codeloom/runtime"
)

// buildModelRow makes the model picker: models found on this machine, a
// file browser, Load with a progress bar.
func (p *bottomPanes) buildModelRow() {
	w := p.w
	p.modelPath = map[string]string{}
	p.modelSel = widget.NewSelect(nil, nil)
	p.modelSel.PlaceHolder = "Choose a GGUF model…"
	browse := widget.NewButtonWithIcon("", theme.FolderOpenIcon(), p.browseModel)
	server := widget.NewButtonWithIcon("Server…", theme.ComputerIcon(), p.serverDialog)
	p.loadBtn = widget.NewButtonWithIcon("Load", theme.UploadIcon(), func() {
		if path := p.modelPath[p.modelSel.Selected]; path != "" {
			w.LoadModel(path)
		}
	})
	p.loadBar = widget.NewProgressBar()
	p.loadBar.Hide()
	p.modelInfo = widget.NewLabel("")
	if w.engine != nil {
		p.modelInfo.SetText("Model: " + w.model)
	}
	if w.opts.LoadModel == nil {
		p.loadBtn.Disable()
		p.modelInfo.SetText(p.modelInfo.Text + " (model loading is not available in this build)")
	}
	left := container.NewBorder(nil, nil, widget.NewLabel("Model"), container.NewHBox(browse, server), p.modelSel)
	p.modelRow = container.NewBorder(nil, nil, nil, container.NewHBox(p.loadBtn, container.NewGridWrap(fyne.NewSize(120, 30), p.loadBar), p.modelInfo), left)
	go p.discoverModels()
}

// discoverModels fills the picker with GGUF files found on this machine
// (~/models, LM Studio, the Hugging Face cache, Ollama's store).
func (p *bottomPanes) discoverModels() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	found, err := models.Discover(ctx, models.DiscoverOptions{})
	if err != nil {
		slog.Warn("model discovery", "err", err)
	}
	p.w.do(func() {
		for _, f := range found {
			if f.Error != "" {
				continue
			}
			label := fmt.Sprintf("%s (%s, %s)", f.Name, f.Architecture, f.FileType)
			p.modelPath[label] = f.Path
		}
		p.refreshModelOptions()
	})
}

func (p *bottomPanes) refreshModelOptions() {
	opts := make([]string, 0, len(p.modelPath))
	for k := range p.modelPath {
		opts = append(opts, k)
	}
	sort.Strings(opts)
	p.modelSel.SetOptions(opts)
	if len(opts) == 0 {
		p.modelSel.PlaceHolder = "No GGUF models found: browse for one…"
		p.modelSel.Refresh()
	}
}

func (p *bottomPanes) browseModel() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			p.w.showError("Model file dialog failed", err, "")
			return
		}
		if r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		label := filepath.Base(path)
		p.modelPath[label] = path
		p.refreshModelOptions()
		p.modelSel.SetSelected(label)
	}, p.w.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".gguf"}))
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

// serverDialog asks for a model server (URL, API key, model name; the URL
// and key default to $OPENAI_BASE_URL/$OLLAMA_HOST and $OPENAI_API_KEY) and
// connects to it instead of loading a GGUF in process.
func (p *bottomPanes) serverDialog() {
	def, _ := models.ResolveSource(context.Background(), models.SourceRequest{}) // the environment's server, if any
	urlEntry := widget.NewEntry()
	urlEntry.SetPlaceHolder("http://127.0.0.1:8080 (llama-server) or localhost:11434 (Ollama)")
	urlEntry.SetText(def.URL)
	keyEntry := widget.NewPasswordEntry()
	keyEntry.SetPlaceHolder("API key (if the server needs one)")
	keyEntry.SetText(def.APIKey)
	modelEntry := widget.NewEntry()
	modelEntry.SetPlaceHolder("model name (empty: the only one the server has)")
	form := []*widget.FormItem{widget.NewFormItem("Server", urlEntry), widget.NewFormItem("API key", keyEntry), widget.NewFormItem("Model", modelEntry)}
	d := dialog.NewForm("Use a model server", "Connect", "Cancel", form, func(ok bool) {
		if ok && strings.TrimSpace(urlEntry.Text) != "" {
			p.w.useModel(models.SourceRequest{Endpoint: urlEntry.Text, APIKey: keyEntry.Text, EndpointModel: strings.TrimSpace(modelEntry.Text)})
		}
	}, p.w.win)
	d.Resize(fyne.NewSize(560, 260))
	d.Show()
}

// LoadModel loads the model spec names — a GGUF file, a name `codeloom
// models` lists, or a server URL (see models.ResolveSource) — in the
// background with a progress bar; the previous model is unloaded once the
// new one is ready, and kept when it fails.
func (w *Workbench) LoadModel(spec string) {
	p := w.panes
	// A model given by path (CODELOOM_MODEL, a browse) is shown as the choice.
	if label := filepath.Base(spec); p.modelPath[label] != spec {
		p.modelPath[label] = spec
		p.refreshModelOptions()
		p.modelSel.SetSelected(label)
	}
	w.useModel(models.SourceRequest{Model: spec})
}

// useModel resolves req and loads (or connects to) its model in the
// background. Behaviour lives in models; this only shows progress.
func (w *Workbench) useModel(req models.SourceRequest) {
	p := w.panes
	prevInfo := p.modelInfo.Text
	p.loadBtn.Disable()
	p.loadBar.SetValue(0)
	p.loadBar.Show()
	p.modelInfo.SetText("Loading " + filepath.Base(req.Model+req.Endpoint) + "…")
	load := w.opts.LoadModel
	go func() {
		ctx := context.Background()
		var last time.Time
		var eng models.Engine
		var unload func()
		src, err := models.ResolveSource(ctx, req)
		switch {
		case err != nil:
		case src.IsServer():
			var o *models.OpenAI
			if o, err = models.Connect(ctx, src.URL, src.APIKey, src.Model); err == nil {
				eng, unload = o, func() {}
			}
		case src.Path != "" && load == nil:
			err = fmt.Errorf("loading GGUF models is not available in this build: use a model server")
		case src.Path != "":
			eng, unload, err = load(ctx, src.Path, func(f float32) {
				if time.Since(last) < 100*time.Millisecond && f < 1 {
					return
				}
				last = time.Now()
				w.do(func() { p.loadBar.SetValue(float64(f)) })
			})
		default:
			err = fmt.Errorf("no model given")
		}
		w.do(func() {
			p.loadBar.Hide()
			if load != nil {
				p.loadBtn.Enable()
			}
			if err != nil {
				// a failed load keeps the model that was working
				p.modelInfo.SetText(prevInfo)
				w.showError("Could not load the model", err, "Choose another GGUF file (a chat model that fits in memory), or check the server's address, key and model name.")
				return
			}
			if w.unload != nil {
				w.unload()
			}
			w.engine, w.unload, w.model = eng, unload, src.Name
			if src.Name == src.Path {
				w.model = filepath.Base(src.Path)
			}
			info := w.model
			if ip, ok := eng.(models.InfoProvider); ok {
				mi := ip.Info()
				info = fmt.Sprintf("%s (%s, %s, ctx %d)", mi.Name, mi.Architecture, mi.FileType, mi.ContextLength)
				if o, ok := eng.(*models.OpenAI); ok {
					info = fmt.Sprintf("%s on %s (%s, ctx %d)", o.Model, o.BaseURL, o.Server.Kind, mi.ContextLength)
					w.model = o.Model
				}
			}
			p.modelInfo.SetText("Model: " + info)
			p.answer.SetText("Model ready. Ask about the selected code, or describe a change and press Task.")
			w.setStatus("Model loaded: " + info)
		})
	}()
}

func (p *bottomPanes) setBusy(busy bool) {
	if busy {
		p.askBtn.Disable()
		p.taskBtn.Disable()
		p.stopBtn.Enable()
		return
	}
	p.askBtn.Enable()
	p.taskBtn.Enable()
	p.stopBtn.Disable()
}

// guidanceDialog asks the user for free-text guidance (pipeline.Guidance).
type guidanceDialog struct {
	win fyne.Window
	do  func(func()) // runs on the UI goroutine (Workbench.do)
}

// Guide implements pipeline.Guidance; an empty answer stops the loop.
func (g guidanceDialog) Guide(ctx context.Context, q pipeline.Question) (string, error) {
	answer := make(chan string, 1)
	var d dialog.Dialog
	doAndWait(g.do, func() {
		entry := widget.NewMultiLineEntry()
		entry.SetPlaceHolder("What should it try next? (empty: stop)")
		detail := widget.NewLabel(tail(q.Detail, 1500))
		detail.Wrapping = fyne.TextWrapWord
		content := container.NewBorder(detail, nil, nil, nil, entry)
		d = dialog.NewCustomConfirm(q.Title, "Continue", "Stop", content, func(ok bool) {
			if ok {
				answer <- entry.Text
			} else {
				answer <- ""
			}
		}, g.win)
		d.Resize(fyne.NewSize(640, 420))
		d.Show()
	})
	select {
	case a := <-answer:
		return a, nil
	case <-ctx.Done():
		g.do(d.Hide)
		return "", ctx.Err()
	}
}

// runTask runs the whole pipeline (plan → patch → verify → debug → update)
// on the prompt's request, with approvals in dialogs and progress streamed
// into the answer area.
func (p *bottomPanes) runTask() {
	w := p.w
	request := strings.TrimSpace(p.prompt.Text)
	if request == "" || w.project == nil {
		return
	}
	if w.engine == nil {
		dialog.ShowInformation("No model loaded", "The pipeline needs a model to plan and write patches: load a GGUF model first.", w.win)
		return
	}
	w.prepareUpdates() // the task's patches will update the graph
	cgp, ok := w.project.(interface{ Codegraph() *codegraph.Project })
	if !ok {
		w.showError("Task unavailable", fmt.Errorf("this project has no code graph engine"), "")
		return
	}
	proj := cgp.Codegraph()
	task := newTaskChanges(proj.Root(), request)
	cfg := pipeline.Config{
		Root:      proj.Root(),
		Engine:    w.engine,
		ModelName: w.model,
		Approver:  w.newApprover().forTask(task),
		Guidance:  guidanceDialog{w.win, w.do},
		Graph:     proj,
	}
	var runOpts []runtime.Option
	if w.store != nil {
		cfg.Memory = w.store
		runOpts = append(runOpts, runtime.WithRecorder(w.store))
		cfg.Context = pipeline.RetrievalContext{Graph: proj.Graph, Engine: w.engine, Cache: w.store, ModelID: w.model}
	} else {
		cfg.Context = pipeline.RetrievalContext{Graph: proj.Graph, Engine: w.engine, ModelID: w.model}
	}
	cfg.Runner = runtime.New(runOpts...)
	var mu sync.Mutex
	var log strings.Builder
	var last time.Time
	show := func(force bool) {
		mu.Lock()
		if !force && time.Since(last) < 100*time.Millisecond {
			mu.Unlock()
			return
		}
		last = time.Now()
		text := tail(log.String(), 20000)
		mu.Unlock()
		p.w.do(func() { p.answer.SetText(text); p.answerBox.ScrollToBottom() })
	}
	cfg.OnEvent = func(ev pipeline.Event) {
		task.observe(ev)
		mu.Lock()
		log.WriteString(eventText(ev))
		mu.Unlock()
		show(ev.Type != pipeline.EventToken)
	}
	pl, err := pipeline.New(cfg)
	if err != nil {
		w.showError("Cannot start the task", err, "Check the project's .codeloom/policy.yaml.")
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.askMu.Lock()
	p.askCancel = cancel
	p.askMu.Unlock()
	p.setBusy(true)
	p.answer.SetText("Task: " + request + "\n")
	go func() {
		defer cancel()
		out, err := pl.Run(ctx, request)
		// A task that failed after changing files offers to put them all
		// back in one step (asked through the same dialogs as the task).
		if out != nil && pipeline.NeedsRollbackOffer(out) {
			res, rerr := pl.OfferRollback(ctx, out)
			mu.Lock()
			switch {
			case rerr != nil:
				fmt.Fprintf(&log, "\n[rollback failed: %v]\n", rerr)
			case res != nil:
				fmt.Fprintf(&log, "\n[rolled back: %s]\n", strings.Join(res.Restored, ", "))
			default:
				log.WriteString("\n[the task's changes stay; History → Undo last change, or `codeloom rollback`]\n")
			}
			mu.Unlock()
		}
		mu.Lock()
		switch {
		case err != nil:
			fmt.Fprintf(&log, "\n[task stopped: %v]\n", err)
		case out != nil && out.OK():
			log.WriteString("\n[task done: the gates pass]\n")
		default:
			log.WriteString("\n[task ended without passing gates]\n")
		}
		mu.Unlock()
		show(true)
		p.w.do(func() {
			if w.project == nil {
				p.setBusy(false)
				return
			}
			finish := func() {
				defer p.setBusy(false) // last: tests wait on it
				if n, ok := w.snap.Node(w.code.NodeID()); ok && !w.code.Dirty() {
					w.openCode(n)
				}
				p.refresh()
				w.setStatus("Task finished: see the Prompt tab; runs, versions and lessons were recorded")
				w.writeState()
			}
			g := w.project.Graph()
			if g == nil {
				finish()
				return
			}
			// The new graph is indexed off the UI goroutine, then shown.
			w.setGraphThen(g, func() {
				w.rebuildView()
				finish()
			})
		})
	}()
}

// eventText renders a pipeline event for the answer area.
func eventText(ev pipeline.Event) string {
	switch ev.Type {
	case pipeline.EventToken:
		return ev.Text
	case pipeline.EventStep:
		return fmt.Sprintf("\n▶ %s\n", ev.Step)
	case pipeline.EventStepDone:
		status := "ok"
		if !ev.OK {
			status = "failed"
		}
		return fmt.Sprintf("\n  %s %s (%s)\n", ev.Step, status, ev.Elapsed.Round(time.Millisecond))
	case pipeline.EventPlan:
		return "\nPlan:\n" + ev.Text + "\n"
	case pipeline.EventQuestion:
		return "\n? " + ev.Question.Title + "\n"
	case pipeline.EventAnswer:
		ans := "no"
		if ev.OK {
			ans = "yes"
		}
		return fmt.Sprintf("  → %s %s\n", ans, ev.Text)
	case pipeline.EventGate:
		if g := ev.Gate; g != nil {
			s := fmt.Sprintf("\n  gate %s: %s (%s, peak %s)", g.Name, g.Status, g.Wall.Round(time.Millisecond), humanBytes(g.PeakRSS))
			if g.Note != "" {
				s += " — " + g.Note
			}
			if g.Status != "passed" && g.Output != "" {
				s += "\n" + tail(g.Output, 1500)
			}
			return s + "\n"
		}
	case pipeline.EventPatch:
		if ev.Changes != nil {
			return "\n  patch (dry run): " + ev.Changes.Summary() + "\n" + tail(ev.Changes.Diff(), 3000) + "\n"
		}
	case pipeline.EventApplied:
		if ev.Changes != nil {
			return "\n  applied: " + ev.Changes.Summary() + "\n"
		}
	default:
		if ev.Text != "" {
			return "\n" + ev.Text + "\n"
		}
	}
	return ""
}
