package workflow

import (
	"strings"
)

// its depends_on plus the steps whose outputs its templates use. w must be valid.
func Dependencies(w *Workflow) map[string][]string {
	names := map[string]string{}
	for _, s := range w.Steps {
		names[s.OutputName()] = s.ID
	}
	deps := map[string][]string{}
	for i := range w.Steps {
		s := &w.Steps[i]
		seen := map[string]bool{}
		for _, d := range s.DependsOn {
			if !seen[d] {
				seen[d] = true
				deps[s.ID] = append(deps[s.ID], d)
			}
		}
		for _, f := range s.templates() {
			refs, _ := templateRefs(f.text)
			for _, r := range refs {
				if _, local := s.With[r]; local && !strings.HasPrefix(f.field, "with.") {
					continue
				}
				if owner, ok := names[r]; ok && owner != s.ID && !seen[owner] {
					seen[owner] = true
					deps[s.ID] = append(deps[s.ID], owner)
				}
			}
		}
	}
	addGroupDeps(w.Steps, deps)
	return deps
}

// addGroupDeps makes every step of a parallel group wait for the steps of
// the lower groups.
func addGroupDeps(steps []Step, deps map[string][]string) {
	for _, s := range steps {
		if s.Group <= 0 || s.ID == "" {
			continue
		}
		have := map[string]bool{}
		for _, d := range deps[s.ID] {
			have[d] = true
		}
		for _, o := range steps {
			if o.ID != "" && o.ID != s.ID && o.Group > 0 && o.Group < s.Group && !have[o.ID] {
				have[o.ID] = true
				deps[s.ID] = append(deps[s.ID], o.ID)
			}
		}
	}
}

// findCycle returns one dependency cycle as a list of step ids whose first
// and last elements are equal, or nil.
func findCycle(steps []Step, deps map[string][]string) []string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var cycle []string
	var visit func(id string) bool
	visit = func(id string) bool {
		color[id] = grey
		stack = append(stack, id)
		for _, d := range deps[id] {
			switch color[d] {
			case grey:
				for i, s := range stack {
					if s == d {
						cycle = append(append([]string(nil), stack[i:]...), d)
						return true
					}
				}
			case white:
				if visit(d) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
		return false
	}
	for _, s := range steps {
		if s.ID != "" && color[s.ID] == white && visit(s.ID) {
			// Report the cycle in execution order (dependency first).
			for i, j := 0, len(cycle)-1; i < j; i, j = i+1, j-1 {
				cycle[i], cycle[j] = cycle[j], cycle[i]
			}
			return cycle
		}
	}
	return nil
}
