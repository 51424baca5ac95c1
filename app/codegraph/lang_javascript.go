package codegraph

import (
	"path"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// jsCommonQuery holds the patterns JavaScript and TypeScript share.
const jsCommonQuery = `
(function_declaration name: (identifier) @name body: (statement_block) @body) @def.function
(generator_function_declaration name: (identifier) @name body: (statement_block) @body) @def.function
(method_definition name: (property_identifier) @name body: (statement_block) @body) @def.function
(variable_declarator name: (identifier) @name value: (arrow_function body: (_) @body)) @def.function
(variable_declarator name: (identifier) @name value: (function_expression body: (_) @body)) @def.function
(assignment_expression left: (member_expression property: (property_identifier) @name) right: [(function_expression body: (_) @body) (arrow_function body: (_) @body)]) @def.function

(call_expression function: (identifier) @name) @ref.call
(call_expression function: (member_expression object: (_) @object property: (property_identifier) @name)) @ref.call
(new_expression constructor: (identifier) @name) @ref.call
(new_expression constructor: (member_expression object: (identifier) @object property: (property_identifier) @name)) @ref.call
(arguments (identifier) @name) @ref.use
(variable_declarator name: (identifier) @name value: [(call_expression) (identifier) (member_expression) (new_expression) (await_expression) (array) (object) (string) (number) (template_string) (binary_expression) (ternary_expression)]) @local
(assignment_pattern left: (identifier) @name) @local
(variable_declarator name: (identifier) @name value: (new_expression constructor: [(identifier) (member_expression)] @object)) @ref.assign
(assignment_expression left: (member_expression object: (this) property: (property_identifier)) @name right: (new_expression constructor: [(identifier) (member_expression)] @object)) @ref.assign

(variable_declarator name: (identifier) @name value: (call_expression function: [(identifier) (member_expression)] @object)) @ref.assign
(variable_declarator name: (identifier) @name value: (await_expression (call_expression function: [(identifier) (member_expression)] @object))) @ref.assign
(variable_declarator name: (identifier) @name value: [(identifier) (member_expression) (this)] @object) @ref.value
(assignment_expression left: (identifier) @name right: [(identifier) (member_expression)] @object) @ref.value
(assignment_expression left: (identifier) @name right: (new_expression constructor: [(identifier) (member_expression)] @object)) @ref.assign
(assignment_expression left: (identifier) @name right: (call_expression function: [(identifier) (member_expression)] @object)) @ref.assign
(assignment_expression left: (member_expression object: (this) property: (property_identifier)) @name right: [(identifier) (member_expression)] @object) @ref.value
(assignment_expression left: (member_expression object: (this) property: (property_identifier)) @name right: (call_expression function: [(identifier) (member_expression)] @object)) @ref.assign
(return_statement [(identifier) (member_expression) (this)] @object) @ref.value
(return_statement (call_expression function: [(identifier) (member_expression)] @object)) @ref.assign
(return_statement (new_expression constructor: [(identifier) (member_expression)] @object)) @ref.assign
(call_expression function: [(identifier) (member_expression)] @object arguments: (arguments [(identifier) (member_expression)] @name) @body) @ref.arg
(call_expression function: (super) @name) @ref.call
((comment) @object . (expression_statement (assignment_expression left: (member_expression object: (this) property: (property_identifier)) @name)) @ref.assign)
((comment) @object . (lexical_declaration (variable_declarator name: (identifier) @name)) @ref.assign)
((comment) @object . (variable_declaration (variable_declarator name: (identifier) @name)) @ref.assign)
(call_expression function: [(identifier) (member_expression)] @object arguments: (arguments [(arrow_function parameters: (formal_parameters) @name) (function_expression parameters: (formal_parameters) @name)]) @body) @ref.arg
(new_expression constructor: [(identifier) (member_expression)] @object arguments: (arguments [(arrow_function parameters: (formal_parameters) @name) (function_expression parameters: (formal_parameters) @name)]) @body) @ref.arg

(import_statement (import_clause (identifier) @alias @default) source: (string) @module) @import
(import_statement (import_clause (named_imports (import_specifier name: (identifier) @name alias: (identifier)? @alias))) source: (string) @module) @import
(import_statement (import_clause (namespace_import (identifier) @alias)) source: (string) @module) @import
(import_statement source: (string) @module) @import
(export_statement "*" source: (string) @module) @wildcard @import
(export_statement (export_clause (export_specifier name: (identifier) @name alias: (identifier)? @alias)) source: (string) @module) @import
(variable_declarator name: (identifier) @alias value: (call_expression function: (identifier) @fn arguments: (arguments . (string) @module))) @import
(variable_declarator name: (object_pattern (shorthand_property_identifier_pattern) @name) value: (call_expression function: (identifier) @fn arguments: (arguments . (string) @module))) @import
(variable_declarator name: (identifier) @alias value: (member_expression object: (call_expression function: (identifier) @fn arguments: (arguments . (string) @module)) property: (property_identifier) @name)) @import
(assignment_expression left: (member_expression) @object right: (identifier) @name) @export.default
(assignment_expression left: (member_expression object: (identifier) property: (property_identifier)) @name right: (identifier) @object) @ref.value

(program (lexical_declaration (variable_declarator name: (identifier) @name value: [(number) (string) (template_string) (object) (array) (true) (false) (null)])) @global)

(export_statement "default" (function_declaration name: (identifier) @name)) @export.default
(export_statement "default" (identifier) @name) @export.default

(member_expression object: (member_expression) @object property: (property_identifier) @name) @env
(subscript_expression object: (member_expression) @object index: (string) @name) @env
`

const jsQuery = jsCommonQuery + `
(formal_parameters (identifier) @name) @local
(field_definition property: (property_identifier) @name value: (new_expression constructor: [(identifier) (member_expression)] @object)) @ref.assign
((comment) @object . (field_definition property: (property_identifier) @name) @ref.assign)
(class_declaration name: (identifier) @name body: (class_body) @body) @def.class
(class name: (identifier) @name body: (class_body) @body) @def.class
(variable_declarator name: (identifier) @name value: (class !name body: (class_body) @body)) @def.class
(return_statement (class "class" @name !name body: (class_body) @body) @def.class)
(arrow_function body: (class "class" @name !name body: (class_body) @body) @def.class)
(class_heritage (identifier) @name) @ref.inherit
(class_heritage (call_expression function: (identifier) @name)) @ref.inherit
(class_heritage (member_expression object: (identifier) @object property: (property_identifier) @name)) @ref.inherit
(export_statement "default" (class_declaration name: (identifier) @name)) @export.default
`

const tsQuery = jsCommonQuery + `
(required_parameter pattern: (identifier) @name) @local
(optional_parameter pattern: (identifier) @name) @local
(class_declaration name: (type_identifier) @name body: (class_body) @body) @def.class
(abstract_class_declaration name: (type_identifier) @name body: (class_body) @body) @def.class
(class name: (type_identifier) @name body: (class_body) @body) @def.class
(variable_declarator name: (identifier) @name value: (class !name body: (class_body) @body)) @def.class
(return_statement (class "class" @name !name body: (class_body) @body) @def.class)
(arrow_function body: (class "class" @name !name body: (class_body) @body) @def.class)
(interface_declaration name: (type_identifier) @name body: (_) @body) @def.class
(extends_clause value: (identifier) @name) @ref.inherit
(extends_clause value: (call_expression function: (identifier) @name)) @ref.inherit
(implements_clause (type_identifier) @name) @ref.inherit
(extends_type_clause type: (type_identifier) @name) @ref.inherit
(type_annotation (type_identifier) @name) @ref.use
(required_parameter pattern: (identifier) @name type: (type_annotation [(type_identifier) (nested_type_identifier)] @object)) @ref.assign
(required_parameter pattern: (identifier) @name type: (type_annotation (generic_type name: [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(optional_parameter pattern: (identifier) @name type: (type_annotation [(type_identifier) (nested_type_identifier)] @object)) @ref.assign
(optional_parameter pattern: (identifier) @name type: (type_annotation (generic_type name: [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(public_field_definition name: (property_identifier) @name type: (type_annotation [(type_identifier) (nested_type_identifier)] @object)) @ref.assign
(public_field_definition name: (property_identifier) @name type: (type_annotation (generic_type name: [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(public_field_definition name: (property_identifier) @name value: (new_expression constructor: [(identifier) (member_expression)] @object)) @ref.assign
(variable_declarator name: (identifier) @name type: (type_annotation [(type_identifier) (nested_type_identifier)] @object)) @ref.assign
(required_parameter pattern: (identifier) @name type: (type_annotation (union_type [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(optional_parameter pattern: (identifier) @name type: (type_annotation (union_type [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(public_field_definition name: (property_identifier) @name type: (type_annotation (union_type [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(variable_declarator name: (identifier) @name type: (type_annotation (union_type [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(method_definition return_type: (type_annotation (union_type [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(function_declaration return_type: (type_annotation (union_type [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(variable_declarator name: (identifier) @name type: (type_annotation (generic_type name: [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(function_declaration return_type: (type_annotation [(type_identifier) (nested_type_identifier)] @object)) @ref.assign
(function_declaration return_type: (type_annotation (generic_type name: [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(method_definition return_type: (type_annotation [(type_identifier) (nested_type_identifier)] @object)) @ref.assign
(method_definition return_type: (type_annotation (generic_type name: [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
(export_statement "default" (class_declaration name: (type_identifier) @name)) @export.default
(variable_declarator name: (identifier) @name value: (as_expression [(type_identifier) (nested_type_identifier)] @object)) @ref.assign
(variable_declarator name: (identifier) @name value: (as_expression (generic_type name: [(type_identifier) (nested_type_identifier)] @object))) @ref.assign
`

func newJSLike(name string, exts []string, grammar func() *sitter.Language, q string) *language {
	return &language{
		name:        name,
		family:      "js",
		exts:        exts,
		grammar:     grammar,
		query:       q,
		selfNames:   []string{"this"},
		builtins:    setOf(jsBuiltins),
		envObjects:  setOf("process.env"),
		importFns:   setOf("require"),
		docComments: true,
		moduleKeys:  jsModuleKeys,
		importKeys:  jsImportKeys,
		packageName: jsPackageName,
		stdlib: func(module string) bool {
			first, _, _ := strings.Cut(strings.TrimPrefix(module, "node:"), "/")
			return strings.HasPrefix(module, "node:") || nodeBuiltins[first]
		},
		qualSep: ":",
	}
}

// newJavaScript returns the JavaScript rules.
func newJavaScript() *language {
	return newJSLike("javascript", []string{".js", ".mjs", ".cjs", ".jsx"}, javascript.GetLanguage, jsQuery)
}

// newTypeScript returns the TypeScript rules.
func newTypeScript() *language {
	return newJSLike("typescript", []string{".ts", ".mts", ".cts"}, typescript.GetLanguage, tsQuery)
}

// newTSX returns the TSX rules.
func newTSX() *language {
	return newJSLike("tsx", []string{".tsx"}, tsx.GetLanguage, tsQuery)
}

const jsBuiltins = `require console parseInt parseFloat isNaN isFinite setTimeout setInterval clearTimeout
clearInterval Promise Array Object String Number Boolean Symbol Map Set WeakMap WeakSet Error TypeError
RangeError JSON Math Date RegExp encodeURIComponent decodeURIComponent fetch structuredClone BigInt`

// jsExts are the extensions a module specifier may omit; ".d.ts" comes
// before ".ts" so a declaration file is named without its ".d".
var jsExts = []string{".d.ts", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"}

// jsModuleKeys names a JS/TS file by its path without extension; an index
// file also names its directory.
func jsModuleKeys(_ *projectInfo, rel string) []string {
	p := rel
	for _, e := range jsExts {
		if strings.HasSuffix(p, e) {
			p = strings.TrimSuffix(p, e)
			break
		}
	}
	keys := []string{p}
	if path.Base(p) == "index" {
		keys = append(keys, relDir(p))
	}
	return keys
}

// jsImportKeys resolves relative specifiers against the importing file.
func jsImportKeys(_ *projectInfo, rel string, module string) []string {
	if !strings.HasPrefix(module, "./") && !strings.HasPrefix(module, "../") && module != "." && module != ".." {
		return nil
	}
	k := path.Join(path.Dir(rel), module)
	if k == "." {
		k = ""
	}
	if strings.HasPrefix(k, "../") || k == ".." {
		return nil
	}
	keys := []string{}
	for _, e := range jsExts {
		if strings.HasSuffix(k, e) {
			keys = append(keys, strings.TrimSuffix(k, e))
			break
		}
	}
	return append(keys, k, path.Join(k, "index"))
}

// jsPackageName is the npm package a bare specifier names.
func jsPackageName(module string) string {
	if strings.HasPrefix(module, ".") || strings.HasPrefix(module, "/") {
		return ""
	}
	parts := strings.Split(module, "/")
	if strings.HasPrefix(module, "@") && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// nodeBuiltins are Node.js core modules.
var nodeBuiltins = setOf(`assert async_hooks buffer child_process cluster console constants crypto dgram
diagnostics_channel dns domain events fs http http2 https inspector module net os path perf_hooks process
punycode querystring readline repl stream string_decoder sys timers tls trace_events tty url util v8 vm
wasi worker_threads zlib test`)

// jsDocAbove returns a /** … */ block with @param, @returns or @type tags
// separated from the definition at start by blank lines only (JSDoc still
// applies there).
func jsDocAbove(src []byte, start uint32) string {
	ls := lineStart(src, int(start))
	end := ls
	for end > 0 {
		ps := lineStart(src, end-1) // the line above
		line := strings.TrimSpace(string(src[ps : end-1]))
		if line == "" {
			end = ps
			continue
		}
		if !strings.HasSuffix(line, "*/") {
			return ""
		}
		// The block ends on this line: read it as if it were right above,
		// when it documents parameters or a result (not a file header).
		doc := leadingComment(src, uint32(end))
		if strings.Contains(doc, "@param") || strings.Contains(doc, "@return") || strings.Contains(doc, "@type") {
			return doc
		}
		return ""
	}
	return ""
}
