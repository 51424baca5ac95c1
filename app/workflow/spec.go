// Package workflow runs declarative multi-step workflows: a YAML file lists
// inputs, outputs and steps (an LLM call with a prompt template, a command run
// through the runtime, a sub-workflow, a patch, a yes/no approval, or a type a
// caller registers), with dependencies, timeouts, retries with backoff and
// continue_on_error. The executor validates a workflow completely before
// anything runs, runs independent steps concurrently under a worker limit,
// cancels the rest when a step fails, streams step state changes to a
// callback (the GUI's workflow pane) and records every step in memory.
//
// It also holds the built-in "new-project" flow (architect → coder → tester →
// tests in an isolated workspace → debugger loop → approved write) and the
// autonomy loop that repeats improvement cycles within a budget.
//
// # File format
//
//	id: hello                  # required, [A-Za-z0-9_.-]
//	description: what it does
//	version: "1"
//	inputs:
//	  - name: who              # referenced in templates as {{.who}}
//	    description: a person
//	    default: world         # an input without default is required
//	outputs:
//	  - name: greeting
//	    value: "{{.greet}}"    # a template over inputs and step outputs
//	steps:
//	  - id: greet
//	    type: run              # llm | run | workflow | patch | approve (or a registered type)
//	    command: ["echo", "hello {{.who}}"]   # or one string, run by sh -c
//	    output: greet          # name of the output (the step id when empty)
//	    timeout: 10s           # per attempt
//	    retries: 2             # extra attempts after a failure
//	    backoff: 200ms         # wait before retry n is backoff * 2^(n-1)
//	    depends_on: [other]    # plus every step whose output a template uses
//	    group: 1               # parallel group: waits for every step of groups 1..n-1
//	    continue_on_error: false
//
// Step fields by type: llm uses prompt (a text/template) and optionally role
// (architect, coder, tester, debugger or any system prompt name) and system;
// run uses command and optionally dir; workflow uses workflow (a built-in
// name or a file path, resolved by the handler) with its inputs given in with;
// patch uses patch (a template yielding edit blocks in app/patch's format);
// approve uses question and optionally detail. Every step may have with: a
// map of local names to templates, rendered first and visible to its other
// templates. Templates see every input and every output of the steps the step
// depends on, by name; referring to any other name is a validation error.
// A run step without a timeout is stopped after DefaultRunTimeout.
//
// # Showing a run (the GUI's workflow pane)
//
// Graph (or DOT) gives the steps as nodes and the dependencies as edges
// before anything runs; Executor.OnEvent receives every state change
// (pending → running → done | failed | skipped) with the step id, attempt,
// error and progress text; a Tracker folds those events into the current
// state per step for redrawing, and StateColor maps a state to a fill
// colour. NewProject runs the "New project from requirements" action with the
// same events. Callers ask the user once before running a workflow (Describe
// lists its steps and commands); steps that write files or run generated code
// ask again themselves through the Approver.
package workflow

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"
	"time"

	"gopkg.in/yaml.v3"
)

// Built-in step types.
const (
	TypeLLM      = "llm"
	TypeRun      = "run"
	TypeWorkflow = "workflow"
	TypePatch    = "patch"
	TypeApprove  = "approve"
)

// builtinTypes are the step types every workflow may use by name (a
// handler must still be registered for a step of that type to run).
func builtinTypes() []string {
	return []string{TypeLLM, TypeRun, TypeWorkflow, TypePatch, TypeApprove}
}

// Workflow is a parsed workflow file.
type Workflow struct {
	ID          string   `yaml:"id" json:"id"`
	Description string   `yaml:"description" json:"description,omitempty"`
	Version     string   `yaml:"version" json:"version,omitempty"`
	Inputs      []Input  `yaml:"inputs" json:"inputs,omitempty"`
	Outputs     []Output `yaml:"outputs" json:"outputs,omitempty"`
	Steps       []Step   `yaml:"steps" json:"steps"`

	// Source is where the workflow was read from (a path or "builtin:NAME").
	Source string `yaml:"-" json:"source,omitempty"`
}

// Input is a named input of a workflow. An input without a default is required.
type Input struct {
	Name        string  `yaml:"name" json:"name"`
	Description string  `yaml:"description" json:"description,omitempty"`
	Default     *string `yaml:"default" json:"default,omitempty"`
}

// Required reports whether the input has no default.
func (in Input) Required() bool { return in.Default == nil }

// Output is a named result of a workflow, a template over inputs and step outputs.
type Output struct {
	Name  string `yaml:"name" json:"name"`
	Value string `yaml:"value" json:"value"`
}

// Step is one step of a workflow.
type Step struct {
	ID          string            `yaml:"id" json:"id"`
	Type        string            `yaml:"type" json:"type"`
	Description string            `yaml:"description" json:"description,omitempty"`
	Role        string            `yaml:"role" json:"role,omitempty"`
	System      string            `yaml:"system" json:"system,omitempty"`
	Prompt      string            `yaml:"prompt" json:"prompt,omitempty"`
	Command     Command           `yaml:"command" json:"command,omitempty"`
	Dir         string            `yaml:"dir" json:"dir,omitempty"`
	Workflow    string            `yaml:"workflow" json:"workflow,omitempty"`
	Patch       string            `yaml:"patch" json:"patch,omitempty"`
	Question    string            `yaml:"question" json:"question,omitempty"`
	Detail      string            `yaml:"detail" json:"detail,omitempty"`
	With        map[string]string `yaml:"with" json:"with,omitempty"`
	Output      string            `yaml:"output" json:"output,omitempty"`
	Timeout     Duration          `yaml:"timeout" json:"timeout,omitempty"`
	Retries     int               `yaml:"retries" json:"retries,omitempty"`
	Backoff     Duration          `yaml:"backoff" json:"backoff,omitempty"`
	DependsOn   []string          `yaml:"depends_on" json:"depends_on,omitempty"`
	// Group, when > 0, puts the step in a parallel group: it waits for every
	// step of the lower groups (groups run in order, steps inside one
	// group concurrently).
	Group           int  `yaml:"group" json:"group,omitempty"`
	ContinueOnError bool `yaml:"continue_on_error" json:"continue_on_error,omitempty"`
}

// OutputName is the name under which the step's output is visible.
func (s Step) OutputName() string {
	if s.Output != "" {
		return s.Output
	}
	return s.ID
}

// Command is a step's command: a list of arguments, or one string that is
// run by "sh -c". Each element is a template.
type Command struct {
	Args  []string
	Shell bool // the YAML gave one string: Args is ["sh", "-c", string]
}

// UnmarshalYAML accepts a string or a list of strings.
func (c *Command) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		if strings.TrimSpace(s) == "" {
			*c = Command{}
			return nil
		}
		*c = Command{Args: []string{"sh", "-c", s}, Shell: true}
		return nil
	case yaml.SequenceNode:
		var args []string
		if err := n.Decode(&args); err != nil {
			return fmt.Errorf("line %d: command must be a string or a list of strings: %w", n.Line, err)
		}
		*c = Command{Args: args}
		return nil
	default:
		return fmt.Errorf("line %d: command must be a string or a list of strings", n.Line)
	}
}

// MarshalYAML writes the command back in the form it was read.
func (c Command) MarshalYAML() (any, error) {
	if c.Shell && len(c.Args) == 3 {
		return c.Args[2], nil
	}
	return c.Args, nil
}

// Duration is a time.Duration written as "1.5s", "200ms" or a number of seconds.
type Duration time.Duration

// UnmarshalYAML parses "10s"-style durations or plain seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: duration: %w", n.Line, err)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		*d = 0
		return nil
	}
	if v, err := time.ParseDuration(s); err == nil {
		if v < 0 {
			return fmt.Errorf("line %d: negative duration %q", n.Line, s)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if !isNumber(s) {
		return fmt.Errorf("line %d: bad duration %q (use e.g. 30s, 500ms, 2m)", n.Line, s)
	}
	if _, err := fmt.Sscanf(s, "%g", &secs); err != nil {
		return fmt.Errorf("line %d: bad duration %q: %w", n.Line, s, err)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

var numberRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

func isNumber(s string) bool { return numberRE.MatchString(s) }

// MarshalYAML writes the duration as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

var idRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Parse reads a workflow from YAML. Unknown fields are errors (a typo in a
// field name must not silently change what runs). It does not validate the
// workflow: call Validate.
func Parse(data []byte, source string) (*Workflow, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	var w Workflow
	if err := dec.Decode(&w); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("workflow %s: file is empty", source)
		}
		return nil, fmt.Errorf("workflow %s: %w", source, err)
	}
	w.Source = source
	return &w, nil
}

// maxFileSize bounds a workflow file: real ones are a few KiB, and a
// mistaken path (a large file, a device) must not be read into memory.
const maxFileSize = 1 << 20

// Load reads and parses a workflow file (at most 1 MiB).
func Load(path string) (*Workflow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("workflow %s: %w", path, err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("workflow %s: larger than %d KiB; not a workflow file", path, maxFileSize>>10)
	}
	return Parse(data, path)
}

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

// templateFuncs are the functions available in every template.
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"trim":   strings.TrimSpace,
		"lower":  strings.ToLower,
		"upper":  strings.ToUpper,
		"indent": func(n int, s string) string { return indentText(s, strings.Repeat(" ", n)) },
		"default": func(def, s string) string {
			if strings.TrimSpace(s) == "" {
				return def
			}
			return s
		},
	}
}

// templateRefs parses text as a template and returns the top-level names it
// reads ({{.name}}, {{.name.x}}, {{if .name}} …), in order of appearance.
func templateRefs(text string) ([]string, error) {
	t, err := template.New("t").Funcs(templateFuncs()).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	var refs []string
	seen := map[string]bool{}
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		if n == nil {
			return
		}
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.FieldNode:
			if len(n.Ident) > 0 && !seen[n.Ident[0]] {
				seen[n.Ident[0]] = true
				refs = append(refs, n.Ident[0])
			}
		case *parse.ChainNode:
			walk(n.Node)
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.TemplateNode:
			walk(n.Pipe)
		}
	}
	if t.Tree != nil {
		walk(t.Tree.Root)
	}
	return refs, nil
}

// render executes text as a template over vars.
func render(name, text string, vars map[string]string) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	t, err := template.New(name).Funcs(templateFuncs()).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("%s: template: %w", name, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, vars); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return b.String(), nil
}

// CheckInputs returns the inputs a run will see: given values plus defaults.
// It fails, naming them, when required inputs are missing or unknown inputs
// are given.
func CheckInputs(w *Workflow, given map[string]string) (map[string]string, error) {
	vals := map[string]string{}
	known := map[string]bool{}
	var missing, unknown []string
	for _, in := range w.Inputs {
		known[in.Name] = true
		if v, ok := given[in.Name]; ok {
			vals[in.Name] = v
		} else if in.Default != nil {
			vals[in.Name] = *in.Default
		} else {
			missing = append(missing, in.Name)
		}
	}
	for k := range given {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	var probs []string
	if len(missing) > 0 {
		probs = append(probs, "missing input "+strings.Join(missing, ", ")+" (give it with --input NAME=VALUE)")
	}
	if len(unknown) > 0 {
		probs = append(probs, "unknown input "+strings.Join(unknown, ", "))
	}
	if len(probs) > 0 {
		return nil, &ValidationError{Workflow: w.ID, Problems: probs}
	}
	return vals, nil
}
