// Package codegraph parses a project with tree-sitter and builds a directed
// multigraph of its files, classes, functions, methods and external packages.
package codegraph

// Kind is the kind of a node in the code graph.
type Kind string

// Node kinds.
const (
	KindFile     Kind = "file"
	KindClass    Kind = "class" // class, Go struct or interface, TS interface
	KindFunction Kind = "function"
	KindMethod   Kind = "method"
	KindPackage  Kind = "package" // an external package the project requires
)

// EdgeKind is the kind of a directed edge between two nodes.
type EdgeKind string

// Edge kinds. Direction is always From → To.
const (
	EdgeContains EdgeKind = "contains" // file→class, file→function, class→method
	EdgeImports  EdgeKind = "imports"  // file→file or file→package
	EdgeCalls    EdgeKind = "calls"    // function/method→function/method/class (constructor)
	EdgeInherits EdgeKind = "inherits" // class→base class
	EdgeUses     EdgeKind = "uses"     // a non-call reference to a definition elsewhere
	EdgeRequires EdgeKind = "requires" // manifest file (requirements.txt, go.mod, …)→package
	// EdgeDispatches joins a call on an interface method (Go) or on a base-class
	// method that subclasses override (Python, JS/TS) to each implementation
	// that can receive it. EdgeCalls keeps meaning "this is the function that runs".
	EdgeDispatches EdgeKind = "dispatches"
	// EdgeImplements joins a concrete type to an interface it satisfies (Go).
	EdgeImplements EdgeKind = "implements"
)

// Node is one definition (or file, or external package) in the graph.
// Code is not copied into the node: read it from Path by StartByte/EndByte.
type Node struct {
	ID        string `json:"id"`   // stable: same code at the same place → same ID across runs
	Kind      Kind   `json:"kind"` //
	Name      string `json:"name"`
	QualName  string `json:"qualname"` // e.g. "pkg.module.Class.method"
	Path      string `json:"path"`     // slash-separated, relative to the project root; empty for packages
	Language  string `json:"language,omitempty"`
	StartLine int    `json:"start_line"` // 1-based, inclusive
	EndLine   int    `json:"end_line"`
	StartByte int    `json:"start_byte"`
	EndByte   int    `json:"end_byte"`
	Signature string `json:"signature,omitempty"`
	Doc       string `json:"doc,omitempty"`
	Hash      string `json:"hash,omitempty"`   // content hash of the node's source text
	Parent    string `json:"parent,omitempty"` // ID of the containing node
	// PathB64 is the exact bytes of Path, base64 (RFC 4648 standard), set only
	// when Path is not valid UTF-8: JSON then shows Path with U+FFFD
	// replacement characters, and this field keeps the real file name
	// recoverable. See markRawPaths.
	PathB64 string `json:"path_b64,omitempty"`
}

// Edge is a directed, typed edge. The graph is a multigraph: the same pair may
// be joined by several kinds.
type Edge struct {
	From string   `json:"source"`
	To   string   `json:"target"`
	Kind EdgeKind `json:"kind"`
	Line int      `json:"line,omitempty"` // where the reference occurs, when known
}
