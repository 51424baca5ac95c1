package codegraph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Manifests are read with bytes.Lines rather than a bufio.Scanner: a line
// longer than the scanner's 64 KiB limit would silently end the scan.

// parseManifest extracts the names of required packages from a manifest.
func parseManifest(rel string, src []byte) ([]string, error) {
	var names []string
	var err error
	switch path.Base(rel) {
	case "requirements.txt":
		names = parseRequirements(src)
	case "pyproject.toml":
		names = parsePyproject(src)
	case "go.mod":
		names = parseGoModRequires(src)
	case "package.json":
		names, err = parsePackageJSON(src)
	}
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", rel, err)
	}
	seen := map[string]bool{}
	out := names[:0]
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

var reqName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*`)

// parseRequirements reads pip requirement lines ("name[extra]>=1 ; marker").
func parseRequirements(src []byte) []string {
	var out []string
	for l := range bytes.Lines(src) {
		line := strings.TrimSpace(string(l))
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "-") || strings.Contains(line, "://") {
			continue
		}
		if m := reqName.FindString(line); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// parsePyproject reads PEP 621 dependencies, optional dependencies and
// Poetry dependency tables from a pyproject.toml, line by line.
func parsePyproject(src []byte) []string {
	var out []string
	section := ""
	inArray := false
	addQuoted := func(s string) {
		for _, part := range strings.Split(s, ",") {
			part = strings.TrimSpace(part)
			if len(part) >= 2 && (part[0] == '"' || part[0] == '\'') {
				if m := reqName.FindString(strings.Trim(part, `"'`)); m != "" {
					out = append(out, m)
				}
			}
		}
	}
	for l := range bytes.Lines(src) {
		line := strings.TrimSpace(string(l))
		if i := strings.Index(line, "#"); i >= 0 && !strings.ContainsAny(line[:i], `"'`) {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		if inArray {
			if strings.HasPrefix(line, "]") {
				inArray = false
				continue
			}
			addQuoted(strings.TrimSuffix(line, "]"))
			if strings.HasSuffix(line, "]") {
				inArray = false
			}
			continue
		}
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[] ")
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		val = strings.TrimSpace(val)
		switch {
		case (section == "project" && key == "dependencies") || section == "project.optional-dependencies":
			if strings.HasPrefix(val, "[") {
				rest := strings.TrimPrefix(val, "[")
				if strings.HasSuffix(rest, "]") {
					addQuoted(strings.TrimSuffix(rest, "]"))
				} else {
					addQuoted(rest)
					inArray = true
				}
			}
		case strings.HasPrefix(section, "tool.poetry") && strings.HasSuffix(section, "dependencies"):
			if k := strings.Trim(key, `"'`); k != "python" {
				out = append(out, k)
			}
		}
	}
	return out
}

// goModulePath returns the module path declared in a go.mod.
func goModulePath(src []byte) string {
	for l := range bytes.Lines(src) {
		f := strings.Fields(string(l))
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// parseGoModRequires lists the module paths a go.mod requires.
func parseGoModRequires(src []byte) []string {
	var out []string
	inBlock := false
	for l := range bytes.Lines(src) {
		line := strings.TrimSpace(string(l))
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		f := strings.Fields(line)
		switch {
		case inBlock && line == ")":
			inBlock = false
		case inBlock && len(f) >= 2:
			out = append(out, f[0])
		case len(f) >= 2 && f[0] == "require" && f[1] == "(":
			inBlock = true
		case len(f) >= 3 && f[0] == "require":
			out = append(out, f[1])
		}
	}
	return out
}

// parsePackageJSON lists the dependency names of a package.json.
func parsePackageJSON(src []byte) ([]string, error) {
	var pj map[string]json.RawMessage
	if err := json.Unmarshal(src, &pj); err != nil {
		return nil, err
	}
	var out []string
	for _, k := range []string{"dependencies", "devDependencies", "peerDependencies", "optionalDependencies"} {
		raw, ok := pj[k]
		if !ok {
			continue
		}
		var deps map[string]any
		if err := json.Unmarshal(raw, &deps); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		for name := range deps {
			out = append(out, name)
		}
	}
	return out, nil
}

// parseDotEnv reads KEY=VALUE lines (optional "export ", quotes, comments).
func parseDotEnv(src []byte) map[string]string {
	env := map[string]string{}
	for l := range bytes.Lines(src) {
		line := strings.TrimSpace(string(l))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
			if j := strings.IndexByte(v[1:], v[0]); j >= 0 {
				v = v[1 : j+1]
			}
		} else if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		if k != "" {
			env[k] = v
		}
	}
	return env
}
