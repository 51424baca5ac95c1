package codegraph

import (
	"strings"

	"github.com/smacker/go-tree-sitter/golang"
)

// goQuery extracts Go functions, methods (with receiver type and variable),
// struct and interface types, calls, composite literals, embedded types,
// imports and os.Getenv reads.
const goQuery = `
(function_declaration name: (identifier) @name body: (block)? @body) @def.function
(method_declaration
  receiver: (parameter_list (parameter_declaration name: (identifier)? @receiver.name type: (_) @receiver))
  name: (field_identifier) @name body: (block)? @body) @def.method
(type_spec name: (type_identifier) @name type: (struct_type) @body) @def.class
(type_spec name: (type_identifier) @name type: (interface_type "{" @body)) @def.class
(type_spec type: (interface_type (method_elem name: (field_identifier) @name) @def.method))
(type_spec name: (type_identifier) @name type: [(slice_type) (map_type) (array_type) (pointer_type) (function_type) (channel_type) (type_identifier) (qualified_type) (generic_type)]) @def.class
(type_spec name: (type_identifier) @name type: [(slice_type) (map_type) (array_type) (pointer_type) (channel_type) (type_identifier) (qualified_type) (generic_type)] @object) @ref.assign

(type_alias name: (type_identifier) @name type: (_)) @def.class
(type_alias name: (type_identifier) @name type: (_) @object) @ref.assign

(call_expression function: (identifier) @name) @ref.call
(call_expression function: [(identifier) (selector_expression)] @object arguments: (argument_list [(identifier) (selector_expression)] @name) @body) @ref.arg
(call_expression function: (selector_expression operand: (_) @object field: (field_identifier) @name)) @ref.call

(composite_literal type: (type_identifier) @name) @ref.use
(composite_literal type: (qualified_type package: (package_identifier) @object name: (type_identifier) @name)) @ref.use
(argument_list (identifier) @name) @ref.use
(argument_list (selector_expression operand: (identifier) @object field: (field_identifier) @name)) @ref.use

(field_declaration_list (field_declaration !name type: (type_identifier) @name) @ref.inherit)
(field_declaration_list (field_declaration !name type: (pointer_type (type_identifier) @name)) @ref.inherit)
(field_declaration_list (field_declaration !name type: (qualified_type package: (package_identifier) @object name: (type_identifier) @name)) @ref.inherit)
(field_declaration_list (field_declaration !name type: (pointer_type (qualified_type package: (package_identifier) @object name: (type_identifier) @name))) @ref.inherit)
(type_spec type: (interface_type (type_elem . (type_identifier) @name .) @ref.inherit))
(type_spec type: (interface_type (type_elem . (qualified_type package: (package_identifier) @object name: (type_identifier) @name) .) @ref.inherit))

(type_spec type: (struct_type (field_declaration_list (field_declaration name: (field_identifier) @name type: (_) @object) @ref.assign)))
(type_spec type: (struct_type (field_declaration_list (field_declaration !name type: [(type_identifier) @name (qualified_type name: (type_identifier) @name)] @object) @ref.assign)))
(type_spec type: (struct_type (field_declaration_list (field_declaration !name type: (pointer_type [(type_identifier) @name (qualified_type name: (type_identifier) @name)]) @object) @ref.assign)))
(parameter_declaration name: (identifier) @name type: (_) @object) @ref.assign
(var_spec . name: (identifier) @name type: (_) @object) @ref.assign
(var_spec . name: (identifier) @name !type value: (expression_list . (_) @value)) @ref.assign
(var_spec name: (identifier) name: (identifier) @name !type) @value @ref.assign
(short_var_declaration left: (expression_list . (identifier) @name) right: (expression_list . (_) @value)) @ref.assign
(short_var_declaration left: (expression_list . (identifier) @name) right: (expression_list . [(composite_literal type: (_) @object) (unary_expression operand: (composite_literal type: (_) @object))])) @ref.assign
(var_spec . name: (identifier) @name !type value: (expression_list . [(composite_literal type: (_) @object) (unary_expression operand: (composite_literal type: (_) @object))])) @ref.assign
(short_var_declaration left: (expression_list (identifier) (identifier) @name)) @value @ref.assign
(assignment_statement left: (expression_list (identifier) (identifier) @name) operator: "=") @value @ref.assign
(range_clause left: (expression_list (identifier) @name) right: (_)) @value @ref.assign
(type_switch_statement alias: (expression_list (identifier) @name) (type_case type: (_) @object)) @ref.assign
(function_declaration result: [(type_identifier) (qualified_type) (pointer_type) (slice_type) (array_type) (map_type) (channel_type) (generic_type)] @object) @ref.assign
(function_declaration result: (parameter_list . (parameter_declaration type: (_) @object))) @ref.assign
(function_declaration result: (parameter_list) @object) @ref.assign
(method_declaration result: [(type_identifier) (qualified_type) (pointer_type) (slice_type) (array_type) (map_type) (channel_type) (generic_type)] @object) @ref.assign
(method_declaration result: (parameter_list . (parameter_declaration type: (_) @object))) @ref.assign
(method_declaration result: (parameter_list) @object) @ref.assign
(method_elem result: [(type_identifier) (qualified_type) (pointer_type) (slice_type) (array_type) (map_type) (channel_type) (generic_type)] @object) @ref.assign
(method_elem result: (parameter_list . (parameter_declaration type: (_) @object))) @ref.assign
(method_elem result: (parameter_list) @object) @ref.assign

(source_file (const_declaration (const_spec name: (identifier) @name)) @global)
(source_file (var_declaration (var_spec name: (identifier) @name)) @global)

(short_var_declaration left: (expression_list (identifier) @name)) @local
(var_spec name: (identifier) @name) @local
(parameter_declaration name: (identifier) @name) @local
(range_clause left: (expression_list (identifier) @name)) @local

(import_spec name: (_)? @alias path: (interpreted_string_literal) @module) @import

(call_expression function: (selector_expression) @object arguments: (argument_list . (interpreted_string_literal) @name)) @env
`

// newGo returns the Go language rules: a package is a directory, imported by
// the module path (from go.mod) joined with the directory.
func newGo() *language {
	return &language{
		name:        "go",
		family:      "go",
		exts:        []string{".go"},
		grammar:     golang.GetLanguage,
		query:       goQuery,
		builtins:    setOf(goBuiltins),
		envObjects:  setOf("os.Getenv os.LookupEnv"),
		docComments: true,
		sharedScope: true,
		moduleKeys:  goModuleKeys,
		importKeys:  func(_ *projectInfo, _ string, module string) []string { return []string{module} },
		packageName: func(module string) string { return module },
		stdlib: func(module string) bool {
			first, _, _ := strings.Cut(module, "/")
			return !strings.Contains(first, ".")
		},
		qualSep: ".",
	}
}

const goBuiltins = `append cap clear close complex copy delete imag len make max min new panic print println
real recover bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string
uint uint8 uint16 uint32 uint64 uintptr any comparable`

// goModuleKeys names a Go file's package by import path.
func goModuleKeys(pi *projectInfo, rel string) []string {
	dir := relDir(rel)
	mod, mdir, ok := pi.goModuleFor(rel)
	if !ok {
		if dir == "" {
			return []string{"."}
		}
		return []string{dir}
	}
	sub := strings.TrimPrefix(strings.TrimPrefix(dir, mdir), "/")
	// A vendored package is imported by its own path (std's vendor/golang.org/x/…).
	if v, ok := strings.CutPrefix(sub, "vendor/"); ok {
		return []string{v}
	}
	switch {
	case mod == "std":
		// The standard library's module: import paths have no module prefix
		// ("strconv", "net/http").
		if sub == "" {
			return []string{mod}
		}
		return []string{sub}
	case sub == "":
		return []string{mod}
	}
	return []string{mod + "/" + sub}
}
