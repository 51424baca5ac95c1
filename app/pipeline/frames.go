package pipeline

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"codeloom/app/codegraph"
)

// Frame is one source location named in failing output (a traceback frame,
// a compiler or vet message), mapped to the graph node that contains it.
type Frame struct {
	Path     string `json:"path"` // relative to the project root, slash-separated
	Line     int    `json:"line"`
	Func     string `json:"func,omitempty"`
	NodeID   string `json:"node_id,omitempty"`
	NodeName string `json:"node_name,omitempty"` // qualified name of the innermost node
	Code     string `json:"-"`                   // the node's source, for the debugger prompt
}

var (
	rePyFrame  = regexp.MustCompile(`File "([^"]+)", line (\d+)(?:, in ([^\s]+))?`)
	reFileLine = regexp.MustCompile(`(?m)((?:[A-Za-z]:)?[\w./\\-]+\.(?:py|go|js|ts|tsx|jsx|mjs)):(\d+)`)
)

// ParseFrames extracts the project locations named in output, innermost
// last as tracebacks print them, without duplicates and without locations
// outside root (library frames). At most max frames are kept (the last ones).
func ParseFrames(root, output string, max int) []Frame {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	rel := func(p string) (string, bool) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		for _, base := range []string{root, realRoot} {
			r, err := filepath.Rel(base, p)
			if err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				if _, err := os.Stat(filepath.Join(base, r)); err == nil {
					return filepath.ToSlash(r), true
				}
			}
		}
		return "", false
	}
	type hit struct {
		at int
		f  Frame
	}
	var hits []hit
	for _, m := range rePyFrame.FindAllStringSubmatchIndex(output, -1) {
		p := output[m[2]:m[3]]
		line, _ := strconv.Atoi(output[m[4]:m[5]])
		fn := ""
		if m[6] >= 0 {
			fn = output[m[6]:m[7]]
		}
		if r, ok := rel(p); ok {
			hits = append(hits, hit{m[0], Frame{Path: r, Line: line, Func: fn}})
		}
	}
	for _, m := range reFileLine.FindAllStringSubmatchIndex(output, -1) {
		p := output[m[2]:m[3]]
		line, _ := strconv.Atoi(output[m[4]:m[5]])
		if r, ok := rel(p); ok {
			hits = append(hits, hit{m[0], Frame{Path: r, Line: line}})
		}
	}
	// order by position in the output
	for i := 1; i < len(hits); i++ {
		for j := i; j > 0 && hits[j].at < hits[j-1].at; j-- {
			hits[j], hits[j-1] = hits[j-1], hits[j]
		}
	}
	seen := map[string]bool{}
	var out []Frame
	for _, h := range hits {
		key := h.f.Path + ":" + strconv.Itoa(h.f.Line)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, h.f)
	}
	if max > 0 && len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}

// MapFrames fills each frame's node from the graph (the innermost node at
// its line) with the node's code, trimmed to maxCode bytes.
func MapFrames(g *codegraph.Graph, frames []Frame, maxCode int) []Frame {
	if g == nil {
		return frames
	}
	out := make([]Frame, len(frames))
	for i, f := range frames {
		if n, ok := g.NodeAt(f.Path, f.Line); ok {
			f.NodeID = n.ID
			f.NodeName = n.QualName
			if n.Kind != codegraph.KindFile {
				if code, err := g.Code(n.ID); err == nil {
					f.Code = clipText(string(code), maxCode)
				}
			}
		}
		out[i] = f
	}
	return out
}

// clipText cuts s to at most n bytes at a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "\n… (cut)"
}
