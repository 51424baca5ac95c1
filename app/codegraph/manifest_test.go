package codegraph

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseManifests(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"requirements.txt", "# c\nrequests>=2.31 # http\nFlask[async]==3.0 ; python_version>'3.8'\n-r dev.txt\n-e .\ngit+https://x/y.git\n\nnumpy\n",
			[]string{"Flask", "numpy", "requests"}},
		{"pyproject.toml", `[project]
name = "x"
dependencies = [
  "httpx>=0.27",  # client
  'pydantic',
]
[project.optional-dependencies]
dev = ["pytest>=8", "ruff"]
[tool.poetry.dependencies]
python = "^3.11"
rich = "^13"
`, []string{"httpx", "pydantic", "pytest", "rich", "ruff"}},
		{"pyproject.toml", "[project]\ndependencies = [\"a\", \"b-c\"]\n", []string{"a", "b-c"}},
		{"go.mod", "module m\n\nrequire github.com/a/b v1.0.0\nrequire (\n\tgithub.com/c/d v0.1.0 // indirect\n\tgolang.org/x/sys v0.1.0\n)\n",
			[]string{"github.com/a/b", "github.com/c/d", "golang.org/x/sys"}},
		{"package.json", `{"dependencies":{"react":"^18"},"devDependencies":{"@types/node":"20"},"peerDependencies":{"react":"*"}}`,
			[]string{"@types/node", "react"}},
	}
	for _, c := range cases {
		got, err := parseManifest(c.name, []byte(c.src))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := parseManifest("package.json", []byte("{not json")); err == nil {
		t.Error("broken package.json accepted")
	}
	if m := goModulePath([]byte("// x\nmodule example.com/m // c\n")); m != "example.com/m" {
		t.Errorf("module path %q", m)
	}
	env := parseDotEnv([]byte("# c\nA=1\nexport B = \"two words\" # c\nC='x#y'\nD=val # comment\nbroken line\n"))
	want := map[string]string{"A": "1", "B": "two words", "C": "x#y", "D": "val"}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("dotenv = %v", env)
	}
}

func TestBrokenManifestIsReported(t *testing.T) {
	root := writeTree(t, map[string]string{
		"package.json":   "{broken",
		"pyproject.toml": "[project]\ndependencies = [\"httpx\"]\n",
		"app.py":         "import httpx\n\ndef get():\n    return httpx.get('u')\n",
	})
	p := openT(t, root, Options{NoCache: true})
	var found bool
	for _, pr := range p.Report().Problems {
		if pr.Path == "package.json" && strings.Contains(pr.Reason, "unparsable manifest") {
			found = true
		}
	}
	if !found {
		t.Errorf("broken package.json not reported: %v", p.Report().Problems)
	}
	g := p.Graph()
	wantEdge(t, g, "app", "pypi:httpx", EdgeImports)
	wantEdge(t, g, "pyproject.toml", "pypi:httpx", EdgeRequires)
	if g.Stats().Unresolved != 0 {
		t.Errorf("calls into a manifest package counted unresolved: %v", g.Stats().UnresolvedSample)
	}
}

// A line beyond bufio.Scanner's 64 KiB limit must not end the parse early.
func TestManifestLongLineKeepsTheRest(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	got, err := parseManifest("requirements.txt", []byte("# "+long+"\nrequests\r\nnumpy\n"))
	if err != nil || !reflect.DeepEqual(got, []string{"numpy", "requests"}) {
		t.Errorf("requirements after a long line: %v, %v", got, err)
	}
	env := parseDotEnv([]byte("BLOB=" + long + "\nTAX_RATE=0.2\n"))
	if env["TAX_RATE"] != "0.2" || len(env["BLOB"]) != len(long) {
		t.Errorf("dotenv after a long line: TAX_RATE=%q, len(BLOB)=%d", env["TAX_RATE"], len(env["BLOB"]))
	}
	if m := goModulePath([]byte("// " + long + "\nmodule example.com/m\n")); m != "example.com/m" {
		t.Errorf("go.mod module after a long line: %q", m)
	}
}
