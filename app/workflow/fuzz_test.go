package workflow

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseValidate: no workflow file, however malformed, makes parsing,
// validation, dependency analysis or graph rendering panic.
func FuzzParseValidate(f *testing.F) {
	for _, name := range BuiltinNames() {
		if data, err := os.ReadFile(filepath.Join("..", "..", "assets", "workflows", name+".yaml")); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("id: w\nsteps:\n  - {id: a, type: llm, prompt: \"{{.b}}\"}\n  - {id: b, type: llm, prompt: \"{{.a}}\", group: 2}\n"))
	f.Add([]byte("id: w\nsteps:\n  - {id: a, type: run, command: [\"{{if .x}}\"]}\n"))
	f.Add([]byte("steps: [1, 2, {id: [x]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse(data, "fuzz")
		if err != nil {
			return
		}
		if Validate(w, TypeBuild) != nil {
			return
		}
		Graph(w)
		DOT(w, nil)
		Describe(w)
		CheckInputs(w, map[string]string{"x": "y"})
	})
}
