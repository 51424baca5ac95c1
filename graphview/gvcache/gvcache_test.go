package gvcache

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestDirIsPerUser(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	d, ok := Dir()
	if !ok || d != filepath.Join(home, "cache", "codeloom", "graphviz") {
		t.Fatalf("Dir = %q, %v", d, ok)
	}
	if st, err := os.Stat(d); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v %v", d, st.Mode(), err)
	}
}

func TestDirWithoutHomeFallsBackToATempFolderOfThisUser(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	t.Setenv("TMPDIR", tmp)
	d, ok := Dir()
	if !ok || d != filepath.Join(tmp, "codeloom-graphviz-"+strconv.Itoa(os.Getuid())) {
		t.Fatalf("Dir = %q, %v", d, ok)
	}
}

func TestPrepareThenRestoreLeavesTMPDIRAsItWas(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, orig := range []string{"/some/where", ""} {
		if orig == "" {
			os.Unsetenv("TMPDIR")
		} else {
			t.Setenv("TMPDIR", orig)
		}
		Prepare()
		if got := os.Getenv("TMPDIR"); !strings.HasSuffix(got, filepath.Join("codeloom", "graphviz")) {
			t.Fatalf("during go-graphviz's init TMPDIR = %q", got)
		}
		Restore()
		got, had := os.LookupEnv("TMPDIR")
		if got != orig || had != (orig != "") {
			t.Fatalf("after Restore TMPDIR = %q (set %v), want %q", got, had, orig)
		}
	}
}

// initTMPDIR is TMPDIR as init left it, before TestMain restored it.
var initTMPDIR, initSaved string

func TestMain(m *testing.M) {
	initTMPDIR, initSaved = os.Getenv("TMPDIR"), os.Getenv(savedEnv)
	Restore()
	os.Exit(m.Run())
}

// init ran Prepare: go-graphviz (were it imported) would see a per-user folder.
func TestInitPrepared(t *testing.T) {
	if initSaved == "" || !strings.Contains(initTMPDIR, "codeloom") {
		t.Fatalf("after init TMPDIR = %q, saved %q", initTMPDIR, initSaved)
	}
}
