package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"codeloom/app/memory"
	"codeloom/app/retrieval"
	"codeloom/models"
	"codeloom/models/llamacpp"
)

// modelFlags are the model choices shared by ask and search.
type modelFlags struct {
	path, endpoint, endpointModel, apiKey string
	ctxLen, threads                       int
	verbose                               bool
}

func (m *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.path, "model", "", "GGUF model file to run in-process (llama.cpp)")
	fs.StringVar(&m.endpoint, "endpoint", "", "OpenAI-compatible server, e.g. http://127.0.0.1:8080")
	fs.StringVar(&m.endpointModel, "endpoint-model", "", "model name sent to --endpoint")
	fs.StringVar(&m.apiKey, "api-key", "", "bearer token for --endpoint (default: $OPENAI_API_KEY)")
	fs.IntVar(&m.ctxLen, "ctx", 0, "context length for --model (default: the model's, at most 4096)")
	fs.IntVar(&m.threads, "threads", 0, "CPU threads for --model (default: all)")
	fs.BoolVar(&m.verbose, "v", false, "show llama.cpp's log")
}

func (m *modelFlags) check(env Env, cmd string) int {
	if m.path != "" && m.endpoint != "" {
		fmt.Fprintf(env.Stderr, "codeloom %s: choose one of --model and --endpoint\n", cmd)
		return ExitUsage
	}
	return ExitOK
}

// open returns the chosen engine (nil when none was chosen) and its closer.
func (m *modelFlags) open(ctx context.Context, env Env) (models.Engine, func(), error) {
	switch {
	case m.endpoint != "":
		o := models.NewOpenAI(m.endpoint, m.endpointModel)
		o.APIKey = m.apiKey
		if o.APIKey == "" {
			o.APIKey = os.Getenv("OPENAI_API_KEY")
		}
		return o, func() {}, nil
	case m.path != "":
		start := time.Now()
		e, err := llamacpp.Load(ctx, m.path, llamacpp.Options{ContextLength: m.ctxLen, Threads: m.threads})
		if err != nil {
			return nil, nil, err
		}
		info := e.Info()
		fmt.Fprintf(env.Stderr, "model %s (%s, %s, %s params) loaded in %s, chat format %s\n",
			info.Name, info.Architecture, info.FileType, humanCount(info.Parameters), time.Since(start).Round(time.Millisecond), e.ChatFormat().Name)
		return e, func() { e.Close() }, nil
	}
	return nil, func() {}, nil
}

// id names the engine's embedding space for the embedding cache.
func (m *modelFlags) id(e models.Engine) string {
	if m.endpoint != "" {
		return "endpoint:" + m.endpoint + "/" + m.endpointModel
	}
	if ip, ok := e.(models.InfoProvider); ok {
		i := ip.Info()
		return fmt.Sprintf("gguf:%s:%d:%d", i.Name, i.Size, i.Parameters)
	}
	return "model"
}

// name names the engine's model for records: the model's own name, else
// the endpoint.
func (m *modelFlags) name(e models.Engine) string {
	if ip, ok := e.(models.InfoProvider); ok && ip.Info().Name != "" {
		return ip.Info().Name
	}
	return m.endpoint
}

// quietNativeLogs raises the default logger to warnings (llama.cpp logs
// through it at info level) unless verbose; the returned func restores it.
func quietNativeLogs(verbose bool) func() {
	if verbose {
		return func() {}
	}
	prev := slog.SetLogLoggerLevel(slog.LevelWarn)
	return func() { slog.SetLogLoggerLevel(prev) }
}

func humanCount(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// askSystemPrompt frames the question for the model.
const askSystemPrompt = "You are CodeLoom, an assistant that answers questions about a software project. " +
	"Use the project code given below; cite the files and lines you rely on as path:line. " +
	"If the code does not answer the question, say so."

// runAsk implements `codeloom ask DIR "question" [--model PATH | --endpoint
// URL] [--max-tokens N]`: retrieves the relevant code, then streams the
// model's answer to stdout (progress and sources go to stderr).
func runAsk(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("ask", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	maxTokens := fs.Int("max-tokens", 512, "limit of the answer in tokens")
	budget := fs.Int("budget", 0, "tokens of project code to include (default: a third of the context, at most 2048)")
	temp := fs.Float64("temperature", 0, "sampling temperature (0 = greedy)")
	seed := fs.Int("seed", 0, "sampling seed")
	embed := fs.Bool("embed", false, "also rank code by embedding similarity (embeds every node once; cached)")
	showContext := fs.Bool("show-context", false, "print the retrieved code to stderr before the answer")
	var mf modelFlags
	mf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, `usage: codeloom ask DIR "question" [--model PATH | --endpoint URL] [--max-tokens N] [--budget N] [--embed]`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(env.Stderr, `codeloom ask: need a folder and a question (codeloom ask DIR "question")`)
		return ExitUsage
	}
	dir, question := fs.Arg(0), fs.Arg(1)
	if code := checkDir(env, "ask", dir); code != ExitOK {
		return code
	}
	if strings.TrimSpace(question) == "" {
		fmt.Fprintln(env.Stderr, "codeloom ask: the question is empty")
		return ExitUsage
	}
	if code := mf.check(env, "ask"); code != ExitOK {
		return code
	}
	if mf.path == "" && mf.endpoint == "" {
		fmt.Fprintln(env.Stderr, "codeloom ask: need a model: --model FILE.gguf or --endpoint URL (GGUF files found on this machine are listed by the GUI's model picker)")
		return ExitUsage
	}
	if *maxTokens <= 0 {
		fmt.Fprintln(env.Stderr, "codeloom ask: --max-tokens must be positive")
		return ExitUsage
	}
	restore := quietNativeLogs(mf.verbose)
	defer restore()

	engine, closeEngine, err := mf.open(ctx, env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom ask: %v\n", err)
		return ExitFailure
	}
	defer closeEngine()
	ix, store, closeIx, err := openIndex(ctx, dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom ask: %v\n", err)
		return ExitFailure
	}
	defer closeIx()
	copts := retrieval.ContextOptions{Budget: *budget, Count: func(s string) int { return models.CountTokens(engine, s) }}
	if e, ok := engine.(*llamacpp.Engine); ok {
		// what is left of the context after the answer and the prompt's frame
		frame, err := e.Prompt(askMessages(question, nil))
		if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom ask: %v\n", err)
			return ExitFailure
		}
		avail := e.ContextLength() - *maxTokens - e.CountTokens(frame) - 16
		if avail < 64 {
			fmt.Fprintf(env.Stderr, "codeloom ask: the context of %d tokens has no room for code next to the question and --max-tokens %d (use --ctx or a smaller --max-tokens)\n", e.ContextLength(), *maxTokens)
			return ExitUsage
		}
		if copts.Budget <= 0 || copts.Budget > avail {
			copts.Budget = min(avail, 2048)
		}
	}
	if copts.Budget <= 0 {
		copts.Budget = 2048
	}
	if *embed {
		if err := embedNodes(ctx, env, ix, engine, mf.id(engine), store); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom ask: %v\n", err)
			return ExitFailure
		}
		copts.Embedder = engine
	}
	cctx, err := ix.Context(ctx, question, copts)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom ask: %v\n", err)
		return ExitFailure
	}
	var names []string
	for _, p := range cctx.Pieces {
		names = append(names, fmt.Sprintf("%s (%s:%d)", p.Node.QualName, p.Node.Path, p.Node.StartLine))
	}
	fmt.Fprintf(env.Stderr, "context: %d pieces, %d/%d tokens: %s\n", len(cctx.Pieces), cctx.Tokens, cctx.Budget, strings.Join(names, ", "))
	if *showContext {
		fmt.Fprintln(env.Stderr, cctx.Text())
	}
	msgs := askMessages(question, cctx)
	user := msgs[1].Content
	start := time.Now()
	answer, err := engine.Generate(ctx, msgs, models.GenOptions{MaxTokens: *maxTokens, Temperature: float32(*temp), Seed: *seed}, func(piece string) {
		fmt.Fprint(env.Stdout, piece)
	})
	fmt.Fprintln(env.Stdout)
	took := time.Since(start)
	outcome := "ok"
	if err != nil {
		outcome = "error: " + err.Error()
	}
	if _, rerr := store.AddExchange(memory.Exchange{Session: "cli-ask", Role: "ask", Prompt: user, Answer: answer, Model: mf.name(engine), Duration: took}); rerr != nil {
		slog.Warn("record exchange", "err", rerr)
	}
	if _, rerr := store.LogActivity(memory.Activity{Module: "models", Action: "ask", Outcome: outcome, Detail: question, Duration: took}); rerr != nil {
		slog.Warn("record activity", "err", rerr)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom ask: %v\n", err)
		return ExitFailure
	}
	fmt.Fprintf(env.Stderr, "answered in %s\n", took.Round(time.Millisecond))
	return ExitOK
}

// askMessages is the chat for a question with its retrieved code (nil: none).
func askMessages(question string, c *retrieval.Context) []models.Message {
	user := "(No project code matched the question.)\n\nQuestion: " + question
	if c != nil && len(c.Pieces) > 0 {
		user = "Project code:\n\n" + c.Text() + "Question: " + question
	}
	return []models.Message{{Role: models.RoleSystem, Content: askSystemPrompt}, {Role: models.RoleUser, Content: user}}
}
