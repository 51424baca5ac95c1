package ui

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"codeloom/app/workflow"
)

// newProjectShortcut is Ctrl+Shift+N (File → New project from requirements…).
func newProjectShortcut() *desktop.CustomShortcut {
	return &desktop.CustomShortcut{KeyName: fyne.KeyN, Modifier: fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift}
}

// newProjectMenuItem is the File menu's "New project from requirements…".
func newProjectMenuItem(w *Workbench) *fyne.MenuItem {
	it := fyne.NewMenuItem("New project from requirements…", w.NewProjectDialog)
	it.Shortcut = newProjectShortcut()
	return it
}

// pickFolder asks for a folder (the native chooser when enabled, Fyne's
// otherwise or when the native one fails) and calls then with its path on
// the UI goroutine; nothing is called when the user cancels.
func (w *Workbench) pickFolder(title string, then func(string)) {
	fyneDialog := func() {
		d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
			if err != nil {
				w.showError("Folder dialog failed", err, "Type the folder's path instead.")
				return
			}
			if u != nil {
				then(u.Path())
			}
		}, w.win)
		d.Resize(fyne.NewSize(900, 600))
		d.Show()
	}
	if !w.opts.NativeDialogs {
		fyneDialog()
		return
	}
	go func() {
		dir, err := nativeDirectory(title)
		w.do(func() {
			switch {
			case err == nil:
				then(dir)
			case errors.Is(err, errNativeCancelled):
			default:
				slog.Warn("native folder dialog failed, using Fyne's", "err", err)
				fyneDialog()
			}
		})
	}()
}

// checkNewFolder says why dir cannot receive a new project ("" when it can:
// it does not exist or is an empty folder).
func checkNewFolder(dir string) string {
	if strings.TrimSpace(dir) == "" {
		return "choose the folder for the new project"
	}
	if !filepath.IsAbs(dir) {
		return dir + " is not an absolute path"
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return ""
	case err != nil:
		return err.Error()
	case !st.IsDir():
		return dir + " is a file"
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	if len(ents) > 0 {
		return dir + " is not empty; choose a new or empty folder"
	}
	return ""
}

// newProjectForm is the open "New project from requirements" dialog.
type newProjectForm struct {
	req, folder *widget.Entry
	create      *widget.Button
	problem     *widget.Label
}

// NewProjectDialog is File → New project from requirements…: it asks for
// the requirements and a target folder, then runs the built-in new-project
// workflow with the loaded model (architect → coder → tester → tests in an
// isolated workspace → debugger → approved write), showing its steps in the
// Workflow tab, and opens the new project. Without a model it says so.
func (w *Workbench) NewProjectDialog() {
	if w.engine == nil {
		dialog.ShowInformation("No model loaded",
			"Creating a project from requirements needs a model (the architect, coder, tester and debugger roles).\n\n"+
				"Load a GGUF model in the Prompt tab first (or start CodeLoom with CODELOOM_MODEL=path/to/model.gguf).", w.win)
		return
	}
	if w.panes.wf.running {
		dialog.ShowInformation("A workflow is running", "Wait for it to finish, or press Stop in the Workflow tab.", w.win)
		return
	}
	req := widget.NewMultiLineEntry()
	req.SetPlaceHolder("What should the program do? e.g. \"a command line tool that counts the words of a file\"")
	req.SetMinRowsVisible(6)
	req.Wrapping = fyne.TextWrapWord
	folder := widget.NewEntry()
	folder.SetPlaceHolder("/path/to/new-project (new or empty folder)")
	if home, err := os.UserHomeDir(); err == nil {
		folder.SetText(filepath.Join(home, "new-project"))
	}
	problem := widget.NewLabel("")
	problem.Wrapping = fyne.TextWrapWord
	problem.Importance = widget.DangerImportance
	choose := widget.NewButtonWithIcon("Choose…", theme.FolderOpenIcon(), func() {
		w.pickFolder("Folder for the new project", func(dir string) {
			if checkNewFolder(dir) != "" {
				dir = filepath.Join(dir, "new-project")
			}
			folder.SetText(dir)
		})
	})
	content := container.NewBorder(
		widget.NewLabelWithStyle("Requirements", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewVBox(
			widget.NewLabelWithStyle("Target folder", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
			container.NewBorder(nil, nil, nil, choose, folder),
			widget.NewLabel("CodeLoom asks before it runs the generated tests and before it writes the project."),
			problem,
		), nil, nil, req)
	var d dialog.Dialog
	create := widget.NewButtonWithIcon("Create", theme.ConfirmIcon(), func() {
		text, dest := strings.TrimSpace(req.Text), strings.TrimSpace(folder.Text)
		if abs, err := filepath.Abs(dest); err == nil && dest != "" {
			dest = abs
		}
		msg := checkNewFolder(dest)
		if text == "" {
			msg = "write the requirements first"
		}
		if msg != "" {
			problem.SetText("Cannot create: " + msg)
			return
		}
		d.Hide()
		w.newProject = nil
		w.StartNewProject(text, dest)
	})
	create.Importance = widget.HighImportance
	cancel := widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() { d.Hide(); w.newProject = nil })
	body := container.NewBorder(nil, container.NewCenter(container.NewHBox(cancel, create)), nil, nil, content)
	d = dialog.NewCustomWithoutButtons("New project from requirements", body, w.win)
	d.Resize(fyne.NewSize(680, 480))
	d.Show()
	w.newProject = &newProjectForm{req: req, folder: folder, create: create, problem: problem}
	w.writeState()
	w.win.Canvas().Focus(req)
}

// StartNewProject runs the new-project workflow for requirements into dest in
// the background; its steps are shown in the Workflow tab, every write and
// run is approved in a dialog, and the project is opened when written.
func (w *Workbench) StartNewProject(requirements, dest string) {
	p := w.panes.wf
	if w.engine == nil {
		dialog.ShowInformation("No model loaded", "Load a GGUF model in the Prompt tab first.", w.win)
		return
	}
	wf, err := workflow.Builtin("new-project")
	if err != nil {
		w.showError("New project", err, "")
		return
	}
	ctx, ok := p.begin()
	if !ok {
		dialog.ShowInformation("A workflow is running", "Wait for it to finish, or press Stop in the Workflow tab.", w.win)
		return
	}
	w.panes.tabs.Select(w.panes.wfTab)
	p.picker.SetSelected(wf.ID) // shown only: loadSelected does nothing while running
	p.setForm()
	for _, row := range [][2]string{{"requirements", requirements}, {"folder", dest}} {
		l := widget.NewLabel(row[1])
		l.Wrapping = fyne.TextWrapWord
		if row[0] == "folder" {
			l.Wrapping, l.Truncation = fyne.TextWrapOff, fyne.TextTruncateEllipsis // the full path is in the line below
		}
		p.form.Append(row[0], l)
	}
	p.inputs = map[string]*widget.Entry{}
	p.show(wf)
	p.info.SetText("New project from requirements → " + dest)
	p.resetLog(fmt.Sprintf("New project in %s\nRequirements: %s\n", dest, requirements))
	w.setStatus("Creating a new project in " + dest)
	cfg := workflow.NewProjectConfig{
		Requirements: requirements, Dest: dest, Engine: w.engine, Model: w.model,
		Approver: p.approver(),
		OnEvent:  p.event(wf.ID),
	}
	go func() {
		sum, runErr := workflow.NewProject(ctx, cfg)
		text := ""
		if sum != nil {
			text = sum.Text()
		}
		if runErr != nil {
			text += fmt.Sprintf("[stopped: %v]\n", runErr)
		}
		p.appendLog("\n"+text, true)
		w.do(func() {
			defer p.end()
			if sum == nil || !sum.Written {
				w.setStatus("New project not written")
				if runErr != nil && !errors.Is(runErr, ctx.Err()) {
					w.showError("New project not created", runErr, "See the Workflow tab's log for each step; fix the requirements or the model and try again.")
				}
				return
			}
			w.setStatus("New project written to " + dest + ": opening it")
			w.confirmDiscard(func() { w.OpenProject(dest) })
		})
	}()
}
