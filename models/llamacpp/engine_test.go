package llamacpp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"codeloom/models"
	"codeloom/models/gguf"
)

// testModel is a random-weight llama model written once for all tests.
var testModel string

func TestMain(m *testing.M) {
	MaybeProbe()                           // this test binary serves as its own probe child
	slog.SetLogLoggerLevel(slog.LevelWarn) // llama.cpp logs through slog at info level
	dir, err := os.MkdirTemp("", "llamacpp-test")
	if err != nil {
		panic(err)
	}
	testModel = filepath.Join(dir, "tiny.gguf")
	c := gguf.TinyLlama()
	c.Vocab = gguf.BaseVocab + 64
	if err := gguf.WriteLlama(testModel, c); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func load(t *testing.T) *Engine {
	t.Helper()
	e, err := Load(context.Background(), testModel, Options{ContextLength: 256, BatchSize: 64, Threads: 1, MaxTokens: 32})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

var chat = []models.Message{{Role: models.RoleSystem, Content: "You are terse."}, {Role: models.RoleUser, Content: "Write a haiku about graphs."}}

func TestLoadInfo(t *testing.T) {
	var progress []float32
	e, err := Load(context.Background(), testModel, Options{ContextLength: 128, Progress: func(p float32) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	info := e.Info()
	if info.Architecture != "llama" || info.Name != "codeloom-tiny" || info.ContextLength != 2048 || info.FileType != "F32" {
		t.Fatalf("info %+v", info)
	}
	if e.ChatFormat().Name != "chatml" {
		t.Fatalf("chat format %q", e.ChatFormat().Name)
	}
	if len(progress) == 0 || progress[len(progress)-1] != 1 {
		t.Fatalf("progress %v", progress)
	}
	if n := e.CountTokens("hello"); n < 5 { // byte-level vocabulary: at least one token per byte
		t.Fatalf("CountTokens = %d", n)
	}
	if n := e.CountTokens("<|im_start|>"); n != 1 {
		t.Fatalf("special token counted as %d", n)
	}
}

func TestGreedyDeterministicAndStreaming(t *testing.T) {
	e := load(t)
	ctx := context.Background()
	var pieces []string
	a, err := e.Generate(ctx, chat, models.GenOptions{MaxTokens: 24}, func(p string) { pieces = append(pieces, p) })
	if err = whole(err); err != nil {
		t.Fatal(err)
	}
	if a == "" || strings.Join(pieces, "") != a {
		t.Fatalf("streamed %q, returned %q", strings.Join(pieces, ""), a)
	}
	for _, p := range pieces {
		if !utf8.ValidString(p) {
			t.Fatalf("piece %q is not valid UTF-8", p)
		}
	}
	for i := 0; i < 2; i++ {
		b, err := e.Generate(ctx, chat, models.GenOptions{MaxTokens: 24}, nil)
		if whole(err) != nil || b != a {
			t.Fatalf("greedy run %d differs: %q vs %q (%v)", i, b, a, err)
		}
	}
	// sampling with a seed is reproducible too, and differs from greedy for a random model
	s1, _ := e.Generate(ctx, chat, models.GenOptions{MaxTokens: 24, Temperature: 1.5, Seed: 7}, nil)
	s2, _ := e.Generate(ctx, chat, models.GenOptions{MaxTokens: 24, Temperature: 1.5, Seed: 7}, nil)
	if s1 != s2 {
		t.Fatalf("seeded sampling not reproducible: %q vs %q", s1, s2)
	}
	if s1 == a {
		t.Fatalf("temperature 1.5 gave the greedy answer %q", a)
	}
}

// whole is err, or nil when err only says the answer reached its token limit
// (a random-weight model rarely ends an answer by itself).
func whole(err error) error {
	if models.IsIncomplete(err) {
		return nil
	}
	return err
}

// TestCutAnswerIsIncomplete: an answer that reaches MaxTokens before the
// model ends it is returned with an IncompleteError, never as a whole answer.
func TestCutAnswerIsIncomplete(t *testing.T) {
	e := load(t)
	// greedy decoding's first token for chat is not the end (see
	// TestGreedyDeterministicAndStreaming), so one token cuts the answer
	got, err := e.Generate(context.Background(), chat, models.GenOptions{MaxTokens: 1}, nil)
	var ie *models.IncompleteError
	if !errors.As(err, &ie) || ie.Reason != models.IncompleteLength || ie.Limit != 1 || !errors.Is(err, models.ErrIncomplete) {
		t.Fatalf("cut answer %q: err %v", got, err)
	}
	full, err := e.Generate(context.Background(), chat, models.GenOptions{MaxTokens: 24}, nil)
	if whole(err) != nil || !strings.HasPrefix(full, got) {
		t.Fatalf("the cut text %q is not the start of the answer %q (%v)", got, full, err)
	}
}

func TestStopString(t *testing.T) {
	e := load(t)
	full, err := e.Complete(context.Background(), "abc", models.GenOptions{MaxTokens: 24}, nil)
	if whole(err) != nil || len(full) < 6 {
		t.Fatalf("%q %v", full, err)
	}
	// a stop string of three characters taken from the middle of the answer
	runes := []rune(full)
	stop := string(runes[2:5])
	want := full[:strings.Index(full, stop)]
	var streamed strings.Builder
	got, err := e.Complete(context.Background(), "abc", models.GenOptions{MaxTokens: 24, Stop: []string{stop}}, func(p string) { streamed.WriteString(p) })
	if err != nil || got != want || streamed.String() != want {
		t.Fatalf("stop %q: got %q streamed %q want %q (%v)", stop, got, streamed.String(), want, err)
	}
}

func TestCancelStopsPromptly(t *testing.T) {
	e := load(t)
	ctx, cancel := context.WithCancel(context.Background())
	n, after := 0, 0
	_, err := e.Complete(ctx, "count", models.GenOptions{MaxTokens: 200}, func(p string) {
		n++
		if n == 3 {
			cancel()
		} else if n > 3 {
			after++
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v after %d pieces", err, n)
	}
	if after > 2 {
		t.Fatalf("%d pieces after cancel", after)
	}
	// the engine is usable afterwards
	if _, err := e.Complete(context.Background(), "x", models.GenOptions{MaxTokens: 4}, nil); whole(err) != nil {
		t.Fatal(err)
	}
}

func TestEmbed(t *testing.T) {
	e := load(t)
	texts := []string{"def parse(path): return open(path).read()", "class Inventory: pass", ""}
	v1, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := e.Embed(context.Background(), texts[:1])
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range v1 {
		if len(v) != 64 {
			t.Fatalf("dim %d", len(v))
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-4 {
			t.Fatalf("vector %d norm² %g", i, n)
		}
	}
	for k := range v1[0] {
		if math.Abs(float64(v1[0][k]-v2[0][k])) > 1e-5 {
			t.Fatalf("not deterministic at %d: %g vs %g", k, v1[0][k], v2[0][k])
		}
	}
	same := true
	for k := range v1[0] {
		if v1[0][k] != v1[1][k] {
			same = false
		}
	}
	if same {
		t.Fatal("different texts gave the same vector")
	}
}

func TestConcurrentCallsAreSafe(t *testing.T) {
	e := load(t)
	ctx := context.Background()
	want, err := e.Complete(ctx, "shared", models.GenOptions{MaxTokens: 16}, nil)
	if err = whole(err); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := 0; i < 4; i++ {
		wg.Add(3)
		go func() {
			defer wg.Done()
			got, err := e.Complete(ctx, "shared", models.GenOptions{MaxTokens: 16}, nil)
			if whole(err) != nil || got != want {
				errs <- errors.New("concurrent generate differs: " + got)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := e.Embed(ctx, []string{"a b c"}); err != nil {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			e.CountTokens("some text")
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestGrammarAndJSONSchema(t *testing.T) {
	e := load(t)
	ctx := context.Background()
	got, err := e.Complete(ctx, "Answer:", models.GenOptions{MaxTokens: 16, Grammar: `root ::= "yes" | "no"`}, nil)
	if err != nil || (got != "yes" && got != "no") {
		t.Fatalf("grammar answer %q (%v)", got, err)
	}
	schema := `{"type":"object","properties":{"kind":{"type":"string","enum":["run","edit","debug"]},"ok":{"type":"boolean"}},"required":["kind","ok"],"additionalProperties":false}`
	got, err = e.Generate(ctx, chat, models.GenOptions{MaxTokens: 64, JSONSchema: schema}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Kind string `json:"kind"`
		OK   *bool  `json:"ok"`
	}
	if err := json.Unmarshal([]byte(got), &v); err != nil || v.OK == nil || (v.Kind != "run" && v.Kind != "edit" && v.Kind != "debug") {
		t.Fatalf("schema answer %q: %v %+v", got, err, v)
	}
	if _, err := e.Complete(ctx, "x", models.GenOptions{Grammar: "root ::= ( unbalanced"}, nil); err == nil {
		t.Fatal("invalid grammar accepted")
	}
	if _, err := e.Complete(ctx, "x", models.GenOptions{JSONSchema: "{not json"}, nil); err == nil {
		t.Fatal("invalid schema accepted")
	}
}

func TestCloseStopsAndRejects(t *testing.T) {
	e, err := Load(context.Background(), testModel, Options{ContextLength: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error)
	go func() {
		_, err := e.Complete(context.Background(), "go", models.GenOptions{MaxTokens: 200}, func(string) { once.Do(func() { close(started) }) })
		done <- err
	}()
	<-started
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("running call: %v", err)
	}
	if _, err := e.Generate(context.Background(), chat, models.GenOptions{}, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	if e.CountTokens("abcd") != 1 {
		t.Fatal("estimate after close")
	}
	e.Close() // idempotent
}

func TestBadFilesFailCleanly(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(testModel)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unsupported := filepath.Join(dir, "arch.gguf")
	if err := gguf.Write(unsupported, []gguf.KV{{Key: "general.architecture", Value: "gpt-oss-9000"}}, []gguf.TensorSpec{{Name: "w", Dims: []uint64{32}, Type: gguf.TypeF32}}); err != nil {
		t.Fatal(err)
	}
	incomplete := filepath.Join(dir, "incomplete.gguf")
	if err := gguf.Write(incomplete, []gguf.KV{{Key: "general.architecture", Value: "llama"}, {Key: "llama.block_count", Value: uint32(1)}}, []gguf.TensorSpec{{Name: "token_embd.weight", Dims: []uint64{32, 8}, Type: gguf.TypeF32}}); err != nil {
		t.Fatal(err)
	}
	dupVocab := filepath.Join(dir, "dups.gguf")
	if err := gguf.Write(dupVocab, []gguf.KV{{Key: "general.architecture", Value: "llama"}, {Key: "tokenizer.ggml.model", Value: "llama"}, {Key: "tokenizer.ggml.tokens", Value: []string{"<unk>", "a", "a"}}}, []gguf.TensorSpec{{Name: "w", Dims: []uint64{32}, Type: gguf.TypeF32}}); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.gguf") // 2 TiB of (sparse) weights
	if err := gguf.WriteSparse(huge, []gguf.KV{{Key: "general.architecture", Value: "llama"}}, []gguf.TensorSpec{{Name: "token_embd.weight", Dims: []uint64{1 << 20, 1 << 19}, Type: gguf.TypeF32}}); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		path string
		want error
	}{
		"too large":        {huge, models.ErrTooLarge},
		"duplicate tokens": {dupVocab, gguf.ErrCorrupt}, // llama.cpp would abort the process
		"missing":          {filepath.Join(dir, "nope.gguf"), os.ErrNotExist},
		"not gguf":         {write("text.gguf", []byte("just some text, definitely not weights")), gguf.ErrNotGGUF},
		"truncated":        {write("cut.gguf", data[:len(data)/2]), gguf.ErrTruncated},
		"header only":      {write("head.gguf", data[:40]), gguf.ErrTruncated},
		"arch":             {unsupported, models.ErrUnsupportedArch},
		"incomplete":       {incomplete, nil}, // passes the header check; llama.cpp must refuse it without crashing
	}
	for name, c := range cases {
		e, err := Load(context.Background(), c.path, Options{ContextLength: 64})
		if err == nil {
			e.Close()
			t.Errorf("%s: loaded", name)
			continue
		}
		if c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
		if !strings.Contains(err.Error(), c.path) && name != "missing" {
			t.Errorf("%s: error does not name the file: %v", name, err)
		}
	}
}

func TestLoadAsync(t *testing.T) {
	l := LoadAsync(context.Background(), testModel, Options{ContextLength: 64})
	e, err := l.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if l.Progress() != 1 {
		t.Fatalf("progress %g", l.Progress())
	}
	bad := LoadAsync(context.Background(), filepath.Join(t.TempDir(), "none.gguf"), Options{})
	if _, err := bad.Wait(context.Background()); err == nil {
		t.Fatal("missing file loaded")
	}
}

func TestStreamHelper(t *testing.T) {
	var got []string
	s := newStream([]string{"STOP"}, func(p string) { got = append(got, p) })
	euro := "€" // 3 bytes, fed one at a time
	for _, p := range []string{"a", euro[:1], euro[1:2], euro[2:], "ST", "O"} {
		if s.add(p) {
			t.Fatal("stopped early")
		}
	}
	if strings.Join(got, "") != "a€" {
		t.Fatalf("emitted %q (partial stop or split rune shown)", got)
	}
	if !s.add("P tail") {
		t.Fatal("stop not seen")
	}
	if s.text() != "a€" || strings.Join(got, "") != "a€" {
		t.Fatalf("text %q emitted %q", s.text(), got)
	}
	s = newStream(nil, func(p string) { got = append(got, p) })
	got = nil
	s.add("x" + euro[:2])
	if s.flush() != "x\uFFFD\uFFFD" || strings.Join(got, "") != s.text() {
		t.Fatalf("flush of broken rune: %q", s.text())
	}
}

func TestBertEmbeddingModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bert.gguf")
	if err := gguf.WriteBert(path, gguf.TinyBert()); err != nil {
		t.Fatal(err)
	}
	e, err := Load(context.Background(), path, Options{ContextLength: 512, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	texts := []string{"def tax_rate(): return 0.2", "class Inventory: pass", "def tax_rate(): return 0.2"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if len(v) != 64 || math.Abs(n-1) > 1e-4 {
			t.Fatalf("vector %d: dim %d norm² %g", i, len(v), n)
		}
	}
	for k := range vs[0] {
		if math.Abs(float64(vs[0][k]-vs[2][k])) > 1e-5 {
			t.Fatal("same text, different vectors")
		}
	}
	if dotf(vs[0], vs[1]) > 0.9999 {
		t.Fatal("different texts, same vector")
	}
	if _, err := e.Generate(context.Background(), chat, models.GenOptions{}, nil); !errors.Is(err, ErrEmbeddingOnly) {
		t.Fatalf("generate on BERT: %v", err)
	}
	// a long text is truncated to one batch, not an error
	if _, err := e.Embed(context.Background(), []string{strings.Repeat("tax rate ", 400)}); err != nil {
		t.Fatal(err)
	}
}

func dotf(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestProbeSurvivesAbortingModel(t *testing.T) {
	// llama.cpp aborts on a vocabulary with a repeated token (Inspect
	// refuses it; Probe is called directly here): only the child dies.
	dir := t.TempDir()
	bad := filepath.Join(dir, "dups.gguf")
	c := gguf.TinyLlama()
	if err := gguf.WriteLlama(bad, c); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(bad)
	// rename token "<0x01>" to "<0x00>": same length, now a duplicate
	data = bytes.Replace(data, []byte("<0x01>"), []byte("<0x00>"), 1)
	os.WriteFile(bad, data, 0o644)
	err := Probe(context.Background(), "", bad)
	if err == nil || errors.Is(err, ErrProbeUnsupported) || !strings.Contains(err.Error(), "cannot load") {
		t.Fatalf("probe of an aborting model: %v", err)
	}
	t.Log(err)
	if err := Probe(context.Background(), "", testModel); err != nil {
		t.Fatalf("probe of a good model: %v", err)
	}
	e, err := Load(context.Background(), testModel, Options{ContextLength: 64, Threads: 1, Probe: true})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	// a program without the hook: the probe is reported unsupported, and Load goes on
	if err := Probe(context.Background(), "/bin/false", testModel); !errors.Is(err, ErrProbeUnsupported) {
		t.Fatalf("probe with /bin/false: %v", err)
	}
}

// freeContext reads the C pointer out of the binding's Context: this fails
// when a binding upgrade changes that layout (contexts would then leak).
func TestBindingContextLayoutKnown(t *testing.T) {
	if !contextLayoutKnown {
		t.Fatal("llama.Context no longer starts with its C pointer: update freeContext")
	}
}
