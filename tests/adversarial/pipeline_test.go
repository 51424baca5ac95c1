package adversarial

import (
	"bufio"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cases for the pipeline's part of issue 14 (data loss, patch escapes,
// CRLF, patch memory, special files in a plan, stale dry-run folders) and
// issue 13 (git commit/undo, no bytecode from the checks).

// pipelineTaskTimeout bounds a task that runs its checks (syntax, tests,
// probe): it only says the task finishes. On 2 cores at load 25 such a
// task took up to 82 s against the 120 s it had.
const pipelineTaskTimeout = 300 * time.Second

const (
	pipelineSampleDir    = "../../assets/sample"
	pipelineSampleScript = "../../app/pipeline/testdata/sample-fix.script"
	pipelineScriptSep    = "\n----- answer -----\n"
	pipelineNoGates      = "gates:\n  syntax: {enabled: false}\n  static: {enabled: false}\n  tests: {enabled: false}\n  probe: {enabled: false}\n"
)

// pipelineSample copies the bundled sample project into a fresh folder.
func pipelineSample(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sample")
	if err := os.CopyFS(dir, os.DirFS(pipelineSampleDir)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pipelineScript writes a --script file from answers.
func pipelineScript(t *testing.T, answers ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "answers.script")
	if err := os.WriteFile(p, []byte(strings.Join(answers, pipelineScriptSep)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func pipelineRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pipelineKillRun starts the binary in its own process group and SIGKILLs
// the group when stderr shows killOn, or after delay when killOn is empty
// (if it is still running). It reports whether the kill happened.
func pipelineKillRun(t *testing.T, env []string, killOn string, delay time.Duration, args ...string) bool {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if killOn != "" && strings.Contains(sc.Text(), killOn) {
				select {
				case seen <- struct{}{}:
				default:
				}
			}
		}
	}()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	var trigger <-chan time.Time
	if killOn == "" {
		trigger = time.After(delay)
	}
	killed := false
	select {
	case <-seen:
		killGroup(cmd.Process.Pid)
		killed = true
	case <-trigger:
		killGroup(cmd.Process.Pid)
		killed = true
	case <-done:
	case <-time.After(90 * time.Second):
		killGroup(cmd.Process.Pid)
		<-done
		t.Fatalf("%v: neither reached %q nor ended within 90 s", args, killOn)
	}
	<-done
	killGroup(cmd.Process.Pid)
	return killed
}

// pipelineUnchangedOrRecoverable asserts the invariant of issue 14: after a
// kill the file is either unchanged, or changed with its previous version
// in history — proven by rolling the task back through CodeLoom.
func pipelineUnchangedOrRecoverable(t *testing.T, dir, rel, orig string) string {
	t.Helper()
	cur := pipelineRead(t, filepath.Join(dir, rel))
	if cur == orig {
		return "unchanged"
	}
	r := run(t, limits{}, "rollback", dir, "last", "--yes")
	r.bounded(t)
	if r.Code != 0 {
		t.Fatalf("%s changed by a killed task but cannot be rolled back: %s", rel, r)
	}
	if got := pipelineRead(t, filepath.Join(dir, rel)); got != orig {
		t.Fatalf("%s changed by a killed task and its previous version is not in history (rollback left %q)", rel, got)
	}
	return "changed, restored from history"
}

func TestPipelineKillAtTheDangerousMoments(t *testing.T) {
	for _, point := range []string{"apply:recorded", "apply:written"} {
		t.Run(point, func(t *testing.T) {
			dir := pipelineSample(t)
			rel := "inventory/pricing.py"
			orig := pipelineRead(t, filepath.Join(dir, rel))
			killed := pipelineKillRun(t, []string{"CODELOOM_PAUSE_AT=" + point, "CODELOOM_PAUSE_FOR=60s"}, "paused at "+point, 0,
				"task", dir, "fix the bulk discount", "--yes", "--quiet", "--script", pipelineSampleScript)
			if !killed {
				t.Fatalf("the task never reached %s", point)
			}
			got := pipelineUnchangedOrRecoverable(t, dir, rel, orig)
			want := map[string]string{"apply:recorded": "unchanged", "apply:written": "changed, restored from history"}[point]
			if got != want {
				t.Fatalf("killed at %s: %s, want %s", point, got, want)
			}
		})
	}
}

func TestPipelineManyRandomKills(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, uint64(time.Now().UnixNano())))
	outcomes := map[string]int{}
	for round := 0; round < 10; round++ {
		dir := pipelineSample(t)
		rel := "inventory/pricing.py"
		orig := pipelineRead(t, filepath.Join(dir, rel))
		delay := time.Duration(300+rng.IntN(5000)) * time.Millisecond
		// Short pauses at the hook points widen the windows a random kill
		// must survive.
		pipelineKillRun(t, []string{"CODELOOM_PAUSE_AT=apply:recorded,apply:written", "CODELOOM_PAUSE_FOR=250ms"}, "", delay,
			"task", dir, "fix the bulk discount", "--yes", "--quiet", "--keep-failed", "--script", pipelineSampleScript)
		outcomes[pipelineUnchangedOrRecoverable(t, dir, rel, orig)]++
	}
	t.Logf("10 random kills: %v", outcomes)
}

func TestPipelineFailedTaskRollsBack(t *testing.T) {
	dir := pipelineSample(t)
	rel := filepath.Join(dir, "inventory/pricing.py")
	orig := pipelineRead(t, rel)
	plan := `{"steps":[{"objective":"fix","files":["inventory/pricing.py"],"tests":[],"risks":""}]}`
	p1 := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 100:\n=======\n    if quantity > 101:\n>>>>>>> REPLACE"
	p2 := "inventory/pricing.py\n<<<<<<< SEARCH\n    if quantity > 101:\n=======\n    if quantity > 102:\n>>>>>>> REPLACE"
	script := pipelineScript(t, "edit", plan, p1, p2)
	r := run(t, limits{Timeout: pipelineTaskTimeout}, "task", dir, "fix the discount", "--yes", "--quiet", "--max-fix", "2", "--script", script)
	r.bounded(t)
	if r.Code != 1 || !strings.Contains(r.Stdout, "Roll back the 2 changes this task made? → yes") {
		t.Fatalf("failed task: %s", r)
	}
	if pipelineRead(t, rel) != orig {
		t.Fatal("the failed task's patches are still on disk")
	}
	// Kept with --keep-failed, then rolled back by task id.
	r = run(t, limits{Timeout: pipelineTaskTimeout}, "task", dir, "fix the discount", "--yes", "--quiet", "--keep-failed", "--max-fix", "2", "--script", script)
	r.bounded(t)
	if pipelineRead(t, rel) == orig {
		t.Fatalf("--keep-failed rolled back: %s", r)
	}
	var session string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if s, ok := strings.CutPrefix(l, "session "); ok {
			session = strings.TrimSpace(s)
		}
	}
	r = run(t, limits{}, "rollback", dir, session, "--yes")
	r.bounded(t)
	if r.Code != 0 || pipelineRead(t, rel) != orig {
		t.Fatalf("rollback %s: %s", session, r)
	}
}

func TestPipelineSymlinkIntoGitRefused(t *testing.T) {
	dir := project(t, map[string]string{
		".git/config":           "[core]\n\tbare = false\n",
		".codeloom/policy.yaml": pipelineNoGates,
		"a.py":                  "x = 1\n",
	})
	for link, target := range map[string]string{"gitmeta": ".git", "meta": ".codeloom"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	evil := "FILE: gitmeta/config\n```\n[core]\n\tfsmonitor = touch " + filepath.Join(dir, "pwned") + "\n```\n\nFILE: meta/hooks.yaml\n```\nx: 1\n```"
	script := pipelineScript(t, `{"steps":[{"objective":"x","files":["a.py"],"tests":[],"risks":""}]}`, evil, evil, evil)
	r := run(t, limits{}, "task", dir, "configure git", "--yes", "--quiet", "--kind", "edit", "--script", script)
	r.bounded(t)
	if got := pipelineRead(t, filepath.Join(dir, ".git/config")); got != "[core]\n\tbare = false\n" {
		t.Fatalf(".git/config written through a symlink: %q\n%s", got, r)
	}
	if _, err := os.Stat(filepath.Join(dir, ".codeloom/hooks.yaml")); err == nil {
		t.Fatal(".codeloom written through a symlink")
	}
	if !strings.Contains(r.Stdout, "resolves through a symlink into .git") {
		t.Fatalf("no clear refusal: %s", r)
	}
}

func TestPipelineCRLFFilePatched(t *testing.T) {
	crlf := "def total(items):\r\n    return sum(items[1:])\r\n"
	for name, nl := range map[string]string{"lf-answer": "\n", "crlf-answer": "\r\n"} {
		t.Run(name, func(t *testing.T) {
			dir := project(t, map[string]string{"calc.py": crlf, ".codeloom/policy.yaml": pipelineNoGates})
			fix := strings.Join([]string{"calc.py", "<<<<<<< SEARCH", "    return sum(items[1:])", "=======", "    return sum(items)", ">>>>>>> REPLACE"}, nl)
			diff := strings.Join([]string{"--- a/calc.py", "+++ b/calc.py", "@@ -1,2 +1,3 @@", " def total(items):", "-    return sum(items)", "+    # all items", "+    return sum(items)"}, nl)
			script := pipelineScript(t, `{"steps":[{"objective":"x","files":["calc.py"],"tests":[],"risks":""}]}`, fix)
			r := run(t, limits{}, "task", dir, "sum all items", "--yes", "--quiet", "--kind", "edit", "--script", script)
			r.bounded(t)
			if got, want := pipelineRead(t, filepath.Join(dir, "calc.py")), "def total(items):\r\n    return sum(items)\r\n"; got != want || r.Code != 0 {
				t.Fatalf("SEARCH/REPLACE on CRLF: got %q want %q\n%s", got, want, r)
			}
			script = pipelineScript(t, `{"steps":[{"objective":"x","files":["calc.py"],"tests":[],"risks":""}]}`, diff)
			r = run(t, limits{}, "task", dir, "comment it", "--yes", "--quiet", "--kind", "edit", "--script", script)
			r.bounded(t)
			if got, want := pipelineRead(t, filepath.Join(dir, "calc.py")), "def total(items):\r\n    # all items\r\n    return sum(items)\r\n"; got != want || r.Code != 0 {
				t.Fatalf("diff on CRLF: got %q want %q\n%s", got, want, r)
			}
		})
	}
}

func TestPipelineHugePatchBoundedMemory(t *testing.T) {
	dir := project(t, map[string]string{"a.py": "x = 1\n", ".codeloom/policy.yaml": pipelineNoGates})
	plan := `{"steps":[{"objective":"x","files":["big.py"],"tests":[],"risks":""}]}`
	// A 100 MB script: refused up front.
	big := pipelineScript(t, "edit", plan, "FILE: big.py\n```\n"+strings.Repeat("x = 1\n", 100<<20/6)+"```")
	r := run(t, limits{MaxRSS: 400 << 20}, "task", dir, "add data", "--yes", "--quiet", "--script", big)
	r.bounded(t)
	if r.Code == 0 || !strings.Contains(r.Stderr, "MiB limit for a script file") {
		t.Fatalf("100 MB script: %s", r)
	}
	// A 20 MB answer: refused by the patch size limit with a clear message.
	// It peaked at 456 MB (/usr/bin/time) to 711 MB (this harness, 2 cores
	// at load 25) and took 36-122 s there (7 s of CPU): with 1 GiB and
	// 120 s it failed on time once. 1.5 GiB is 2.2x the largest peak and
	// still fails a run that holds the answer 3x as often as now (the
	// unbounded 100 MB patch of issue 14 took 2.1-2.5 GB); 300 s only says
	// it finishes.
	mid := pipelineScript(t, "edit", plan, "FILE: big.py\n```\n"+strings.Repeat("x = 1\n", 20<<20/6)+"```")
	r = run(t, limits{MaxRSS: 1536 << 20, Timeout: 300 * time.Second}, "task", dir, "add data", "--yes", "--quiet", "--max-tokens", "8000000", "--script", mid)
	r.bounded(t)
	if !strings.Contains(r.Stdout, "limit for a patch") {
		t.Fatalf("20 MB answer: %s", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "big.py")); err == nil {
		t.Fatal("the oversized patch was written")
	}
	t.Logf("20 MB answer: peak RSS %d MB", r.PeakRSS>>20)
}

func TestPipelineSpecialFilesInAPlanDoNotHang(t *testing.T) {
	dir := project(t, map[string]string{"a.py": "x = 1\n", ".codeloom/policy.yaml": pipelineNoGates})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.dat"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	os.Symlink("/dev/zero", filepath.Join(dir, "zero.dat"))
	plan := `{"steps":[{"objective":"x","files":["pipe.dat","zero.dat","a.py"],"tests":[],"risks":""}]}`
	edit := func(f string) string {
		return f + "\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE"
	}
	script := pipelineScript(t, plan, edit("pipe.dat"), edit("zero.dat"), edit("pipe.dat"))
	r := run(t, limits{Timeout: 60 * time.Second, MaxRSS: 512 << 20}, "task", dir, "edit the data", "--yes", "--quiet", "--kind", "edit", "--script", script)
	r.bounded(t)
	if !strings.Contains(r.Stdout, "not a regular file") && !strings.Contains(r.Stdout, "symlink") {
		t.Fatalf("no clear refusal of the special files: %s", r)
	}
}

func TestPipelineStaleDryRunFoldersCleaned(t *testing.T) {
	tmp := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	stale := filepath.Join(tmp, fmt.Sprintf("codeloom-dryrun-%d-111", dead.Process.Pid))
	live := filepath.Join(tmp, "codeloom-dryrun-"+strconv.Itoa(os.Getpid())+"-222")
	for _, d := range []string{stale, live} {
		os.MkdirAll(filepath.Join(d, "inventory"), 0o755)
		os.WriteFile(filepath.Join(d, "inventory", "x.py"), []byte("x\n"), 0o644)
	}
	dir := project(t, map[string]string{"a.py": "x = 1\n", ".codeloom/policy.yaml": pipelineNoGates})
	script := pipelineScript(t, `{"steps":[{"objective":"x","files":["a.py"],"tests":[],"risks":""}]}`, "a.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE")
	r := run(t, limits{Env: []string{"TMPDIR=" + tmp}}, "task", dir, "set x", "--yes", "--quiet", "--kind", "edit", "--script", script)
	r.bounded(t)
	if _, err := os.Stat(stale); err == nil {
		t.Fatalf("the stale dry-run folder of a dead process is still there: %s", r)
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatalf("the dry-run folder of a live process was removed: %v", err)
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		if e.Name() != filepath.Base(live) && strings.HasPrefix(e.Name(), "codeloom-dryrun-") {
			t.Fatalf("task left %s behind", e.Name())
		}
	}
}

// pipelineGit runs git in dir.
func pipelineGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestPipelineGitCommitUndoAndNoBytecode(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := pipelineSample(t)
	pipelineGit(t, dir, "init", "-q")
	pipelineGit(t, dir, "config", "user.name", "Adversary")
	pipelineGit(t, dir, "config", "user.email", "adv@example.com")
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".codeloom/\n"), 0o644)
	pipelineGit(t, dir, "add", "-A")
	pipelineGit(t, dir, "commit", "-q", "-m", "init")
	start := pipelineGit(t, dir, "rev-parse", "HEAD")
	// A dirty index: the user's staged and unstaged work.
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("staged notes\n"), 0o644)
	pipelineGit(t, dir, "add", "README.md")
	os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("unstaged\n"), 0o644)

	r := run(t, limits{Timeout: pipelineTaskTimeout}, "task", dir, "bulk_discount should give 10 % from 100 units", "--yes", "--quiet", "--commit", "--script", pipelineSampleScript)
	r.bounded(t)
	if r.Code != 0 {
		t.Fatalf("task --commit: %s", r)
	}
	if files := pipelineGit(t, dir, "diff", "--name-only", start, "HEAD"); files != "inventory/pricing.py" {
		t.Fatalf("the commits touch %q, want only the patched file", files)
	}
	if msg := pipelineGit(t, dir, "log", "-1", "--format=%B"); !strings.Contains(msg, "bulk_discount should give 10 %") {
		t.Fatalf("commit message lacks the why:\n%s", msg)
	}
	if staged := pipelineGit(t, dir, "diff", "--cached", "--name-only"); staged != "README.md" {
		t.Fatalf("staged after task: %q", staged)
	}
	if unstaged := pipelineGit(t, dir, "diff", "--name-only"); unstaged != "requirements.txt" {
		t.Fatalf("unstaged after task: %q", unstaged)
	}
	// The checks (syntax, tests, probe) wrote no bytecode.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "__pycache__" {
			t.Errorf("bytecode written into the project: %s", p)
		}
		return nil
	})
	// Undo asks; "n" keeps everything.
	before := pipelineGit(t, dir, "rev-parse", "HEAD")
	r = run(t, limits{Stdin: "n\n"}, "undo", dir)
	r.bounded(t)
	if pipelineGit(t, dir, "rev-parse", "HEAD") != before {
		t.Fatalf("declined undo committed: %s", r)
	}
	r = run(t, limits{}, "undo", dir, "--yes")
	r.bounded(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "revert commit") {
		t.Fatalf("undo: %s", r)
	}
	if staged := pipelineGit(t, dir, "diff", "--cached", "--name-only"); staged != "README.md" {
		t.Fatalf("staged after undo: %q", staged)
	}
	// Without git: undo restores from the recorded versions.
	plain := pipelineSample(t)
	orig := pipelineRead(t, filepath.Join(plain, "inventory/pricing.py"))
	r = run(t, limits{Timeout: pipelineTaskTimeout}, "task", plain, "fix", "--yes", "--quiet", "--script", pipelineSampleScript)
	r.bounded(t)
	for i := 0; i < 2; i++ {
		if r = run(t, limits{}, "undo", plain, "--yes"); r.Code != 0 {
			t.Fatalf("undo without git: %s", r)
		}
	}
	if pipelineRead(t, filepath.Join(plain, "inventory/pricing.py")) != orig {
		t.Fatal("two undos did not restore the original without git")
	}
}
