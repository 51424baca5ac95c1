package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"codeloom/app/patch"
	"gopkg.in/yaml.v3"
)

// PolicyFile is where a project's policy lives, relative to its root.
const PolicyFile = ".codeloom/policy.yaml"

// Gate names, in the order they run.
const (
	GateSyntax = "syntax" // python -m py_compile on changed files, go vet
	GateStatic = "static" // ruff, mypy, staticcheck when on PATH
	GateTests  = "tests"  // the project's own tests
	GateProbe  = "probe"  // a run of the entry point
)

// GateOrder lists the gates in the order they run.
var GateOrder = []string{GateSyntax, GateStatic, GateTests, GateProbe}

// GatePolicy configures one gate.
type GatePolicy struct {
	// Enabled turns the gate on or off (on when absent).
	Enabled *bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// Command replaces the default command (argv, run in the project root).
	Command []string `yaml:"command,omitempty" json:"command,omitempty"`
	// Timeout bounds the gate, e.g. "2m" (gate default when empty).
	Timeout string `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// On reports whether the gate is enabled.
func (g GatePolicy) On() bool { return g.Enabled == nil || *g.Enabled }

// Policy is a project's .codeloom/policy.yaml:
//
//	max_fix_attempts: 4      # debug-loop rounds before asking for guidance
//	max_reasks: 2            # re-asks for a malformed or inapplicable patch
//	allow_overwrite: false   # may FILE: blocks replace existing files?
//	gates:
//	  syntax: {enabled: true, timeout: 1m}
//	  static: {enabled: true}              # ruff/mypy/staticcheck when installed
//	  tests:  {command: [python3, -m, unittest, discover], timeout: 5m}
//	  probe:  {command: [python3, -m, inventory.cli, report], timeout: 30s}
//	limits: {memory_mb: 1024, procs: 128}
//	git: {commit: true}      # commit each landed patch (only its files)
type Policy struct {
	MaxFixAttempts int `yaml:"max_fix_attempts,omitempty" json:"max_fix_attempts"`
	MaxReasks      int `yaml:"max_reasks,omitempty" json:"max_reasks"`
	// AllowOverwrite lets FILE: blocks replace existing files (off: they
	// only create files, and existing files change through diffs or
	// SEARCH/REPLACE blocks, which show exactly what changes).
	AllowOverwrite bool                  `yaml:"allow_overwrite,omitempty" json:"allow_overwrite,omitempty"`
	Gates          map[string]GatePolicy `yaml:"gates,omitempty" json:"gates,omitempty"`
	Limits         struct {
		MemoryMB int `yaml:"memory_mb,omitempty" json:"memory_mb,omitempty"`
		Procs    int `yaml:"procs,omitempty" json:"procs,omitempty"`
	} `yaml:"limits,omitempty" json:"limits"`
	// Git is the opt-in git integration.
	Git struct {
		// Commit commits each landed patch on the current branch, with a
		// message saying what and why; only the files the patch touched
		// are committed, never the user's other staged changes.
		Commit bool `yaml:"commit,omitempty" json:"commit,omitempty"`
	} `yaml:"git,omitempty" json:"git"`
}

// maxPolicyBytes bounds the policy file read.
const maxPolicyBytes = 1 << 20

// Defaults used when the policy file leaves a value out.
const (
	DefaultMaxFixAttempts = 4
	DefaultMaxReasks      = 2
	DefaultMemoryMB       = 2048
	DefaultProcs          = 256
)

// Gate returns the policy of gate name (zero value: enabled, defaults).
func (p Policy) Gate(name string) GatePolicy { return p.Gates[name] }

// TimeoutOf returns the configured timeout of a gate, or def.
func (p Policy) TimeoutOf(name string, def time.Duration) (time.Duration, error) {
	s := p.Gate(name).Timeout
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("policy: gates.%s.timeout %q is not a positive duration like \"90s\"", name, s)
	}
	return d, nil
}

// LoadPolicy reads <root>/.codeloom/policy.yaml; a missing file gives the
// defaults. Unknown keys and bad values are errors naming the problem.
func LoadPolicy(root string) (Policy, error) {
	p := Policy{}
	path := filepath.Join(root, filepath.FromSlash(PolicyFile))
	data, err := patch.ReadRegular(path, maxPolicyBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return p, fmt.Errorf("policy %s: %w", path, err)
	default:
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
			return Policy{}, fmt.Errorf("policy %s: %w", path, err)
		}
	}
	for name := range p.Gates {
		if !slices.Contains(GateOrder, name) {
			return Policy{}, fmt.Errorf("policy %s: unknown gate %q (known: syntax, static, tests, probe)", path, name)
		}
		if _, err := p.TimeoutOf(name, time.Second); err != nil {
			return Policy{}, fmt.Errorf("policy %s: %w", path, err)
		}
	}
	if p.MaxFixAttempts < 0 || p.MaxReasks < 0 {
		return Policy{}, fmt.Errorf("policy %s: max_fix_attempts and max_reasks must not be negative", path)
	}
	if p.Limits.MemoryMB < 0 || p.Limits.Procs < 0 {
		return Policy{}, fmt.Errorf("policy %s: limits.memory_mb and limits.procs must not be negative", path)
	}
	if p.MaxFixAttempts == 0 {
		p.MaxFixAttempts = DefaultMaxFixAttempts
	}
	if p.MaxReasks == 0 {
		p.MaxReasks = DefaultMaxReasks
	}
	if p.Limits.MemoryMB == 0 {
		p.Limits.MemoryMB = DefaultMemoryMB
	}
	if p.Limits.Procs == 0 {
		p.Limits.Procs = DefaultProcs
	}
	return p, nil
}
