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
