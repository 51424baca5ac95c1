package codegraph

// fileData is everything extracted from one file. It is the unit of caching:
// it depends only on the file's bytes and the language rules.
type fileData struct {
	Path    string // slash-separated, relative to the root
	Lang    string // language name, "" for manifests and other tracked files
	Size    int64
	ModTime int64  // unix nanoseconds
	Sum     uint64 // FNV-1a of the content
	Lines   int
	Syntax  bool // tree-sitter reported syntax errors
	BadUTF8 bool // content is not valid UTF-8
	// Caveat says what of the file was indexed only approximately or left
	// out to bound memory ("" when nothing was). The cache's codec does not
	// keep it: the problem is reported by the parse that meets it.
	Caveat   string
	Defs     []defRec
	Refs     refList // packed (refs_packed.go)
	Imports  []importRec
	Env      []envRec
	Default  string // JS/TS default export name
	Globals  []globalRec
	Packages []string // manifest: names of required packages
	Eco      string   // manifest ecosystem: "pypi", "go", "npm"
}

// defRec is one definition in a file.
type defRec struct {
	Kind      Kind
	Name      string
	Parent    int32 // index of the enclosing definition, -1 for the file
	Start     uint32
	End       uint32
	StartLine int32
	EndLine   int32
	Sig       string
	Doc       string
	Hash      uint64
	// recv: a Go method's receiver type and variable (nil for every other
	// definition): apart, as the two strings took a quarter of each
	// record and most definitions have neither (pyenv's stdlib: ≈ 300 k
	// records, 7 MB; see receiver, selfVar).
	recv *goRecv
}

// goRecv is a Go method's receiver: its type's name and its variable.
type goRecv struct {
	typ, selfVar string
}

// setRecv sets d's receiver type and variable ("" and "": none).
func (d *defRec) setRecv(typ, selfVar string) {
	d.recv = nil
	if typ != "" || selfVar != "" {
		d.recv = &goRecv{typ, selfVar}
	}
}

// receiver returns the receiver type of a Go method ("" for any other
// definition).
func (d *defRec) receiver() string {
	if d.recv == nil {
		return ""
	}
	return d.recv.typ
}

// selfVar returns the receiver variable of a Go method ("" for any other
// definition, or an unnamed receiver).
func (d *defRec) selfVar() string {
	if d.recv == nil {
		return ""
	}
	return d.recv.selfVar
}

// refKind says what a reference is.
type refKind uint8

const (
	refCall refKind = iota
	refUse
	refInherit
	refAssign // Name is a variable (or self.attr) given the type Object
	refLocal  // Name is bound locally in Def (assignment, parameter, loop variable)
	// refDecorator is a decorator applied to definition Def: a call from the
	// scope around Def (resolved as a call from Def's parent).
	refDecorator
	// refValue: the value of expression Object flows into variable Name
	// (Name "<return>": Def returns it); see flow.go.
	refValue
	// refArg: an argument passed to a call: Object is the callee
	// expression, Name is "slot\x00argument" where slot is the 0-based
	// position or the keyword.
	refArg
	// refImplicit: syntax that calls special methods of Object's class
	// (Name is the keyword, operator or built-in: "for", "in", "len"...).
	refImplicit
)

// argSep separates a refArg's slot from its argument expression.
const argSep = "\x00"

// returnHint is the variable name under which a function's result type is
// recorded (from a return annotation or a returned constructor call).
const returnHint = "<return>"

// refRec is one reference (call, use, base class) in a file.
type refRec struct {
	Kind   refKind
	Name   string
	Object string // receiver expression text, "" for a bare name
	Def    int32  // enclosing definition, -1 for the file
	Line   int32
}

// importRec is one imported name.
type importRec struct {
	Module   string // as written: "a.b", "..x", "./util", "github.com/x/y"
	Name     string // imported symbol ("" for a module import)
	Alias    string // local alias ("" when none)
	Wildcard bool
	Line     int32
	Start    uint32 // the import statement's byte range
	End      uint32
}

// globalRec is a module-level variable or constant statement.
type globalRec struct {
	Name       string
	Start, End uint32
}

// envRec is one environment variable read.
type envRec struct {
	Name string
	Def  int32
}
