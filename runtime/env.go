package runtime

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// buildEnv composes a run's environment: the inherited one minus
// spec.DropEnv, then the variables of spec.DotEnv, then spec.Env (later
// entries win). The runner's own marker variable is never inherited.
func buildEnv(inherited []string, spec Spec) ([]string, error) {
	drop := map[string]bool{MarkerEnv: true}
	for _, k := range spec.DropEnv {
		drop[k] = true
	}
	vals := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	for _, kv := range inherited {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || drop[k] {
			continue
		}
		set(k, v)
	}
	if spec.DotEnv != "" {
		p := spec.DotEnv
		if !filepath.IsAbs(p) && spec.Dir != "" {
			p = filepath.Join(spec.Dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("run: load .env: %w", err)
		}
		kvs, err := ParseDotEnv(b)
		if err != nil {
			return nil, fmt.Errorf("run: load %s: %w", p, err)
		}
		for _, kv := range kvs {
			set(kv[0], kv[1])
		}
	}
	for _, kv := range spec.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("run: env entry %q is not KEY=VALUE", kv)
		}
		set(k, v)
	}
	out := make([]string, 0, len(order)+1)
	for _, k := range order {
		out = append(out, k+"="+vals[k])
	}
	return out, nil
}

// ParseDotEnv parses the KEY=VALUE lines of a .env file, in order. It
// accepts comments (#), blank lines, an optional "export " prefix, and
// values in single quotes (literal) or double quotes (\n, \t, \" and \\
// escapes); unquoted values end at " #". A line that is not an assignment is
// an error naming its number.
func ParseDotEnv(b []byte) ([][2]string, error) {
	var out [][2]string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
			return nil, fmt.Errorf("line %d: not a KEY=VALUE assignment", n)
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && v[0] == '\'' && strings.LastIndexByte(v, '\'') > 0:
			v = v[1:strings.LastIndexByte(v, '\'')]
		case len(v) >= 2 && v[0] == '"' && strings.LastIndexByte(v, '"') > 0:
			v = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\"`, `"`, `\\`, `\`).Replace(v[1:strings.LastIndexByte(v, '"')])
		case len(v) > 0 && (v[0] == '"' || v[0] == '\''):
			return nil, fmt.Errorf("line %d: unterminated quote", n)
		default:
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		out = append(out, [2]string{k, v})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
