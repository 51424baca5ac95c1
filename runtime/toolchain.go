package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
)

// ErrToolchain is wrapped by every "interpreter or compiler not found" error.
var ErrToolchain = errors.New("toolchain not found")

func venvPython(venv string) []string {
	if goruntime.GOOS == "windows" {
		return []string{filepath.Join(venv, "Scripts", "python.exe")}
	}
	return []string{filepath.Join(venv, "bin", "python"), filepath.Join(venv, "bin", "python3")}
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	return goruntime.GOOS == "windows" || fi.Mode()&0o111 != 0
}

// FindPython returns the Python interpreter for a project: its own virtual
// environment (.venv/, then venv/), then $VIRTUAL_ENV, then python3 and
// python on PATH. The error names everything it looked for.
func FindPython(projectDir string) (string, error) {
	var looked []string
	var candidates []string
	if projectDir != "" {
		for _, v := range []string{".venv", "venv"} {
			candidates = append(candidates, venvPython(filepath.Join(projectDir, v))...)
		}
	}
	if ve := os.Getenv("VIRTUAL_ENV"); ve != "" {
		candidates = append(candidates, venvPython(ve)...)
	} else {
		looked = append(looked, "$VIRTUAL_ENV (unset)")
	}
	for _, c := range candidates {
		if isExecutable(c) {
			return c, nil
		}
	}
	looked = append(candidates, looked...)
	for _, name := range []string{"python3", "python"} {
		if p, err := exec.LookPath(name); err == nil {
			return resolvePyenvShim(p, name, projectDir), nil
		}
		looked = append(looked, name+" on PATH")
	}
	return "", fmt.Errorf("python: %w: looked for %s", ErrToolchain, strings.Join(looked, ", "))
}

// resolvePyenvShim maps a pyenv shim (<root>/shims/python3, a shell script
// that costs a second or more per start) to the interpreter pyenv would pick,
// following pyenv's own order: $PYENV_VERSION, a .python-version file in the
// project or its parents, then <root>/version. Anything it cannot map
// (the "system" version, a missing interpreter) keeps the shim.
func resolvePyenvShim(path, name, projectDir string) string {
	shims := filepath.Dir(path)
	if filepath.Base(shims) != "shims" {
		return path
	}
	root := filepath.Dir(shims)
	if fi, err := os.Stat(filepath.Join(root, "versions")); err != nil || !fi.IsDir() {
		return path
	}
	version := strings.TrimSpace(strings.Split(os.Getenv("PYENV_VERSION"), ":")[0])
	if version == "" && projectDir != "" {
		if dir, err := filepath.Abs(projectDir); err == nil {
			for ; ; dir = filepath.Dir(dir) {
				if v := firstLine(filepath.Join(dir, ".python-version")); v != "" {
					version = v
					break
				}
				if filepath.Dir(dir) == dir {
					break
				}
			}
		}
	}
	if version == "" {
		version = firstLine(filepath.Join(root, "version"))
	}
	if version == "" || version == "system" {
		return path
	}
	if real := filepath.Join(root, "versions", version, "bin", name); isExecutable(real) {
		return real
	}
	return path
}

// firstLine returns the first non-empty, non-comment line of a small file.
func firstLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return strings.Fields(line)[0]
		}
	}
	return ""
}

// FindGo returns the go command: go on PATH, then $GOROOT/bin/go, then
// /usr/local/go/bin/go.
func FindGo() (string, error) {
	return findTool("go", "go on PATH", os.Getenv("GOROOT"), "/usr/local/go")
}

// FindNode returns the Node.js interpreter: node, then nodejs on PATH.
func FindNode() (string, error) {
	if p, err := exec.LookPath("node"); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("nodejs"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("node: %w: looked for node and nodejs on PATH", ErrToolchain)
}

// FindNpm returns the npm command on PATH.
func FindNpm() (string, error) {
	if p, err := exec.LookPath("npm"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("npm: %w: looked for npm on PATH", ErrToolchain)
}

func findTool(name, what string, roots ...string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	looked := []string{what}
	for _, r := range roots {
		if r == "" {
			continue
		}
		p := filepath.Join(r, "bin", name)
		if isExecutable(p) {
			return p, nil
		}
		looked = append(looked, p)
	}
	return "", fmt.Errorf("%s: %w: looked for %s", name, ErrToolchain, strings.Join(looked, ", "))
}

// snippetCommand writes spec.Code into dir and returns the command that runs
// it with the toolchain of spec.Language.
func snippetCommand(spec Spec, dir string) ([]string, error) {
	write := func(name string) (string, error) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(spec.Code), 0o644); err != nil {
			return "", fmt.Errorf("run snippet: %w", err)
		}
		return p, nil
	}
	switch strings.ToLower(spec.Language) {
	case "python", "py", "python3":
		py, err := FindPython(spec.Dir)
		if err != nil {
			return nil, err
		}
		f, err := write("snippet.py")
		if err != nil {
			return nil, err
		}
		return []string{py, f}, nil
	case "go", "golang":
		g, err := FindGo()
		if err != nil {
			return nil, err
		}
		if _, err := write("main.go"); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module snippet\n\ngo 1.21\n"), 0o644); err != nil {
			return nil, fmt.Errorf("run snippet: %w", err)
		}
		return []string{g, "-C", dir, "run", "."}, nil
	case "javascript", "js", "node":
		n, err := FindNode()
		if err != nil {
			return nil, err
		}
		f, err := write("snippet.js")
		if err != nil {
			return nil, err
		}
		return []string{n, f}, nil
	case "sh", "shell", "bash":
		sh := "/bin/sh"
		if strings.ToLower(spec.Language) == "bash" {
			p, err := exec.LookPath("bash")
			if err != nil {
				return nil, fmt.Errorf("bash: %w: looked for bash on PATH", ErrToolchain)
			}
			sh = p
		}
		f, err := write("snippet.sh")
		if err != nil {
			return nil, err
		}
		return []string{sh, f}, nil
	case "":
		return nil, errors.New("run snippet: no language given (python, go, javascript, sh)")
	default:
		return nil, fmt.Errorf("run snippet: unsupported language %q (python, go, javascript, sh)", spec.Language)
	}
}
