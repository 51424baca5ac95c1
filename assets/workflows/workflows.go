// Package workflows holds CodeLoom's built-in workflow files (*.yaml),
// embedded in the binary. Package app/workflow resolves them by name.
package workflows

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Names returns the names of the built-in workflows, sorted.
func Names() []string {
	ents, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Get returns the YAML text of the built-in workflow name.
func Get(name string) ([]byte, error) {
	data, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in workflow %q (built-ins: %s)", name, strings.Join(Names(), ", "))
	}
	return data, nil
}
