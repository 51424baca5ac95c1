package pipeline

import (
	"embed"
	"fmt"
	"strings"
	"text/template"

	"codeloom/app/memory"
)

// Roles the pipeline prompts.
const (
	RoleArchitect = "architect"
	RoleCoder     = "coder"
	RoleTester    = "tester"
	RoleDebugger  = "debugger"
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

// Prompts holds the parsed prompt templates (prompts/*.tmpl, embedded).
type Prompts struct {
	t *template.Template
}

// LoadPrompts parses the embedded prompt templates.
func LoadPrompts() (*Prompts, error) {
	t, err := template.New("prompts").Option("missingkey=error").ParseFS(promptFS, "prompts/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("parse prompt templates: %w", err)
	}
	return &Prompts{t: t}, nil
}

// fileView is a file shown in a prompt.
type fileView struct {
	Path    string
	Content string
}

// failureView is a failed check shown to the debugger.
type failureView struct {
	Gate    string
	Command string
	Output  string
}

// promptData is what every template sees.
type promptData struct {
	Role          string
	ProjectName   string
	Original      string // the session's first request
	Request       string // the current cycle's request
	Plan          string
	Context       string
	Lessons       []memory.Lesson
	Files         []fileView
	Guidance      []string
	Failure       failureView
	Frames        []Frame
	PreviousPatch string
	Error         string
	// AllowOverwrite: FILE: blocks may replace existing files.
	AllowOverwrite bool
}

// Render executes the template name ("coder", "debugger", …) with data.
func (p *Prompts) render(name string, data promptData) (string, error) {
	var b strings.Builder
	if err := p.t.ExecuteTemplate(&b, name+".tmpl", data); err != nil {
		return "", fmt.Errorf("render prompt %s: %w", name, err)
	}
	return strings.TrimSpace(b.String()) + "\n", nil
}
