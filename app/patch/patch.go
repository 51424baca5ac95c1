// Package patch parses the edits a model proposes, checks that they stay
// inside the project, dry-runs them on a scratch copy, applies them
// atomically per file and reverts them.
//
// # Accepted answer formats
//
// An answer is free text (prose is ignored) containing one or more edit
// blocks of the three kinds below, in any mix. Blocks are applied in the order
// they appear; several blocks may touch the same file.
//
// 1. Unified diff (git style). A file section starts with a "--- OLD" line
// immediately followed by a "+++ NEW" line; "a/" and "b/" prefixes are
// stripped, "/dev/null" as OLD creates a file and as NEW deletes it. Renames
// are refused. Each hunk starts with "@@ -l,s +l,s @@" and its body must hold
// exactly the line counts the header states (" " context, "-" removed, "+"
// added; an empty line counts as an empty context line; "\ No newline at end
// of file" is honoured). When applied, a hunk's old lines must match the file
// exactly; only the position may differ from the header (the nearest exact
// match wins), no context line is ever ignored.
//
//	--- a/inventory/stock.py
//	+++ b/inventory/stock.py
//	@@ -10,3 +10,3 @@
//	 def total(items):
//	-    return sum(i.qty for i in items[1:])
//	+    return sum(i.qty for i in items)
//
// 2. SEARCH/REPLACE block. The line right before "<<<<<<< SEARCH" (a fence
// line such as "```python" may sit between them) is the file path alone,
// optionally written as "FILE: path". The SEARCH text must occur exactly once
// in the file; it is replaced by the REPLACE text. An empty SEARCH creates a
// new file holding the REPLACE text. A block directly following another block
// of the same file may omit the path line.
//
//	inventory/stock.py
//	<<<<<<< SEARCH
//	    return sum(i.qty for i in items[1:])
//	=======
//	    return sum(i.qty for i in items)
//	>>>>>>> REPLACE
//
// 3. Whole file, for new files. A line "FILE: path" immediately followed by a
// fenced block (three or more backticks, an optional info string); the
// content runs to the first line made of the same fence alone. Use a longer
// fence (````) when the content itself contains ``` lines. Replacing an
// existing file this way is refused unless Options.AllowOverwrite is set.
//
//	FILE: inventory/report.py
//	```python
//	def report(items):
//	    return "\n".join(i.name for i in items)
//	```
//
// Paths are relative to the project root, slash-separated. Absolute paths,
// paths escaping the root with "..", paths through symlinks that resolve
// outside the root, and paths inside .git or .codeloom are refused, and then
// nothing is written.
package patch

import (
	"fmt"
)

// Kind is the format an edit block was written in.
type Kind string

// Edit block kinds.
const (
	KindDiff    Kind = "diff"    // a unified-diff file section
	KindReplace Kind = "replace" // a SEARCH/REPLACE block
	KindFile    Kind = "file"    // a whole-file block
)

// Line is one line of a diff hunk.
type Line struct {
	Op   byte   // ' ' context, '-' removed, '+' added
	Text string // without the trailing newline
	// NoEOL marks the last line of a side that has no trailing newline
	// ("\ No newline at end of file" followed it).
	NoEOL bool
}

// Hunk is one "@@" section of a unified diff.
type Hunk struct {
	OldStart, OldLines int // from the header; OldStart is 1-based
	NewStart, NewLines int
	Lines              []Line
	AnswerLine         int // 1-based line of the "@@" header in the answer
}

// Edit is one block of a model answer, touching one file.
type Edit struct {
	Kind       Kind
	Path       string // as written in the answer, "a/"/"b/" stripped
	Block      int    // 1-based index of the block in the answer
	AnswerLine int    // 1-based line where the block starts in the answer

	// KindDiff
	Hunks  []Hunk
	Create bool // "--- /dev/null"
	Delete bool // "+++ /dev/null"

	// KindReplace
	Search, Replace string

	// KindFile
	Content string
}

// Patch is a parsed model answer: its edits, in answer order.
type Patch struct {
	Edits []Edit
}

// Paths returns the distinct file paths the patch touches, in first-seen order.
func (p *Patch) Paths() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range p.Edits {
		if !seen[e.Path] {
			seen[e.Path] = true
			out = append(out, e.Path)
		}
	}
	return out
}

// ParseError says which block of an answer is malformed and why. Its text is
// written to be fed back to the model verbatim.
type ParseError struct {
	Block int    // 1-based block index, 0 when the problem is not in a block
	Line  int    // 1-based line in the answer
	Path  string // the file the block names, when known
	Msg   string
}

// Error implements error.
func (e *ParseError) Error() string {
	where := fmt.Sprintf("answer line %d", e.Line)
	if e.Block > 0 {
		where = fmt.Sprintf("block %d (answer line %d)", e.Block, e.Line)
	}
	if e.Path != "" {
		where += " for " + e.Path
	}
	return where + ": " + e.Msg
}

// ApplyError says which block could not be applied to which file and why.
// Its text is written to be fed back to the model verbatim.
type ApplyError struct {
	Block int
	Path  string
	Msg   string
}

// Error implements error.
func (e *ApplyError) Error() string {
	if e.Block > 0 {
		return fmt.Sprintf("block %d for %s: %s", e.Block, e.Path, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// PathError reports a path refused by the confinement rules.
type PathError struct {
	Path   string
	Reason string
}

// Error implements error.
func (e *PathError) Error() string {
	return fmt.Sprintf("path %q refused: %s", e.Path, e.Reason)
}
