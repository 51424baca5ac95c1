package runtime

import (
	"os"
	"path/filepath"
	"testing"
)

// fakePyenv makes <root>/shims/python3 and <root>/versions/<v>/bin/python3.
func fakePyenv(t *testing.T, versions ...string) string {
	t.Helper()
	root := t.TempDir()
	write := func(p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "shims", "python3"))
	for _, v := range versions {
		write(filepath.Join(root, "versions", v, "bin", "python3"))
	}
	return root
}

func TestFindPythonResolvesPyenvShim(t *testing.T) {
	root := fakePyenv(t, "3.11.7", "3.12.1")
	os.WriteFile(filepath.Join(root, "version"), []byte("3.11.7\n"), 0o644)
	t.Setenv("PATH", filepath.Join(root, "shims"))
	t.Setenv("PYENV_VERSION", "")
	t.Setenv("VIRTUAL_ENV", "")
	project := t.TempDir()

	got, err := FindPython(project)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "versions", "3.11.7", "bin", "python3"); got != want {
		t.Fatalf("global version: got %s, want %s", got, want)
	}

	os.WriteFile(filepath.Join(project, ".python-version"), []byte("# pinned\n3.12.1\n"), 0o644)
	sub := filepath.Join(project, "pkg")
	os.MkdirAll(sub, 0o755)
	if got, _ := FindPython(sub); got != filepath.Join(root, "versions", "3.12.1", "bin", "python3") {
		t.Fatalf(".python-version in a parent: got %s", got)
	}

	t.Setenv("PYENV_VERSION", "3.11.7:3.12.1")
	if got, _ := FindPython(sub); got != filepath.Join(root, "versions", "3.11.7", "bin", "python3") {
		t.Fatalf("PYENV_VERSION: got %s", got)
	}
}

func TestFindPythonKeepsShimItCannotMap(t *testing.T) {
	root := fakePyenv(t, "3.11.7")
	t.Setenv("PATH", filepath.Join(root, "shims"))
	t.Setenv("VIRTUAL_ENV", "")
	shim := filepath.Join(root, "shims", "python3")
	for _, v := range []string{"system", "3.9.0" /* not installed */} {
		t.Setenv("PYENV_VERSION", v)
		if got, _ := FindPython(t.TempDir()); got != shim {
			t.Fatalf("PYENV_VERSION=%s: got %s, want the shim", v, got)
		}
	}
}
