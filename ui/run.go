package ui

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"os"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"codeloom/models"

	_ "codeloom/ui/internal/localefix" // before Fyne reads the locale
)

// AppID is the application ID (also in FyneApp.toml).
const AppID = "dev.codeloom.app"

//go:embed icon.png
var iconPNG []byte

// Icon is the app icon (the same image as assets/icon.png).
func Icon() fyne.Resource { return fyne.NewStaticResource("codeloom.png", iconPNG) }

// RunOptions configure Run.
type RunOptions struct {
	Dir string // project to open at start; "" opens none
	// Automation is the state file for end-to-end tests (default: $CODELOOM_AUTOMATION).
	Automation string
	// NativeDialogs uses sqweek/dialog (default: $CODELOOM_NATIVE_DIALOGS=1).
	NativeDialogs bool
	// LoadModel loads GGUF models for the Prompt tab (nil: no model loading).
	LoadModel ModelLoader
	// ModelPath is loaded at start (default: $CODELOOM_MODEL).
	ModelPath string
	// Engine, when set, is the model from the start (main.go: a scripted
	// model from $CODELOOM_SCRIPT for demos and end-to-end tests), named
	// EngineName in the Prompt tab.
	Engine     models.Engine
	EngineName string
}

// Run opens the desktop app and blocks until its window closes or ctx ends.
func Run(ctx context.Context, opts RunOptions) error {
	if opts.Automation == "" {
		opts.Automation = os.Getenv("CODELOOM_AUTOMATION")
	}
	if os.Getenv("CODELOOM_NATIVE_DIALOGS") == "1" {
		opts.NativeDialogs = true
	}
	if opts.ModelPath == "" {
		opts.ModelPath = os.Getenv("CODELOOM_MODEL")
	}
	a := app.NewWithID(AppID)
	a.SetIcon(Icon())
	a.Settings().SetTheme(newLightTheme())
	w, err := NewWorkbench(a, Options{Automation: opts.Automation, NativeDialogs: opts.NativeDialogs, LoadModel: opts.LoadModel, Engine: opts.Engine, Dir: opts.Dir})
	if err != nil {
		return fmt.Errorf("open window: %w", err)
	}
	if opts.Engine != nil && opts.EngineName != "" {
		w.model = opts.EngineName
		w.panes.modelInfo.SetText("Model: " + opts.EngineName)
	}
	w.Window().SetMaster()
	stop := make(chan struct{})
	defer close(stop)
	w.startWatchdog(stop)
	go func() {
		select {
		case <-ctx.Done():
			slog.Info("interrupted: closing the window")
			w.do(w.requestClose)
		case <-stop:
		}
	}()
	w.Window().Show() // opts.Dir is already indexing (NewWorkbench started it)
	if opts.ModelPath != "" {
		w.LoadModel(opts.ModelPath)
	}
	w.writeState()
	a.Run()
	return nil
}
