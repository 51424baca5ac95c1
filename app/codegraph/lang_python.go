package codegraph

import (
	"path"
	"slices"
	"strings"

	"github.com/smacker/go-tree-sitter/python"
)

// pythonQuery extracts definitions, docstrings, calls, uses, base classes,
// imports and environment reads from Python.
const pythonQuery = `
(decorated_definition definition: (class_definition name: (identifier) @name body: (block) @body)) @def.class
(decorated_definition definition: (function_definition name: (identifier) @name body: (block) @body)) @def.function
(class_definition name: (identifier) @name body: (block) @body) @def.class
(function_definition name: (identifier) @name body: (block) @body) @def.function
(assignment left: (identifier) @name right: (lambda body: (_) @body)) @def.function

(class_definition body: (block . (expression_statement (string) @doc))) @doc.owner
(function_definition body: (block . (expression_statement (string) @doc))) @doc.owner

(call function: (identifier) @name) @ref.call
(call function: (attribute object: (_) @object attribute: (identifier) @name)) @ref.call

(class_definition superclasses: (_) @name.kid) @ref.inherit
(class_definition superclasses: (argument_list (attribute object: (_) @object attribute: (identifier) @name))) @ref.inherit

(argument_list (identifier) @name) @ref.use
(argument_list (attribute object: (identifier) @object attribute: (identifier) @name)) @ref.use
(keyword_argument value: (identifier) @name) @ref.use
(assignment right: (identifier) @name) @ref.use
(return_statement) @ref.use @name.kid
(decorator) @ref.use @name.kid
(type) @ref.use @name.kid
(except_clause) @ref.use @name.kid

(assignment left: (identifier) @name right: (call function: [(identifier) (attribute)] @object)) @ref.assign
(assignment left: (attribute object: (identifier) attribute: (identifier)) @name right: (call function: [(identifier) (attribute)] @object)) @ref.assign
(assignment left: (identifier) @name type: (type [(identifier) (attribute)] @object)) @ref.assign
(function_definition return_type: (type [(identifier) (attribute)] @object)) @ref.assign
(return_statement (call function: [(identifier) (attribute)] @object)) @ref.assign
(assignment left: (attribute object: (identifier) attribute: (identifier)) @name right: (_) @object.literal) @ref.assign
(assignment left: (identifier) @name right: (_) @object.literal) @ref.assign
(typed_parameter (identifier) @name type: (type [(identifier) (attribute)] @object)) @ref.assign
(typed_default_parameter name: (identifier) @name type: (type [(identifier) (attribute)] @object)) @ref.assign

(assignment left: (identifier) @name right: [(identifier) (attribute)] @object) @ref.value
(assignment left: (attribute object: (identifier) attribute: (identifier)) @name right: [(identifier) (attribute)] @object) @ref.value
(assignment left: (identifier) @name right: (_) @object.pops) @ref.value
(assignment left: (attribute object: (identifier) attribute: (identifier)) @name right: (_) @object.ops2) @ref.value
(call function: (_) @object.ref arguments: (argument_list (_) @name.ref) @body) @ref.arg
(call function: (_) @object.ref arguments: (argument_list (keyword_argument name: (identifier) @alias value: (_) @name.ref))) @ref.arg
(assignment left: (pattern_list . (identifier) @name) right: (expression_list . [(identifier) (attribute)] @object)) @ref.value
(assignment left: (pattern_list . (_) . (identifier) @name) right: (expression_list . (_) . [(identifier) (attribute)] @object)) @ref.value
(default_parameter name: (identifier) @name value: [(identifier) (attribute)] @object) @ref.value
(typed_default_parameter name: (identifier) @name value: [(identifier) (attribute)] @object) @ref.value
(return_statement (_) @object.retval) @ref.value
(assignment left: (identifier) @name right: (subscript value: [(identifier) (attribute)]) @object) @ref.value
(assignment left: (attribute object: (identifier) attribute: (identifier)) @name right: (subscript value: [(identifier) (attribute)]) @object) @ref.value
(assignment left: (identifier) @name right: (call function: (call)) @object) @ref.value
(assignment left: (identifier) @name right: (call function: (identifier) arguments: (argument_list . (_) . [(string) (binary_operator left: (string))])) @object) @ref.value
(assignment left: (pattern_list) @name right: (call) @object) @ref.value
(return_statement (_) @object.ops) @ref.value
(with_item value: (as_pattern (call function: [(identifier) (attribute)] @object) alias: (_) @name.kid)) @ref.assign
(for_statement "for" @name right: (_) @object.iterable) @ref.implicit
(for_in_clause "for" @name right: (_) @object.iterable) @ref.implicit
(for_statement left: (identifier) @name right: [(identifier) (attribute) (call)] @object) @ref.value
(for_in_clause left: (identifier) @name right: [(identifier) (attribute) (call)] @object) @ref.value
(assignment left: (subscript value: [(identifier) (attribute)] @name) right: [(identifier) (attribute) (call function: [(identifier) (attribute)])] @object) @ref.value
(attribute object: (_) @check.operand "." @name attribute: (identifier)) @object @ref.implicit
(assignment left: (attribute) @object "=" @name) @ref.implicit
(comparison_operator "not in" @name . [(identifier) (attribute)] @object) @ref.implicit
(comparison_operator (_) @object.operand . operators: _ @name.cmp) @ref.implicit
(binary_operator left: (_) @object.operand operator: _ @name.binop) @ref.implicit
(augmented_assignment left: (_) @object.target operator: _ @name.augop) @ref.implicit
(unary_operator operator: "~" @name argument: [(identifier) (attribute) (call) (subscript)] @object) @ref.implicit
(call function: [(call) (subscript)] @object arguments: (argument_list "(" @name)) @ref.implicit
(interpolation "{" @name (_) @check.operand) @object @ref.implicit
(binary_operator left: (string) operator: "%" @name right: [(identifier) (attribute) (tuple) (parenthesized_expression)]) @object @ref.implicit
(call function: (attribute object: (string) attribute: (identifier) @name) arguments: (argument_list)) @object @ref.implicit
(call function: (identifier) @name arguments: (argument_list . (_) . (tuple) @object)) @ref.implicit
(with_statement (with_clause (with_item value: [(identifier) (attribute) (call)] @object))) @ref.implicit
(with_statement (with_clause (with_item value: (as_pattern [(identifier) (attribute) (call)] @object)))) @ref.implicit
(raise_statement [(identifier) (attribute)] @object) @ref.implicit
(comparison_operator "in" @name . [(identifier) (attribute)] @object) @ref.implicit
(subscript value: [(identifier) (attribute)] @object "[" @name) @ref.implicit
(assignment left: (subscript value: [(identifier) (attribute)] @object) "=" @name) @ref.implicit
(delete_statement "del" @name (subscript value: [(identifier) (attribute)] @object)) @ref.implicit
(call function: (identifier) @name arguments: (argument_list . (identifier) @object .)) @ref.implicit
(call function: (identifier) @name arguments: (argument_list . (_) @object.firstarg)) @ref.implicit
(decorator) @ref.decorator @name.kid
(decorator (attribute object: (_) @object attribute: (identifier) @name)) @ref.decorator


(assignment left: (identifier) @name) @local
(assignment left: [(pattern_list) (tuple_pattern)] (identifier) @name) @local
(augmented_assignment left: (identifier) @name) @local
(for_statement left: (identifier) @name) @local
(for_statement left: [(pattern_list) (tuple_pattern)] (identifier) @name) @local
(for_in_clause left: (identifier) @name) @local
(parameters) @local @name.kid
(default_parameter name: (identifier) @name) @local
(typed_parameter) @local @name.kid
(typed_default_parameter name: (identifier) @name) @local
(lambda_parameters) @local @name.kid
(as_pattern alias: (_) @name.kid) @local

(import_statement name: (dotted_name) @module) @import
(import_statement name: (aliased_import name: (dotted_name) @module alias: (identifier) @alias)) @import
(import_from_statement module_name: (_) @module name: (dotted_name) @name) @import
(import_from_statement module_name: (_) @module name: (aliased_import name: (dotted_name) @name alias: (identifier) @alias)) @import
(import_from_statement module_name: (_) @module (wildcard_import) @wildcard) @import

(subscript value: (_) @object subscript: (string) @name) @env
(call function: (_) @object arguments: (argument_list . (string) @name)) @env

(module) @sub
(class_definition) @sub
;; sub query: run from @sub nodes
(module (expression_statement (assignment left: (identifier) @name)) @global)
(class_definition body: (block (expression_statement (assignment left: (identifier) @name right: (call function: (identifier) arguments: (argument_list . [(identifier) (attribute)] .)) @object)))) @ref.value
`

// The node types of pythonQuery's filter captures (language.captureTypes):
// a value expression, and an operand whose class's special methods run.
var (
	pyRefTypes     = []string{"(identifier)", "(attribute)"}
	pyOperandTypes = []string{"(identifier)", "(attribute)", "(call)", "(subscript)"}
)

// pythonQuery's children captures (language.captureKids): the operands of
// `a or b` and `a if c else b` (`ops`: what `[(boolean_operator (_) @object)
// (conditional_expression (_) @object)]` finds), also inside parentheses
// (`ops2`: plus `(parenthesized_expression [(boolean_operator (_) @object)
// (conditional_expression (_) @object)])`), and also what the parentheses
// hold (`pops`: plus `(parenthesized_expression (_) @object)`).
var (
	pyOps  = []string{"(boolean_operator)", "(conditional_expression)"}
	pyOps2 = append(slices.Clip(pyOps), "(parenthesized_expression) (boolean_operator)", "(parenthesized_expression) (conditional_expression)")
	pyPops = append(slices.Clip(pyOps2), "(parenthesized_expression)")
	// pyNameKid: the identifiers among a node's children (`(X) @name.kid`
	// finds what `(X (identifier) @name)` finds), for these X. A call's
	// arguments keep their pattern: there are many, and the cursor already
	// walks them (a children capture walks them again).
	pyNameKid = []string{"(argument_list)", "(return_statement)", "(decorator)", "(type)", "(except_clause)",
		"(parameters)", "(typed_parameter)", "(lambda_parameters)", "(as_pattern_target)"}
)

// newPython returns the Python language rules.
func newPython() *language {
	return &language{
		name:    "python",
		family:  "python",
		exts:    []string{".py", ".pyi"},
		grammar: python.GetLanguage,
		query:   pythonQuery,
		captureTypes: map[string][]string{
			"object.ref":      pyRefTypes,
			"object.ops":      pyRefTypes,
			"object.ops2":     pyRefTypes,
			"object.pops":     pyRefTypes,
			"name.kid":        {"(identifier)"},
			"name.ref":        pyRefTypes,
			"object.operand":  pyOperandTypes,
			"check.operand":   pyOperandTypes,
			"object.literal":  {"(list)", "(dictionary)", "(set)", "(tuple)", "(string)", "(list_comprehension)", "(dictionary_comprehension)", "(set_comprehension)"},
			"object.retval":   {"(identifier)", "(attribute)", "(subscript)", "(expression_list)"},
			"object.iterable": {"(identifier)", "(attribute)", "(call)"},
			"object.target":   {"(identifier)", "(attribute)", "(subscript)"},
			// len(x) etc.: the pattern this replaces, `(argument_list .
			// [(identifier) (attribute) (call) (subscript)] @object .)`, held
			// the closing anchor for its first branch only (tree-sitter marks
			// the first step of the last child as the last child): an
			// identifier must be the only argument, the others only the first.
			"object.firstarg": {"(attribute)", "(call)", "(subscript)"},
			"name.cmp":        {`"=="`, `"!="`, `"<"`, `"<="`, `">"`, `">="`},
			"name.binop":      {`"+"`, `"-"`, `"*"`, `"/"`, `"//"`, `"%"`, `"&"`, `"|"`, `"^"`, `"<<"`, `">>"`, `"**"`, `"@"`},
			"name.augop":      {`"+="`, `"-="`, `"*="`, `"/="`, `"//="`, `"%="`, `"&="`, `"|="`, `"^="`, `"<<="`, `">>="`, `"**="`, `"@="`},
		},
		captureKids: map[string][]string{"object.ops": pyOps, "object.ops2": pyOps2, "object.pops": pyPops, "name.kid": pyNameKid},
		selfNames:   []string{"self", "cls"},
		builtins:    setOf(pythonBuiltins),
		envObjects: setOf("os.environ os.environ.get os.getenv getenv environ environ.get " +
			"os.environ.setdefault os.environb"),
		cleanDoc:    cleanPyDoc,
		moduleKeys:  pyModuleKeys,
		importKeys:  pyImportKeys,
		packageName: pyPackageName,
		stdlib:      func(module string) bool { return pyStdlib[topModule(module)] },
		qualSep:     ".",
		implicit:    pyImplicit,
	}
}

const pythonBuiltins = `ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup
BlockingIOError BrokenPipeError BufferError BytesWarning ChildProcessError ConnectionAbortedError
ConnectionError ConnectionRefusedError ConnectionResetError DeprecationWarning EOFError Ellipsis
EncodingWarning EnvironmentError Exception ExceptionGroup FileExistsError FileNotFoundError
FloatingPointError FutureWarning GeneratorExit IOError ImportError ImportWarning IndentationError
IndexError InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError
ModuleNotFoundError NameError NotADirectoryError NotImplemented NotImplementedError OSError
OverflowError PendingDeprecationWarning PermissionError ProcessLookupError RecursionError
ReferenceError ResourceWarning RuntimeError RuntimeWarning StopAsyncIteration StopIteration
SyntaxError SyntaxWarning SystemError SystemExit TabError TimeoutError TypeError UnboundLocalError
UnicodeDecodeError UnicodeEncodeError UnicodeError UnicodeTranslateError UnicodeWarning UserWarning
ValueError Warning ZeroDivisionError abs aiter all anext any ascii bin bool breakpoint bytearray
bytes callable chr classmethod compile complex copyright credits delattr dict dir divmod enumerate
eval exec exit filter float format frozenset getattr globals hasattr hash help hex id input int
isinstance issubclass iter len license list locals map max memoryview min next object oct open ord
pow print property quit range repr reversed round set setattr slice sorted staticmethod str sum
super tuple type vars zip __import__`

// setOf splits s on white space into a set.
func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(s) {
		m[f] = true
	}
	return m
}

// cleanPyDoc strips quotes and common indentation from a docstring literal.
func cleanPyDoc(s string) string {
	s = strings.TrimLeft(s, "rRbBuUfF")
	for _, q := range []string{`"""`, `'''`, `"`, `'`} {
		if strings.HasPrefix(s, q) && strings.HasSuffix(s, q) && len(s) >= 2*len(q) {
			s = s[len(q) : len(s)-len(q)]
			break
		}
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	s = strings.Join(lines, "\n")
	if len(s) > 2000 {
		s = s[:2000]
	}
	return s
}

// pyModuleKeys names a Python file as a dotted module. Leading directories
// without __init__.py may be source roots (src/, scripts/), so the module is
// also registered with them stripped.
func pyModuleKeys(pi *projectInfo, rel string) []string {
	p := strings.TrimSuffix(strings.TrimSuffix(rel, ".py"), ".pyi")
	parts := strings.Split(p, "/")
	if parts[len(parts)-1] == "__init__" {
		parts = parts[:len(parts)-1]
		if len(parts) == 0 {
			return []string{""}
		}
	}
	keys := []string{strings.Join(parts, ".")}
	dir := ""
	for i := 0; i < len(parts)-1; i++ {
		dir = path.Join(dir, parts[i])
		if pi.initDirs[dir] {
			break
		}
		keys = append(keys, strings.Join(parts[i+1:], "."))
	}
	return keys
}

// pyImportKeys turns an import into candidate module keys: relative imports
// are resolved against the importing file's package.
func pyImportKeys(pi *projectInfo, rel string, module string) []string {
	if !strings.HasPrefix(module, ".") {
		return []string{module}
	}
	n := len(module) - len(strings.TrimLeft(module, "."))
	rest := module[n:]
	// The importing module's package, as a path.
	pkg := relDir(rel)
	for i := 1; i < n; i++ {
		if pkg == "" {
			return nil // beyond the top-level package
		}
		pkg = relDir(pkg)
	}
	var key string
	if pkg != "" {
		key = strings.ReplaceAll(pkg, "/", ".")
	}
	if rest != "" {
		if key != "" {
			key += "."
		}
		key += rest
	}
	return []string{key}
}

// pyPackageName is the top-level name of an absolute import, normalised the
// way requirement names are ("-" and "." → "_", lower case).
func pyPackageName(module string) string {
	if strings.HasPrefix(module, ".") {
		return ""
	}
	top, _, _ := strings.Cut(module, ".")
	return normPyName(top)
}

// normPyName normalises a distribution or module name for comparison.
func normPyName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer("-", "_", ".", "_").Replace(s)
}

// topModule is the first dotted component of a module name.
func topModule(module string) string {
	top, _, _ := strings.Cut(module, ".")
	return top
}

// pyStdlib lists the top-level modules of the Python 3.11 standard library
// (sys.stdlib_module_names): imports of these are external, not unresolved.
var pyStdlib = setOf(`__future__ _thread abc aifc antigravity argparse array ast asynchat asyncio asyncore atexit audioop
base64 bdb binascii bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs
codeop collections colorsys compileall concurrent configparser contextlib contextvars copy copyreg
crypt csv ctypes curses dataclasses datetime dbm decimal difflib dis distutils doctest email
encodings ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch fractions ftplib
functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac html http
idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json keyword lib2to3 linecache
locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib msvcrt
multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator optparse os
ossaudiodev pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posix posixpath
pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri random re
readline reprlib resource rlcompleter runpy sched secrets select selectors shelve shlex shutil
signal site smtpd smtplib sndhdr socket socketserver spwd sqlite3 sre_compile sre_constants
sre_parse ssl stat statistics string stringprep struct subprocess sunau symtable sys sysconfig
syslog tabnanny tarfile telnetlib tempfile termios textwrap this threading time timeit tkinter
token tokenize tomllib trace traceback tracemalloc tty turtle turtledemo types typing unicodedata
unittest urllib uu uuid venv warnings wave weakref webbrowser winreg winsound wsgiref xdrlib xml
xmlrpc zipapp zipfile zipimport zlib zoneinfo`)

// pyImplicit maps what a @ref.implicit capture names (a keyword, an
// operator, a built-in function) to the special methods it calls on its
// operand's class. "with" and "raise" have no @name: the pattern's first
// word stands in (see implicitToken).
var pyImplicit = map[string][]string{
	"for": {"__iter__", "__next__"}, "with": {"__enter__", "__exit__"}, "raise": {"__init__"},
	"in": {"__contains__"}, "[": {"__getitem__"}, "=": {"__setitem__"}, "del": {"__delitem__"},
	"len": {"__len__"}, "str": {"__str__"}, "repr": {"__repr__"}, "iter": {"__iter__"},
	"next": {"__next__"}, "bool": {"__bool__"}, "hash": {"__hash__"}, "abs": {"__abs__"},
	"format": {"__format__"}, "reversed": {"__reversed__"}, "bytes": {"__bytes__"},
	"not in": {"__contains__"},
	// String formatting (flow_python_format.go): an f-string field, and
	// "%" and "format" when the expression starts with the literal.
	// type(name, (A, B), {}): a class made at run time (flow_python_classes.go).
	"type": {"<type>"},
	"{":    {"__str__"},
	"int":  {"__int__"}, "float": {"__float__"}, "complex": {"__complex__"}, "round": {"__round__"},
	// Operators: the left operand's method (its reflected one is not looked
	// at); where several are listed the first the class has runs (x += y
	// falls back on __add__, x != y on __eq__).
	"==": {"__eq__"}, "!=": {"__ne__", "__eq__"}, "<": {"__lt__"}, "<=": {"__le__"}, ">": {"__gt__"}, ">=": {"__ge__"},
	"+": {"__add__"}, "-": {"__sub__"}, "*": {"__mul__"}, "/": {"__truediv__"}, "//": {"__floordiv__"},
	"%": {"__mod__"}, "&": {"__and__"}, "|": {"__or__"}, "^": {"__xor__"}, "<<": {"__lshift__"},
	">>": {"__rshift__"}, "**": {"__pow__"}, "@": {"__matmul__"},
	"+=": {"__iadd__", "__add__"}, "-=": {"__isub__", "__sub__"}, "*=": {"__imul__", "__mul__"},
	"/=": {"__itruediv__", "__truediv__"}, "//=": {"__ifloordiv__", "__floordiv__"}, "%=": {"__imod__", "__mod__"},
	"&=": {"__iand__", "__and__"}, "|=": {"__ior__", "__or__"}, "^=": {"__ixor__", "__xor__"},
	"<<=": {"__ilshift__", "__lshift__"}, ">>=": {"__irshift__", "__rshift__"}, "**=": {"__ipow__", "__pow__"},
	"@=": {"__imatmul__", "__matmul__"},
	"~":  {"__invert__"},
	// Handled by flow_python.go: an attribute read (a property's getter)
	// and a call of a computed callee.
	pyAttrToken: {"<property>"}, pyCallToken: {"<call>"},
}
