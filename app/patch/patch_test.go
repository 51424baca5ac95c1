package patch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const stockPy = `class Stock:
    def __init__(self):
        self.items = []

    def add(self, name, qty):
        self.items.append((name, qty))

    def total(self):
        return sum(q for _, q in self.items[1:])
`

// writeTree creates files under a temp dir and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// snapshot reads every regular file under root.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, want, got map[string]string) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("tree has %d files, want %d: %v", len(got), len(want), keys(got))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("file %s changed:\n%s", k, got[k])
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestParseDiff(t *testing.T) {
	ans := "Here is the fix.\n```diff\n--- a/inv/stock.py\n+++ b/inv/stock.py\n@@ -8,2 +8,2 @@\n     def total(self):\n-        return sum(q for _, q in self.items[1:])\n+        return sum(q for _, q in self.items)\n```\nDone."
	p, err := Parse(ans)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Edits) != 1 {
		t.Fatalf("edits = %d", len(p.Edits))
	}
	e := p.Edits[0]
	if e.Kind != KindDiff || e.Path != "inv/stock.py" || len(e.Hunks) != 1 || len(e.Hunks[0].Lines) != 3 {
		t.Fatalf("edit = %+v", e)
	}
	if e.Hunks[0].OldStart != 8 || e.Hunks[0].Lines[1].Op != '-' {
		t.Fatalf("hunk = %+v", e.Hunks[0])
	}
}

func TestParseReplaceAndFile(t *testing.T) {
	ans := "First:\n\ninv/stock.py\n```python\n<<<<<<< SEARCH\n        return sum(q for _, q in self.items[1:])\n=======\n        return sum(q for _, q in self.items)\n>>>>>>> REPLACE\n```\n\n```python\n<<<<<<< SEARCH\n    def add(self, name, qty):\n=======\n    def add(self, name, qty=1):\n>>>>>>> REPLACE\n```\n\nFILE: inv/report.py\n````python\ndef report():\n    return \"```\"\n````\n"
	p, err := Parse(ans)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Edits) != 3 {
		t.Fatalf("edits = %+v", p.Edits)
	}
	if p.Edits[0].Kind != KindReplace || p.Edits[0].Path != "inv/stock.py" || !strings.Contains(p.Edits[0].Replace, "self.items)") {
		t.Fatalf("edit 0 = %+v", p.Edits[0])
	}
	if p.Edits[1].Path != "inv/stock.py" || p.Edits[1].Block != 2 {
		t.Fatalf("edit 1 should inherit the path: %+v", p.Edits[1])
	}
	if p.Edits[2].Kind != KindFile || p.Edits[2].Path != "inv/report.py" || p.Edits[2].Content != "def report():\n    return \"```\"\n" {
		t.Fatalf("edit 2 = %+v", p.Edits[2])
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, answer, want string
	}{
		{"prose only", "I think the bug is in total().", "no edits found"},
		{"bad header", "--- a/x.py\n+++ b/x.py\n@@ -1 +1 bad\n-a\n+b\n", "malformed header"},
		{"no numbers", "--- a/x.py\n+++ b/x.py\n@@ ... @@\n-a\n+b\n", "malformed header"},
		{"short hunk", "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n-a\n+b\nnot a diff line\n", "header says 3 old and 3 new"},
		{"no hunks", "--- a/x.py\n+++ b/x.py\nhello\n", "not followed by a hunk header"},
		{"rename", "--- a/x.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n", "renames are not supported"},
		{"orphan hunk", "@@ -1 +1 @@\n-a\n+b\n", "without a preceding"},
		{"missing path", "Please apply:\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", "must be the file path alone"},
		{"no divider", "x.py\n<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", "before \"=======\""},
		{"unterminated", "x.py\n<<<<<<< SEARCH\na\n=======\nb\n", "never followed by \">>>>>>> REPLACE\""},
		{"stray replace", "text\n>>>>>>> REPLACE\n", "without a preceding"},
		{"unclosed fence", "FILE: new.py\n```python\nprint(1)\n", "never closed"},
		{"empty file path", "FILE: **\n```python\nprint(1)\n```\n", "must be followed by one path"},
		{"clipped at a rune", "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\nx" + strings.Repeat("é", 40) + "\n", "é…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.answer)
			if err == nil {
				t.Fatalf("Parse accepted %q", c.answer)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not mention %q", err, c.want)
			}
			var pe *ParseError
			if c.name != "prose only" && !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
		})
	}
	_, err := Parse("no edits here")
	if !errors.Is(err, ErrNoEdits) {
		t.Fatalf("want ErrNoEdits, got %v", err)
	}
	// The block number names the second, malformed block.
	_, err = Parse("x.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n\nsome words here\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Block != 2 {
		t.Fatalf("want block 2 error, got %v", err)
	}
}

func TestApplyDiffWithOffset(t *testing.T) {
	// The header says line 3 but the code sits at line 9: offset fuzz finds it.
	root := writeTree(t, map[string]string{"inv/stock.py": stockPy})
	ans := "--- a/inv/stock.py\n+++ b/inv/stock.py\n@@ -2,2 +2,2 @@\n     def total(self):\n-        return sum(q for _, q in self.items[1:])\n+        return sum(q for _, q in self.items)\n"
	p, err := Parse(ans)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Apply(context.Background(), root, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, root)["inv/stock.py"]
	want := strings.Replace(stockPy, "self.items[1:]", "self.items", 1)
	if got != want {
		t.Fatalf("got\n%s", got)
	}
	if len(cs.Changes) != 1 || cs.Changes[0].Action != ActionModify || cs.Changes[0].Added != 1 || cs.Changes[0].Removed != 1 {
		t.Fatalf("changes = %+v", cs.Changes)
	}
	if err := Revert(context.Background(), cs, false); err != nil {
		t.Fatal(err)
	}
	if snapshot(t, root)["inv/stock.py"] != stockPy {
		t.Fatal("revert did not restore the file")
	}
}

func TestApplyMultipleHunksAndEOL(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj"
	want := "a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\n"
	d, added, removed := UnifiedDiff("f.txt", old, want, true, true)
	if added != 2 || removed != 2 {
		t.Fatalf("added %d removed %d\n%s", added, removed, d)
	}
	p, err := Parse(d)
	if err != nil {
		t.Fatalf("%v\n%s", err, d)
	}
	got, _, err := applyEdit(p.Edits[0], old, true, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("got %q want %q\n%s", got, want, d)
	}
}

func TestApplyErrors(t *testing.T) {
	root := writeTree(t, map[string]string{"inv/stock.py": stockPy, "inv/dup.py": "x = 1\nx = 1\n"})
	before := snapshot(t, root)
	cases := []struct{ name, answer, want string }{
		{"context mismatch", "--- a/inv/stock.py\n+++ b/inv/stock.py\n@@ -8,2 +8,2 @@\n     def totals(self):\n-        return 0\n+        return 1\n", "were not found"},
		{"search missing", "inv/stock.py\n<<<<<<< SEARCH\n  def add(self, name, qty):\n=======\n  def add(self):\n>>>>>>> REPLACE\n", "whitespace is ignored"},
		{"search twice", "inv/dup.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n", "occurs 2 times"},
		{"file exists", "FILE: inv/stock.py\n```\nprint(1)\n```\n", "already exists"},
		{"missing file", "inv/nope.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", "does not exist"},
		{"one bad of two", "FILE: inv/new.py\n```\nprint(1)\n```\n\ninv/dup.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n", "occurs 2 times"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse(c.answer)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Apply(context.Background(), root, p, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v does not mention %q", err, c.want)
			}
			sameTree(t, before, snapshot(t, root))
		})
	}
}

func TestConfinementRefusesAndWritesNothing(t *testing.T) {
	outside := t.TempDir()
	root := writeTree(t, map[string]string{"inv/stock.py": stockPy})
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "f.py"), filepath.Join(root, "dangling.py")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	cases := []struct{ name, path, want string }{
		{"dotdot", "../evil.py", "escapes the project root"},
		{"nested dotdot", "inv/../../evil.py", "escapes the project root"},
		{"absolute", filepath.Join(outside, "evil.py"), "absolute paths"},
		{"symlink dir", "escape/evil.py", "outside the project root"},
		{"symlink file", "dangling.py", "does not resolve"},
		{"git", ".git/hooks/pre-commit", "inside .git"},
		{"codeloom", ".codeloom/codeloom.db", "inside .codeloom"},
		{"git other case", "sub/.Git/config", "inside .git"},
		{"home", "~/evil.py", "home-relative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, ans := range []string{
				"FILE: " + c.path + "\n```\nprint('pwned')\n```\n",
				"--- /dev/null\n+++ b/" + c.path + "\n@@ -0,0 +1 @@\n+print('pwned')\n",
				c.path + "\n<<<<<<< SEARCH\n=======\nprint('pwned')\n>>>>>>> REPLACE\n",
			} {
				p, err := Parse(ans)
				if err != nil {
					t.Fatalf("parse %q: %v", ans, err)
				}
				// A valid edit in the same answer must not be written either.
				p.Edits = append(p.Edits, Edit{Kind: KindFile, Path: "ok.py", Content: "x = 1\n", Block: 9})
				_, err = Apply(context.Background(), root, p, Options{})
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%q: error %v does not mention %q", ans, err, c.want)
				}
				if _, err := DryRun(context.Background(), root, "", p, Options{}); err == nil {
					t.Fatal("dry run accepted a refused path")
				}
			}
			sameTree(t, before, snapshot(t, root))
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Fatalf("something was written outside: %v", ents)
			}
		})
	}
}

func TestApplyKeepsModeCreatesDeletesAndReverts(t *testing.T) {
	root := writeTree(t, map[string]string{"run.sh": "#!/bin/sh\necho hi\n", "old.txt": "bye\n"})
	if err := os.Chmod(filepath.Join(root, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	ans := "run.sh\n<<<<<<< SEARCH\necho hi\n=======\necho hello\n>>>>>>> REPLACE\n\n" +
		"FILE: pkg/sub/new.py\n```python\nprint('new')\n```\n\n" +
		"--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
	p, err := Parse(ans)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Apply(context.Background(), root, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode not kept: %v %v", fi.Mode(), err)
	}
	after := snapshot(t, root)
	if after["run.sh"] != "#!/bin/sh\necho hello\n" || after["pkg/sub/new.py"] != "print('new')\n" {
		t.Fatalf("after = %v", after)
	}
	if _, ok := after["old.txt"]; ok {
		t.Fatal("old.txt not deleted")
	}
	if got := cs.Summary(); !strings.Contains(got, "create pkg/sub/new.py +1 -0") || !strings.Contains(got, "delete old.txt +0 -1") {
		t.Fatalf("summary = %s", got)
	}
	for _, ent := range mustReadDir(t, root) {
		if strings.Contains(ent, ".codeloom-") {
			t.Fatalf("temp file left: %s", ent)
		}
	}
	// A file changed after applying blocks the revert unless forced.
	os.WriteFile(filepath.Join(root, "pkg/sub/new.py"), []byte("edited\n"), 0o644)
	var ce *ConflictError
	if err := Revert(context.Background(), cs, false); !errors.As(err, &ce) {
		t.Fatalf("want conflict, got %v", err)
	}
	if err := Revert(context.Background(), cs, true); err != nil {
		t.Fatal(err)
	}
	sameTree(t, before, snapshot(t, root))
}

func mustReadDir(t *testing.T, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestDryRunLeavesRootAlone(t *testing.T) {
	root := writeTree(t, map[string]string{"inv/stock.py": stockPy})
	scratch := writeTree(t, map[string]string{"inv/stock.py": stockPy})
	before := snapshot(t, root)
	p, err := Parse("inv/stock.py\n<<<<<<< SEARCH\n        return sum(q for _, q in self.items[1:])\n=======\n        return sum(q for _, q in self.items)\n>>>>>>> REPLACE\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []string{"", scratch} {
		cs, err := DryRun(context.Background(), root, sc, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !cs.OK() || !strings.Contains(cs.Diff(), "+        return sum(q for _, q in self.items)") {
			t.Fatalf("report = %+v", cs)
		}
	}
	sameTree(t, before, snapshot(t, root))
	if !strings.Contains(snapshot(t, scratch)["inv/stock.py"], "self.items)") {
		t.Fatal("scratch copy not patched")
	}
}

func TestRefuseBinaryAndDirectories(t *testing.T) {
	root := writeTree(t, map[string]string{"bin.dat": "a\x00b\n", "dir/x.py": "x\n"})
	for _, ans := range []string{
		"bin.dat\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n",
		"dir\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
	} {
		p, err := Parse(ans)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Apply(context.Background(), root, p, Options{}); err == nil {
			t.Fatalf("applied %q", ans)
		}
	}
}

func TestUnifiedDiffRoundTrip(t *testing.T) {
	cases := [][2]string{
		{"", "new\n"},
		{"a\nb\nc\n", "a\nc\n"},
		{"a\nb", "a\nb\n"},
		{"a\nb\n", "a\nb"},
		{"x\n", "y"},
		{strings.Repeat("l\n", 30), strings.Repeat("l\n", 10) + "m\n" + strings.Repeat("l\n", 20)},
	}
	for _, c := range cases {
		d, _, _ := UnifiedDiff("f", c[0], c[1], true, true)
		p, err := Parse(d)
		if err != nil {
			t.Fatalf("parse %q: %v", d, err)
		}
		got, _, err := applyEdit(p.Edits[0], c[0], true, Options{})
		if err != nil || got != c[1] {
			t.Fatalf("%q → %q: got %q, %v\n%s", c[0], c[1], got, err, d)
		}
	}
}

func TestUnifiedDiffPutsRemovalsFirst(t *testing.T) {
	d, added, removed := UnifiedDiff("f.py", "a\nb\nc\n", "a\nB\nc\n", true, true)
	if added != 1 || removed != 1 || !strings.Contains(d, "-b\n+B\n") || !strings.HasPrefix(d, "--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,3 @@\n") {
		t.Fatalf("diff:\n%s", d)
	}
	if d, _, _ := UnifiedDiff("n.py", "", "x\n", false, true); !strings.HasPrefix(d, "--- /dev/null\n+++ b/n.py\n@@ -0,0 +1,1 @@\n+x\n") {
		t.Fatalf("create diff:\n%s", d)
	}
}
