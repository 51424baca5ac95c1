// Package ui is CodeLoom's desktop app (Fyne): the project window with the
// graph view, the side tree, the code pane, the bottom tabs and the dialogs.
// It renders and forwards: behaviour lives in plain packages (graphview's
// view builders, codegraph, memory) and in small plain functions here
// (files.go) that tests drive without a window.
package ui

import (
	"context"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/graphview"
)

// Graph is what the window reads from one code graph snapshot.
type Graph interface {
	graphview.Source
	Node(id string) (*codegraph.Node, bool)
	// Search returns the IDs of the best fuzzy matches for query, best first.
	Search(query string, limit int) []string
}

// Project is an indexed project folder.
type Project interface {
	Root() string
	Graph() Graph
	// UpdateFiles re-parses the given files (relative paths) and returns the new graph.
	UpdateFiles(ctx context.Context, paths []string) (Graph, error)
	Close() error
}

// updatePreparer is implemented by projects that can get ready for
// incremental updates ahead of the first one (in the background: it may
// take seconds and as much memory as indexing on a large project).
type updatePreparer interface {
	PrepareUpdates(ctx context.Context) error
}

// watcher is implemented by projects that can follow changes on disk.
type watcher interface {
	Watch(ctx context.Context, onChange func(Graph)) error
}

// Opener indexes the folder root, reporting progress, and returns the project.
// store may be nil; when set, the project keeps its graph cache there.
type Opener func(ctx context.Context, root string, store *memory.Store, progress func(done, total int)) (Project, error)

// Store is the part of app/memory the window uses (*memory.Store).
type Store interface {
	AddVersion(memory.Version) (string, error)
	Versions(path string, limit int) ([]memory.Version, error)
	Runs(limit int) ([]memory.RunRecord, error)
	Lessons(limit int) ([]memory.Lesson, error)
	Activities(limit int) ([]memory.Activity, error)
}
