package codegraph

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// openBounded indexes root, failing the test (instead of hanging it) when
// the index does not finish within limit.
func openBounded(t *testing.T, root string, opts Options, limit time.Duration) *Project {
	t.Helper()
	type res struct {
		p   *Project
		err error
	}
	done := make(chan res, 1)
	go func() {
		p, err := Open(context.Background(), root, opts)
		done <- res{p, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("open %s: %v", root, r.err)
		}
		t.Cleanup(func() { r.p.Close() })
		return r.p
	case <-time.After(limit):
		t.Fatalf("index of %s did not finish within %v (blocked on a special file?)", root, limit)
		return nil
	}
}

// problemFor returns the problem recorded for rel.
func problemFor(r Report, rel string) (Problem, bool) {
	for _, pr := range r.Problems {
		if pr.Path == rel {
			return pr, true
		}
	}
	return Problem{}, false
}

// TestSpecialFilesNeverBlock: FIFOs named like the files the indexer reads
// besides sources (.gitignore at the root and in a subfolder, .env, manifests)
// and a FIFO source file are skipped with a reason, not opened for a blocking
// read (which hung `index` forever).
func TestSpecialFilesNeverBlock(t *testing.T) {
	root := writeTree(t, map[string]string{
		"main.py":      "import os\n\ndef main():\n    return os.getenv('HOME')\n",
		"sub/mod.py":   "def helper():\n    return 1\n",
		"web/index.js": "export function hi() { return 1 }\n",
	})
	fifos := []string{".gitignore", ".env", "sub/.gitignore", "package.json", "requirements.txt", "go.mod", "sub/pyproject.toml", "pipe.py"}
	for _, f := range fifos {
		if err := syscall.Mkfifo(filepath.Join(root, filepath.FromSlash(f)), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	p := openBounded(t, root, Options{NoCache: true}, 60*time.Second)
	if _, ok := p.Graph().FileNode("sub/mod.py"); !ok {
		t.Errorf("sub/mod.py not indexed beside the FIFOs")
	}
	rep := p.Report()
	for _, f := range fifos {
		pr, ok := problemFor(rep, f)
		if !ok || !pr.Skipped || !strings.Contains(pr.Reason, "named pipe") {
			t.Errorf("%s: want a skipped problem naming the named pipe, got %+v (ok %v)", f, pr, ok)
		}
	}
}

// TestDevZeroSymlinksBounded: .gitignore, .env and package.json symlinked to
// /dev/zero are refused as character devices instead of read until memory
// runs out.
func TestDevZeroSymlinksBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	root := writeTree(t, map[string]string{"a.py": "def a():\n    return 1\n"})
	for _, f := range []string{".gitignore", ".env", "package.json"} {
		if err := os.Symlink("/dev/zero", filepath.Join(root, f)); err != nil {
			t.Fatal(err)
		}
	}
	p := openBounded(t, root, Options{NoCache: true}, 60*time.Second)
	if _, ok := p.Graph().FileNode("a.py"); !ok {
		t.Errorf("a.py not indexed")
	}
	rep := p.Report()
	if pr, ok := problemFor(rep, ".env"); !ok || !strings.Contains(pr.Reason, "character device") {
		t.Errorf(".env: want a problem naming the character device, got %+v (ok %v)", pr, ok)
	}
	if pr, ok := problemFor(rep, ".gitignore"); !ok || !strings.Contains(pr.Reason, "symlink: not followed") {
		t.Errorf(".gitignore: want a problem saying the symlink is not followed, got %+v (ok %v)", pr, ok)
	}
}

// TestReadProjectFile covers the safe reader directly: regular files are
// read, the cap holds, and special files are refused by kind.
func TestReadProjectFile(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(reg, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := readProjectFile(reg, 5); err != nil || string(b) != "hello" {
		t.Errorf("regular file: %q %v", b, err)
	}
	if _, err := readProjectFile(reg, 4); err == nil || readReason(err) != "too big: 5 bytes (limit 4)" {
		t.Errorf("over the cap: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readProjectFile(fifo, 1<<20); err == nil || !strings.Contains(readReason(err), "named pipe") {
		t.Errorf("fifo: %v", err)
	}
	if _, err := readProjectFile("/dev/zero", 1<<20); err == nil || !strings.Contains(readReason(err), "character device") {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := readProjectFile(filepath.Join(dir, "none"), 10); err == nil || readReason(err) != "deleted during the index" {
		t.Errorf("missing: %v", err)
	}
}

// TestDeepNestingLinear: 100,000 nested calls (300 KB) index at all. The
// query cursor was quadratic in the nesting depth (40,000 levels took 40 s,
// this depth several minutes); by bands it is linear. The bound here is only
// "finishes instead of hanging"; speed is measured by BenchmarkNestedCalls.
func TestDeepNestingLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	root := writeTree(t, map[string]string{"deep.py": nestedCalls(100000)})
	p := openBounded(t, root, Options{NoCache: true}, 120*time.Second)
	var calls int
	fd := p.files["deep.py"]
	for _, r := range fd.Refs.All() {
		if r.Kind == refCall && r.Name == "f" {
			calls++
		}
	}
	if calls != 100000 {
		t.Errorf("calls of f found = %d, want 100000 (every level, none twice)", calls)
	}
}

// TestBandsMatchOnePass: on nested code deeper than one band, the banded
// query run (CL_BAND) finds exactly what one unbounded pass finds.
func TestBandsMatchOnePass(t *testing.T) {
	var b strings.Builder
	b.WriteString("import os\n\nclass K(object):\n    def m(self, v):\n        return self.n(v)\n\n")
	depth := 700
	b.WriteString("x = ")
	for i := 0; i < depth; i++ {
		switch i % 4 {
		case 0:
			b.WriteString("f(a, ")
		case 1:
			b.WriteString("os.path.join(b, ")
		case 2:
			b.WriteString("[lambda q: g(q), ")
		default:
			b.WriteString("K().m(")
		}
	}
	b.WriteString("1")
	for i := depth - 1; i >= 0; i-- {
		if i%4 == 2 {
			b.WriteString("]")
		} else {
			b.WriteString(")")
		}
	}
	b.WriteString("\n\ndef tail():\n    return os.environ['HOME']\n")
	src := []byte(b.String())
	banded := extractT(t, src, false)
	whole := extractT(t, src, true)
	if banded.Refs.Len() < depth {
		t.Fatalf("only %d refs from %d levels", banded.Refs.Len(), depth)
	}
	bj, _ := json.Marshal(banded)
	wj, _ := json.Marshal(whole)
	if string(bj) != string(wj) {
		t.Errorf("banded run differs from one pass: %d vs %d refs, %d vs %d defs", banded.Refs.Len(), whole.Refs.Len(), len(banded.Defs), len(whole.Defs))
	}
}

// extractT extracts src as Python, in bands or (onePass) in one pass.
func extractT(t *testing.T, src []byte, onePass bool) *fileData {
	t.Helper()
	ex, err := newExtractor(newPython())
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	ex.run.onePass = onePass
	fd := &fileData{Path: "deep.py", Lang: "python"}
	if err := ex.extract(context.Background(), src, fd, nil, false); err != nil {
		t.Fatal(err)
	}
	return fd
}

// TestRawPathInJSON: a file name that is not valid UTF-8 keeps its exact
// bytes in the JSON output (path_b64), since "path" can only show it with
// replacement characters.
func TestRawPathInJSON(t *testing.T) {
	root := t.TempDir()
	name := "caf\xe9.py"
	if err := os.WriteFile(filepath.Join(root, name), []byte("def f():\n    return 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := openBounded(t, root, Options{NoCache: true}, 60*time.Second)
	var sb strings.Builder
	if err := WriteJSON(&sb, p.Graph()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes []struct {
			Kind    string `json:"kind"`
			Path    string `json:"path"`
			PathB64 string `json:"path_b64"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(sb.String()), &doc); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, n := range doc.Nodes {
		if n.Path == "" {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(n.PathB64)
		if err != nil || string(raw) != name {
			t.Errorf("%s node %q: path_b64 %q does not give the file name back", n.Kind, n.Path, n.PathB64)
		}
		if _, err := os.Stat(filepath.Join(root, string(raw))); err != nil {
			t.Errorf("recovered path does not exist: %v", err)
		}
		found++
	}
	if found < 2 {
		t.Errorf("want the file and its function, got %d nodes with a path", found)
	}
}

// TestChunkedMatchesWhole: a file parsed in parts (as files above
// chunkThreshold are, to bound the parser's memory) gives exactly what one
// parse gives, wherever the cuts fall.
func TestChunkedMatchesWhole(t *testing.T) {
	src := hugePython(300 << 10)
	src = append(src, []byte("\nx = [\n"+strings.Repeat("    f(1),\n", 3000)+"]\n# tail\n")...)
	whole := extractT(t, src, false)
	for _, part := range []int{4 << 10, 37 << 10, 100 << 10} {
		ex, err := newExtractor(newPython())
		if err != nil {
			t.Fatal(err)
		}
		ex.run.chunkAt, ex.run.chunkLen = 1, part
		fd := &fileData{Path: "deep.py", Lang: "python"}
		if err := ex.extract(context.Background(), src, fd, nil, false); err != nil {
			t.Fatal(err)
		}
		ex.Close()
		wj, _ := json.Marshal(whole)
		cj, _ := json.Marshal(fd)
		if string(wj) != string(cj) || fd.Syntax != whole.Syntax {
			t.Errorf("parts of %d bytes: %d defs %d refs, whole: %d defs %d refs", part, len(fd.Defs), fd.Refs.Len(), len(whole.Defs), whole.Refs.Len())
		}
	}
}
