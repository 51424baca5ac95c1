// Command callgraph-go measures CodeLoom's Go call graph against
// golang.org/x/tools/cmd/callgraph on one module: -algo=static (statically
// dispatched calls) for the precision and recall of `calls` edges, and
// -algo=vta (also interface and function-value calls) for the share of its
// edges that `calls` ∪ `dispatches` find. Functions are matched by position:
// a callee by the file and line of its declaration, a caller by the
// innermost CodeLoom function or method whose lines contain the oracle's
// caller (calls inside closures belong to the enclosing function, as in
// CodeLoom). Oracle edges to closures, wrappers and code outside the module
// are left out; CodeLoom edges from _test.go files and to interface methods
// (which have no body) are left out.
//
// Usage: callgraph-go -callgraph BIN -dir MODULE_DIR [-pkgs ./...] [-name NAME] [-v]
// (scripts/callgraph-go.sh installs the oracle and runs this on several modules.)
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"codeloom/app/codegraph"
)

type edge struct{ from, to string }

func main() {
	cg := flag.String("callgraph", "callgraph", "the golang.org/x/tools/cmd/callgraph binary")
	dir := flag.String("dir", "", "module folder (a copy: CodeLoom may write .codeloom/ into it)")
	pkgs := flag.String("pkgs", "./...", "package patterns given to callgraph (space-separated)")
	name := flag.String("name", "", "module name for the table (default: folder name)")
	verbose := flag.Bool("v", false, "list missed and extra edges")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: callgraph-go -callgraph BIN -dir MODULE_DIR [-pkgs ./...] [-name NAME] [-v]")
		os.Exit(2)
	}
	root, err := filepath.Abs(*dir)
	if err != nil {
		fail(err)
	}
	if *name == "" {
		*name = filepath.Base(root)
	}
	p, err := codegraph.Open(context.Background(), root, codegraph.Options{NoCache: true})
	if err != nil {
		fail(fmt.Errorf("index %s: %w", root, err))
	}
	g := p.Graph()
	defer p.Close()
	m := newMapper(g)

	static, err := oracle(*cg, "static", root, *pkgs, m)
	if err != nil {
		fail(err)
	}
	vta, err := oracle(*cg, "vta", root, *pkgs, m)
	if err != nil {
		fail(err)
	}
	calls, disp := map[edge]bool{}, map[edge]bool{}
	for _, e := range g.Edges() {
		if e.Kind != codegraph.EdgeCalls && e.Kind != codegraph.EdgeDispatches {
			continue
		}
		f, ok1 := g.Node(e.From)
		t, ok2 := g.Node(e.To)
		if !ok1 || !ok2 || !m.isFunc(f) || !m.isFunc(t) || strings.HasSuffix(f.Path, "_test.go") || m.abstract(t) ||
			!m.dirs[path.Dir(f.Path)] {
			continue
		}
		k := edge{f.ID, t.ID}
		if e.Kind == codegraph.EdgeCalls {
			calls[k] = true
		} else {
			disp[k] = true
		}
	}
	tp, tpAny := 0, 0
	for k := range calls {
		if static[k] {
			tp++
		}
		if static[k] || vta[k] {
			tpAny++
		}
	}
	union := map[edge]bool{}
	for k := range calls {
		union[k] = true
	}
	for k := range disp {
		union[k] = true
	}
	tpv := 0
	for k := range vta {
		if union[k] {
			tpv++
		}
	}
	fmt.Printf("| %s | %d | %d | %.3f | %.3f | %.3f | %d | %d | %.3f |\n", *name, len(static), len(calls),
		ratio(tp, len(calls)), ratio(tpAny, len(calls)), ratio(tp, len(static)), len(vta), len(disp), ratio(tpv, len(vta)))
	if *verbose {
		show := func(title string, es map[edge]bool, skip map[edge]bool) {
			var lines []string
			for k := range es {
				if !skip[k] {
					lines = append(lines, m.label(k.from)+" -> "+m.label(k.to))
				}
			}
			sort.Strings(lines)
			fmt.Fprintf(os.Stderr, "%s (%d):\n", title, len(lines))
			for _, l := range lines {
				fmt.Fprintln(os.Stderr, "  "+l)
			}
		}
		show("static edges CodeLoom misses", static, calls)
		show("CodeLoom calls the static oracle lacks", calls, static)
		both := map[edge]bool{}
		for k := range static {
			both[k] = true
		}
		for k := range vta {
			both[k] = true
		}
		show("CodeLoom calls neither oracle has", calls, both)
		show("VTA edges calls ∪ dispatches miss", vta, union)
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "callgraph-go:", err)
	os.Exit(1)
}

// mapper finds CodeLoom function nodes by file and line.
type mapper struct {
	g      *codegraph.Graph
	root   string
	byFile map[string][]*codegraph.Node
	dirs   map[string]bool // folders of the packages the oracle analysed
}

func newMapper(g *codegraph.Graph) *mapper {
	m := &mapper{g: g, root: g.Root(), byFile: map[string][]*codegraph.Node{}, dirs: map[string]bool{}}
	for _, n := range g.Nodes() {
		if m.isFunc(n) {
			m.byFile[n.Path] = append(m.byFile[n.Path], n)
		}
	}
	return m
}

func (m *mapper) isFunc(n *codegraph.Node) bool {
	return (n.Kind == codegraph.KindFunction || n.Kind == codegraph.KindMethod) && strings.HasSuffix(n.Path, ".go")
}

// abstract reports an interface method (no body: nothing runs there).
func (m *mapper) abstract(n *codegraph.Node) bool {
	p, ok := m.g.Node(n.Parent)
	return ok && p.Kind == codegraph.KindClass && strings.HasSuffix(p.Signature, " interface")
}

func (m *mapper) label(id string) string {
	n, _ := m.g.Node(id)
	return fmt.Sprintf("%s (%s:%d)", n.QualName, n.Path, n.StartLine)
}

// at returns the function declared at rel:line, or with inner the innermost
// function containing that line.
func (m *mapper) at(rel string, line int, inner bool) (*codegraph.Node, bool) {
	var best *codegraph.Node
	for _, n := range m.byFile[rel] {
		if n.StartLine == line {
			return n, true
		}
		if inner && n.StartLine <= line && line <= n.EndLine && (best == nil || n.StartLine > best.StartLine) {
			best = n
		}
	}
	return best, best != nil
}

// rel turns an oracle position "file:line:col" into a path relative to the
// module and a line; ok=false outside the module.
func (m *mapper) rel(pos string) (string, int, bool) {
	i := strings.LastIndexByte(pos, ':')
	if i < 0 {
		return "", 0, false
	}
	j := strings.LastIndexByte(pos[:i], ':')
	if j < 0 {
		return "", 0, false
	}
	line, err := strconv.Atoi(pos[j+1 : i])
	if err != nil {
		return "", 0, false
	}
	r, err := filepath.Rel(m.root, pos[:j])
	if err != nil || strings.HasPrefix(r, "..") {
		return "", 0, false
	}
	return filepath.ToSlash(r), line, true
}

// oracle runs callgraph and maps its edges to CodeLoom node pairs.
func oracle(bin, algo, root, pkgs string, m *mapper) (map[edge]bool, error) {
	const format = "{{.Caller}}\t{{.Callee}}\t{{.Caller.Prog.Fset.Position .Caller.Pos}}\t{{.Callee.Prog.Fset.Position .Callee.Pos}}"
	cmd := exec.Command(bin, append([]string{"-algo=" + algo, "-format=" + format}, strings.Fields(pkgs)...)...)
	cmd.Dir = root
	// Missing go.sum lines are filled in from the module proxy.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("callgraph -algo=%s in %s: %w: %s", algo, root, err, stderr.String())
	}
	es := map[edge]bool{}
	unmapped := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 || strings.Contains(f[1], "$") {
			continue // closures, bound-method and interface wrappers
		}
		cr, cl, ok1 := m.rel(f[2])
		er, el, ok2 := m.rel(f[3])
		if ok1 {
			m.dirs[path.Dir(cr)] = true
		}
		if !ok1 || !ok2 || strings.HasSuffix(cr, "_test.go") {
			continue
		}
		from, ok1 := m.at(cr, cl, true)
		to, ok2 := m.at(er, el, false)
		if !ok1 || !ok2 {
			unmapped++
			continue
		}
		es[edge{from.ID, to.ID}] = true
	}
	if unmapped > 0 {
		fmt.Fprintf(os.Stderr, "callgraph-go: %s: %d %s edges at positions with no CodeLoom function\n", filepath.Base(root), unmapped, algo)
	}
	return es, sc.Err()
}
