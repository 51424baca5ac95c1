package codegraph

import (
	"path"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// language describes one source language: its tree-sitter grammar, one
// tags-style query whose capture names follow the contract below, and the few
// rules that differ between languages (how a file is named as a module, how an
// import string becomes candidate module keys). The engine never walks syntax
// trees node by node from Go: every fact it needs comes out of the query,
// which tree-sitter runs in C.
//
// Capture-name contract (the capture that names the role is the outer node):
//
//	@def.class / @def.function / @def.method   a definition; needs @name,
//	                                           optional @body (signature = text
//	                                           before it), @receiver (Go)
//	@doc.owner + @doc                          docstring @doc of definition @doc.owner
//	@ref.call / @ref.use / @ref.inherit        a reference: @name, optional @object
//	                                           (the receiver expression, e.g. "self")
//	@import                                    an import statement: @module, optional
//	                                           @name, @alias, @wildcard
//	@env                                       an environment variable read: @name
//	@export.default                            default export of a JS/TS module: @name
//
// A capture named "<role>.<filter>" where captureTypes has that name plays
// <role> but keeps only the matches whose captured node has one of the
// filter's types: `(_) @object.operand` instead of `[(identifier) (call)]
// @object` finds the same references with one tree-sitter state instead of
// one per branch (see BENCHMARKS.md, tscost). A filter capture whose prefix is
// no role ("check.operand") only filters.
//
// A query may end with a sub query (after subQueryMarker, tsrun.go): its
// patterns run from each node the main patterns capture as @sub, starting
// only at that node, and report their matches after the main query's
// (Python: module-level and class-body assignments; BENCHMARKS.md, cost5).
type language struct {
	name    string   // "python", "go", "javascript", "typescript", "tsx"
	family  string   // languages of one family resolve imports among each other
	exts    []string // file extensions, with the dot
	grammar func() *sitter.Language
	query   string
	// captureTypes maps a filter capture name to the node types it keeps,
	// written as in a query: "(identifier)" for a named node, `"=="` for
	// an anonymous one.
	captureTypes map[string][]string
	// captureKids maps a filter capture name to children rules: a match
	// whose capture holds a node of a rule's outer type is reported once for
	// every named child of it (passing the capture's captureTypes), in its
	// place. A rule is "(outer)", or "(outer) (inner)" for the named children
	// of its named children of type inner. `(_) @object.ops` with rule
	// "(boolean_operator)" finds what `(boolean_operator (_) @object)` finds,
	// without a query step for the operator: ts_query_new analyses every
	// step with children against the grammar (once per process, ~1 ms each
	// for an expression type) and the cursor runs an alternation of them as
	// one state per branch (see BENCHMARKS.md, cost4).
	captureKids map[string][]string

	// selfNames are receiver names that mean "the enclosing class".
	selfNames []string
	// builtins are names whose calls are not counted as unresolved.
	builtins map[string]bool
	// envObjects are the receiver texts (e.g. "os.environ", "os.getenv") of
	// @env captures that really read the environment.
	envObjects map[string]bool
	// importFns are the functions whose @fn capture makes a call an import
	// (e.g. require).
	importFns map[string]bool
	// sharedScope: the files of a module share one scope (Go packages), so a
	// name a file neither defines nor imports may still be bound.
	sharedScope bool
	// docComments: take the comment block right above a definition as its doc.
	docComments bool
	// cleanDoc turns a captured @doc node's text into plain text.
	cleanDoc func(string) string
	// moduleKeys returns the keys under which other files import this file
	// (first is canonical, used for qualified names).
	moduleKeys func(ix *projectInfo, rel string) []string
	// importKeys returns candidate module keys for an import written in file
	// rel, most specific first; ok=false when the import is not project-relative
	// by construction (a bare package name that may be external).
	importKeys func(ix *projectInfo, rel string, module string) []string
	// packageName maps an import string to the external package it names, for
	// matching against manifest packages ("" when none).
	packageName func(module string) string
	// stdlib reports imports of the language's standard library (external,
	// not unresolved, when the project does not define them).
	stdlib func(module string) bool
	// qualSep separates the module key from definition names in qualified names.
	qualSep string
	// implicit maps @ref.implicit tokens to the special methods they call.
	implicit map[string][]string
}

// registry lists the supported languages. Adding a language is one file with a
// constructor returning *language, plus one line here.
func registry() []*language {
	return []*language{
		newPython(),
		newGo(),
		newJavaScript(),
		newTypeScript(),
		newTSX(),
	}
}

// langByExt maps file extensions to languages.
func langByExt(langs []*language) map[string]*language {
	m := map[string]*language{}
	for _, l := range langs {
		for _, e := range l.exts {
			m[e] = l
		}
	}
	return m
}

// projectInfo is what language rules may know about the project: its root
// and manifests (e.g. Go module paths by directory).
type projectInfo struct {
	goModules map[string]string // dir (rel, "" for root) → module path
	dirs      map[string]bool   // rel dirs that contain indexed files
	initDirs  map[string]bool   // rel dirs that contain __init__.py
}

// goModuleFor returns the module path and module dir governing rel.
func (pi *projectInfo) goModuleFor(rel string) (mod, dir string, ok bool) {
	for d := relDir(rel); ; d = relDir(d) {
		if m, found := pi.goModules[d]; found {
			return m, d, true
		}
		if d == "" {
			return "", "", false
		}
	}
}

// relDir returns the folder of the root-relative path rel, "" for the root.
func relDir(rel string) string {
	if d := path.Dir(rel); d != "." {
		return d
	}
	return ""
}

// stripQuotes removes one level of string quotes (', ", `).
func stripQuotes(s string) string {
	s = strings.TrimSpace(s)
	// Python string prefixes such as b"..." or r'...' are not module names.
	if len(s) >= 2 {
		q := s[0]
		if (q == '"' || q == '\'' || q == '`') && s[len(s)-1] == q {
			return s[1 : len(s)-1]
		}
	}
	return s
}
