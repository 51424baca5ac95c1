package workflow

import (
	"fmt"
	"sort"
	"strings"
)

// ValidationError lists every problem found in a workflow.
type ValidationError struct {
	Workflow string
	Problems []string
}

// Error lists the problems.
func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("workflow %s: %s", e.Workflow, e.Problems[0])
	}
	return fmt.Sprintf("workflow %s: %d problems:\n  - %s", e.Workflow, len(e.Problems), strings.Join(e.Problems, "\n  - "))
}

// Validate checks w completely before anything runs: ids and names, unique
// step ids and output names, known step types (builtin or listed in
// extraTypes), the fields each type needs, templates that parse and refer
// only to inputs, step-local "with" names and outputs of steps the step
// depends on, unknown dependencies, and dependency cycles (the cycle is
// named). It returns a *ValidationError listing every problem.
func Validate(w *Workflow, extraTypes ...string) error {
	id := w.ID
	if id == "" {
		id = w.Source
	}
	var probs []string
	add := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	if w.ID == "" {
		add("missing id")
	} else if !idRE.MatchString(w.ID) {
		add("id %q: use letters, digits, '_', '.', '-'", w.ID)
	}
	if len(w.Steps) == 0 {
		add("no steps")
	}
	types := map[string]bool{}
	for _, t := range builtinTypes() {
		types[t] = true
	}
	for _, t := range extraTypes {
		types[t] = true
	}
	names := map[string]string{} // visible name → "input" or step id
	for _, in := range w.Inputs {
		switch {
		case !nameRE.MatchString(in.Name):
			add("input %q: names use letters, digits and '_' and start with a letter", in.Name)
		case names[in.Name] != "":
			add("input %q declared twice", in.Name)
		default:
			names[in.Name] = "input"
		}
	}
	steps := map[string]*Step{}
	for i := range w.Steps {
		s := &w.Steps[i]
		if s.ID == "" {
			add("step %d: missing id", i+1)
			continue
		}
		if !nameRE.MatchString(s.ID) {
			add("step %q: ids use letters, digits and '_' and start with a letter", s.ID)
		}
		if steps[s.ID] != nil {
			add("duplicate step id %q", s.ID)
			continue
		}
		steps[s.ID] = s
		out := s.OutputName()
		if !nameRE.MatchString(out) {
			add("step %q: output name %q: use letters, digits and '_'", s.ID, out)
		}
		if prev, ok := names[out]; ok {
			if prev == "input" {
				add("step %q: output %q has the name of an input", s.ID, out)
			} else {
				add("step %q: output %q is also the output of step %q", s.ID, out, prev)
			}
		} else {
			names[out] = s.ID
		}
	}
	sortedTypes := make([]string, 0, len(types))
	for t := range types {
		sortedTypes = append(sortedTypes, t)
	}
	sort.Strings(sortedTypes)
	// Per-step checks and dependency edges (explicit plus template references).
	deps := map[string][]string{}
	for i := range w.Steps {
		s := &w.Steps[i]
		if s.ID == "" || steps[s.ID] != s {
			continue
		}
		switch {
		case s.Type == "":
			add("step %q: missing type (one of %s)", s.ID, strings.Join(sortedTypes, ", "))
		case !types[s.Type]:
			add("step %q: unknown type %q (one of %s)", s.ID, s.Type, strings.Join(sortedTypes, ", "))
		}
		switch s.Type {
		case TypeLLM:
			if strings.TrimSpace(s.Prompt) == "" {
				add("step %q: llm step needs a prompt", s.ID)
			}
		case TypeRun:
			if len(s.Command.Args) == 0 {
				add("step %q: run step needs a command", s.ID)
			}
		case TypeWorkflow:
			if strings.TrimSpace(s.Workflow) == "" {
				add("step %q: workflow step needs workflow: NAME or a file path", s.ID)
			}
		case TypePatch:
			if strings.TrimSpace(s.Patch) == "" {
				add("step %q: patch step needs patch text (a template)", s.ID)
			}
		case TypeApprove:
			if strings.TrimSpace(s.Question) == "" {
				add("step %q: approve step needs a question", s.ID)
			}
		}
		if s.Retries < 0 {
			add("step %q: retries must be 0 or more", s.ID)
		}
		seen := map[string]bool{}
		for _, d := range s.DependsOn {
			switch {
			case d == s.ID:
				add("step %q depends on itself", s.ID)
			case steps[d] == nil:
				add("step %q depends on unknown step %q", s.ID, d)
			case !seen[d]:
				seen[d] = true
				deps[s.ID] = append(deps[s.ID], d)
			}
		}
		local := map[string]bool{}
		for k := range s.With {
			if !nameRE.MatchString(k) {
				add("step %q: with name %q: use letters, digits and '_'", s.ID, k)
			}
			local[k] = true
		}
		for _, f := range s.templates() {
			refs, err := templateRefs(f.text)
			if err != nil {
				add("step %q: %s: %v", s.ID, f.field, err)
				continue
			}
			for _, r := range refs {
				if local[r] && !strings.HasPrefix(f.field, "with.") {
					continue
				}
				owner, ok := names[r]
				switch {
				case !ok:
					add("step %q: %s refers to {{.%s}}, which is no input and no step output", s.ID, f.field, r)
				case owner == "input":
				case owner == s.ID:
					add("step %q: %s refers to its own output {{.%s}}", s.ID, f.field, r)
				case !seen[owner]:
					seen[owner] = true
					deps[s.ID] = append(deps[s.ID], owner)
				}
			}
		}
	}
	for i := range w.Steps {
		s := &w.Steps[i]
		if s.Group < 0 {
			add("step %q: group must be 1 or more", s.ID)
		}
	}
	addGroupDeps(w.Steps, deps)
	for _, o := range w.Outputs {
		if !nameRE.MatchString(o.Name) {
			add("output %q: use letters, digits and '_'", o.Name)
		}
		refs, err := templateRefs(o.Value)
		if err != nil {
			add("output %q: %v", o.Name, err)
			continue
		}
		for _, r := range refs {
			if _, ok := names[r]; !ok {
				add("output %q refers to {{.%s}}, which is no input and no step output", o.Name, r)
			}
		}
	}
	if cyc := findCycle(w.Steps, deps); cyc != nil {
		add("dependency cycle: %s", strings.Join(cyc, " → "))
	}
	if len(probs) > 0 {
		return &ValidationError{Workflow: id, Problems: probs}
	}
	return nil
}

// field is one template-bearing field of a step.
type field struct{ field, text string }

func (s *Step) templates() []field {
	var fs []field
	add := func(name, text string) {
		if text != "" {
			fs = append(fs, field{name, text})
		}
	}
	add("prompt", s.Prompt)
	add("system", s.System)
	add("patch", s.Patch)
	add("question", s.Question)
	add("detail", s.Detail)
	add("dir", s.Dir)
	for i, a := range s.Command.Args {
		add(fmt.Sprintf("command[%d]", i), a)
	}
	keys := make([]string, 0, len(s.With))
	for k := range s.With {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add("with."+k, s.With[k])
	}
	return fs
}

// Dependencies returns, for every step id, the ids of the steps it waits for:
