package workflow

import (
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
)

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
