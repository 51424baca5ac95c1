package codegraph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchDebounce is how long the watcher waits after the last file event
// before applying a batch (editors write files in several steps).
const watchDebounce = 150 * time.Millisecond

// Watch keeps the graph current: it watches every project directory with
// fsnotify and, once events settle, applies the changed files with
// UpdateFiles and calls onChange with the new graph (only when it changed).
// It blocks until ctx is cancelled or, at the next change, the project is
// found closed, then returns nil.
func (p *Project) Watch(ctx context.Context, onChange func(*Graph)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", p.root, err)
	}
	defer w.Close()
	if err := p.watchTree(w, ""); err != nil {
		return err
	}
	// After a load from the persisted graph, what updates need (the
	// per-file records and the builder: on a large project as much memory
	// as a cold index) is built at the first change seen, in the
	// background, while the events settle — not at open, where a project
	// that is only browsed would pay it for nothing. Callers that know an
	// edit is coming (the editor, a task) call PrepareUpdates themselves.
	prepStarted := false
	prepare := func() {
		if prepStarted {
			return
		}
		prepStarted = true
		go func() {
			if err := p.PrepareUpdates(ctx); err != nil && ctx.Err() == nil {
				p.log.Warn("codegraph prepare updates", "root", p.root, "err", err)
			}
		}()
	}
	pending := map[string]bool{}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			rel, ok := p.relPath(ev.Name)
			if !ok || p.skipPath(rel) {
				continue
			}
			if ev.Op&fsnotify.Create != 0 {
				if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() {
					// A new directory: watch it and index what is already in it.
					if err := p.watchTree(w, rel); err != nil {
						p.log.Warn("codegraph watch", "dir", rel, "err", err)
					}
					filepath.WalkDir(ev.Name, func(fp string, d os.DirEntry, err error) error {
						if err == nil && !d.IsDir() {
							if r, ok := p.relPath(fp); ok {
								pending[r] = true
							}
						}
						return nil
					})
				}
			}
			if ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
				// A removed directory takes its indexed files with it.
				p.mu.Lock()
				for f := range p.stamps { // every walked file, also before the per-file records are loaded
					if strings.HasPrefix(f, rel+"/") {
						pending[f] = true
					}
				}
				p.mu.Unlock()
			}
			pending[rel] = true
			prepare()
			timer.Reset(watchDebounce)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			p.log.Warn("codegraph watch", "root", p.root, "err", err)
		case <-timer.C:
			paths := make([]string, 0, len(pending))
			for r := range pending {
				paths = append(paths, r)
			}
			pending = map[string]bool{}
			before := p.Graph()
			g, err := p.UpdateFiles(ctx, paths)
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, errProjectClosed) {
					return nil
				}
				p.log.Warn("codegraph watch update", "root", p.root, "err", err)
				continue
			}
			if g != before && onChange != nil {
				onChange(g)
			}
		}
	}
}

// skipPath reports paths inside directories the index never walks.
func (p *Project) skipPath(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if skipDirs[part] {
			return true
		}
	}
	return false
}

// watchTree adds rel and its subdirectories (not skipped, not ignored, not
// symlinks) to w.
func (p *Project) watchTree(w *fsnotify.Watcher, rel string) error {
	abs := filepath.Join(p.root, filepath.FromSlash(rel))
	if err := w.Add(abs); err != nil {
		return fmt.Errorf("watch %s: %w", abs, err)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil // vanished or unreadable: nothing below to watch
	}
	for _, e := range entries {
		if !e.IsDir() || e.Type()&os.ModeSymlink != 0 || skipDirs[e.Name()] || isVirtualenv(filepath.Join(abs, e.Name())) {
			continue
		}
		child := path.Join(rel, e.Name())
		if p.gitIgnored(child) {
			continue
		}
		if err := p.watchTree(w, child); err != nil {
			p.log.Warn("codegraph watch", "dir", child, "err", err)
		}
	}
	return nil
}
