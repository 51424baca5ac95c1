package adversarial

// Cases for the indexer's walk (issue 14: hangs and runaway memory from a
// repository's own files, file names in reports; issue 13: git's file set).

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// walkNodes decodes `index --json` output into its file nodes' paths.
type walkGraph struct {
	Nodes []struct {
		Kind    string `json:"kind"`
		Path    string `json:"path"`
		PathB64 string `json:"path_b64"`
	} `json:"nodes"`
}

func walkFiles(t *testing.T, out string) []string {
	t.Helper()
	var g walkGraph
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatalf("index --json output: %v\n%s", err, clip(out))
	}
	var files []string
	for _, n := range g.Nodes {
		if n.Kind == "file" {
			files = append(files, n.Path)
		}
	}
	sort.Strings(files)
	return files
}

// TestWalkFIFOsDoNotHang: FIFOs named .gitignore, .env (also in a
// subfolder) and like manifests used to hang `index` forever.
func TestWalkFIFOsDoNotHang(t *testing.T) {
	dir := project(t, map[string]string{"main.py": "def main():\n    return 1\n", "sub/m.py": "def m():\n    return 2\n"})
	for _, f := range []string{".gitignore", ".env", "sub/.gitignore", "sub/.env", "package.json", "requirements.txt", "go.mod", "pyproject.toml"} {
		if err := syscall.Mkfifo(filepath.Join(dir, filepath.FromSlash(f)), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	r := run(t, limits{Timeout: 60 * time.Second}, "index", "--no-cache", dir)
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "named pipe") || !strings.Contains(r.Stdout, "2 files") {
		t.Fatalf("want exit 0, 2 files indexed and the FIFOs reported: %s", r)
	}
}

// TestWalkDevZeroSymlinks: .gitignore, .env and package.json symlinked to
// /dev/zero grew memory until the OOM killer.
func TestWalkDevZeroSymlinks(t *testing.T) {
	dir := project(t, map[string]string{"main.py": "def main():\n    return 1\n"})
	for _, f := range []string{".gitignore", ".env", "package.json"} {
		if err := os.Symlink("/dev/zero", filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, limits{Timeout: 60 * time.Second, MaxRSS: 512 << 20}, "index", "--no-cache", dir)
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "character device") {
		t.Fatalf("want exit 0 and .env reported as a character device: %s", r)
	}
}

// TestWalkSIGTERMEndsIndex: SIGTERM during a long index ends it promptly
// (a parse in progress is not waited for).
func TestWalkSIGTERMEndsIndex(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 24<<20; i++ {
		b.WriteString("def f" + strconv.Itoa(i) + "(a):\n    return g(a) + h.x(a)\n\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "big.py"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "index", "--no-cache", "--max-size", "67108864", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer killGroup(cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(3 * time.Second) // well into the parse of big.py
	sent := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		// 130: interrupted; -1: the signal arrived before the handler was set.
		if code := cmd.ProcessState.ExitCode(); code != 130 && code != -1 {
			t.Errorf("exit %d after SIGTERM, want 130 (interrupted)", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("index still running 20 s after SIGTERM")
	}
	t.Logf("ended %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
	measure(t, "sigterm", 20*time.Second, 0, time.Since(sent), 0, cmd.Args[1:])
}

// TestWalkNestedCalls: 40,000 nested calls (120 KB) took 39-48 s
// (quadratic); now linear.
func TestWalkNestedCalls(t *testing.T) {
	const depth = 40000
	src := "def f(a):\n    return a\n\nx = " + strings.Repeat("f(", depth) + "1" + strings.Repeat(")", depth) + "\n"
	dir := project(t, map[string]string{"deep.py": src})
	r := run(t, limits{Timeout: 60 * time.Second}, "index", "--no-cache", dir)
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "1 files") {
		t.Fatalf("nested calls: %s", r)
	}
	t.Logf("%d levels: %v, peak %d MB", depth, r.Wall.Round(time.Millisecond), r.PeakRSS>>20)
}

// TestWalkNewlineInName: a file name with a newline is quoted on its report
// line instead of splitting it.
func TestWalkNewlineInName(t *testing.T) {
	dir := project(t, map[string]string{"ok.py": "def ok():\n    return 1\n"})
	if err := os.WriteFile(filepath.Join(dir, "bad\nskipped evil.py"), []byte("def (:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, limits{}, "index", "--no-cache", dir)
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, `  indexed "bad\nskipped evil.py": syntax errors`) {
		t.Fatalf("want the name quoted on one line: %s", r)
	}
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.HasPrefix(l, "skipped evil.py") {
			t.Fatalf("report line split by the name's newline: %s", r)
		}
	}
}

// TestWalkInvalidUTF8NameJSON: a name that is not UTF-8 keeps its exact
// bytes in --json (path_b64), naming a file that exists.
func TestWalkInvalidUTF8NameJSON(t *testing.T) {
	dir := project(t, map[string]string{"ok.py": "def ok():\n    return 1\n"})
	name := "caf\xe9.py"
	if err := os.WriteFile(filepath.Join(dir, name), []byte("def c():\n    return 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, limits{}, "index", "--no-cache", "--json", dir)
	r.bounded(t)
	var g walkGraph
	if err := json.Unmarshal([]byte(r.Stdout), &g); err != nil {
		t.Fatalf("json: %v\n%s", err, r)
	}
	found := false
	for _, n := range g.Nodes {
		if n.Kind != "file" || n.PathB64 == "" {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(n.PathB64)
		if err != nil {
			t.Fatalf("path_b64 %q: %v", n.PathB64, err)
		}
		if _, err := os.Stat(filepath.Join(dir, string(raw))); err != nil {
			t.Fatalf("path_b64 names no file: %v", err)
		}
		found = string(raw) == name
	}
	if !found {
		t.Fatalf("no file node with the raw name: %s", r)
	}
}

// TestWalkGitFileSet: in a git repository the indexed files are git's
// (info/exclude, core.excludesFile, negation, tracked files under build/).
func TestWalkGitFileSet(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := project(t, map[string]string{
		"main.py":        "def main():\n    return 1\n",
		"secret.py":      "def s():\n    return 1\n",
		"local.py":       "def l():\n    return 1\n",
		"gen/keep_me.py": "def k():\n    return 1\n",
		"gen/other.py":   "def o():\n    return 1\n",
		"build/tool.py":  "def t():\n    return 1\n",
		".gitignore":     "gen/*\n!gen/keep_me.py\n",
		"excludes.txt":   "local.py\n",
	})
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("config", "core.excludesFile", filepath.Join(dir, "excludes.txt"))
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte("secret.py\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "main.py", ".gitignore", "build/tool.py")
	git("commit", "-q", "-m", "init")
	r := run(t, limits{Env: []string{"HOME=" + dir}}, "index", "--no-cache", "--json", dir)
	r.bounded(t)
	got := strings.Join(walkFiles(t, r.Stdout), " ")
	if want := "build/tool.py gen/keep_me.py main.py"; got != want {
		t.Fatalf("indexed %q, want git's set %q", got, want)
	}
}
