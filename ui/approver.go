package ui

import (
	"context"
	"errors"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"codeloom/app/pipeline"
)

// Question is a yes/no question for the user: what will happen (the command
// to run, the files a patch changes with a diff summary, the limits).
// It mirrors pipeline.Question.
type Question struct {
	Title  string
	Detail string
}

// Approver asks yes/no questions with native dialogs (sqweek/dialog) when
// enabled, falling back to a Fyne confirm dialog in the window.
type Approver struct {
	win    fyne.Window
	native bool
	// do runs a function on the UI goroutine (fyne.Do; the window's own
	// queue when a Workbench made the Approver).
	do func(func())
	// nativeYesNo is the native dialog; replaced in tests.
	nativeYesNo func(title, detail string) (bool, error)
}

// NewApprover returns an Approver for win. native selects sqweek/dialog
// first (see nativeYesNo for the Linux hazard).
func NewApprover(win fyne.Window, native bool) *Approver {
	return &Approver{win: win, native: native, nativeYesNo: nativeYesNo, do: fyne.Do}
}

// doAndWait runs f on the UI goroutine through do and waits for it; it
// must not be called on that goroutine.
func doAndWait(do func(func()), f func()) {
	done := make(chan struct{})
	do(func() {
		defer close(done)
		f()
	})
	<-done
}

// Approve shows q and waits for the answer. It must not be called on the
// Fyne UI goroutine (it blocks until the user answers). Cancelling ctx
// closes the in-window dialog and returns ctx's error.
func (a *Approver) Approve(ctx context.Context, q Question) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if a.native && a.nativeYesNo != nil {
		type res struct {
			ok  bool
			err error
		}
		ch := make(chan res, 1)
		go func() {
			ok, err := a.nativeYesNo(q.Title, q.Detail)
			ch <- res{ok, err}
		}()
		select {
		case r := <-ch:
			if r.err == nil {
				return r.ok, nil
			}
			// fall back to the in-window dialog
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	answer := make(chan bool, 1)
	var d *dialog.ConfirmDialog
	doAndWait(a.do, func() {
		body, isDiff := questionBody(q.Detail)
		d = dialog.NewCustomConfirm(q.Title, "Yes", "No", body, func(ok bool) { answer <- ok }, a.win)
		switch {
		case q.Detail == "":
			d.Resize(fyne.NewSize(560, d.MinSize().Height)) // a bare question: no empty body
		case isDiff:
			// Room for 100 columns of diff, within the window.
			ws := a.win.Canvas().Size()
			d.Resize(fyne.NewSize(min(max(ws.Width-80, 560), 900), min(max(ws.Height-120, 300), 640)))
		default:
			d.Resize(fyne.NewSize(600, 340))
		}
		d.Show()
	})
	select {
	case ok := <-answer:
		return ok, nil
	case <-ctx.Done():
		a.do(func() { d.Hide() })
		return false, fmt.Errorf("approval %q: %w", q.Title, ctx.Err())
	}
}

// errNativeCancelled reports that the user closed a native dialog.
var errNativeCancelled = errors.New("native dialog cancelled")

// pipelineApprover adapts Approver to pipeline.Approver; with a task it
// adds the task's net change to its questions.
type pipelineApprover struct {
	a    *Approver
	task *taskChanges
}

// Approve implements pipeline.Approver.
func (p pipelineApprover) Approve(ctx context.Context, q pipeline.Question) (bool, error) {
	if p.task != nil {
		q = p.task.explain(q)
	}
	return p.a.Approve(ctx, Question{Title: q.Title, Detail: q.Detail})
}

// ForPipeline returns a as a pipeline.Approver, for running the pipeline
// from the window.
func (a *Approver) ForPipeline() pipeline.Approver { return pipelineApprover{a: a} }

// forTask is ForPipeline for a task whose changes t follows.
func (a *Approver) forTask(t *taskChanges) pipeline.Approver { return pipelineApprover{a: a, task: t} }
