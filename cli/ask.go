package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"codeloom/app/memory"
	"codeloom/app/retrieval"
	"codeloom/models"
)

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

// runAsk implements `codeloom ask DIR "question" [--model PATH|NAME|URL |
// --endpoint URL] [--api-key K] [--max-tokens N]`: retrieves the relevant code, then streams the
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
		fmt.Fprintln(env.Stderr, `usage: codeloom ask DIR "question" [--model PATH|NAME|URL | --endpoint URL] [--api-key K] [--max-tokens N] [--budget N] [--embed]`)
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
	if engine == nil {
		fmt.Fprintln(env.Stderr, "codeloom ask: need a model: --model FILE.gguf or a name `codeloom models` lists, --endpoint URL, or a server in $OPENAI_BASE_URL or $OLLAMA_HOST")
		return ExitUsage
	}
	ix, store, closeIx, err := openIndex(ctx, dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom ask: %v\n", err)
		return ExitFailure
	}
	defer closeIx()
	copts := retrieval.ContextOptions{Budget: *budget, Count: func(s string) int { return models.CountTokens(engine, s) }}
	if n := models.ContextLength(engine); n > 0 {
		// what is left of the context after the answer and the prompt's frame
		avail := n - *maxTokens - models.PromptTokens(engine, askMessages(question, nil)) - 16
		if avail < 64 {
			fmt.Fprintf(env.Stderr, "codeloom ask: the context of %d tokens has no room for code next to the question and --max-tokens %d (use --ctx, a server with a larger context, or a smaller --max-tokens)\n", n, *maxTokens)
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
		if err := embedNodes(ctx, env, ix, engine, mf.id(engine), store); embedFallback(ctx, err) {
			fmt.Fprintf(env.Stderr, "note: no embeddings (%v): lexical search only\n", err)
		} else if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom ask: %v\n", err)
			return ExitFailure
		} else {
			copts.Embedder = engine
		}
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
	if models.IsIncomplete(err) {
		outcome = "incomplete: " + err.Error()
	} else if err != nil {
		outcome = "error: " + err.Error()
	}
	if _, rerr := store.AddExchange(memory.Exchange{Session: "cli-ask", Role: "ask", Prompt: user, Answer: answer, Model: mf.name(engine), Duration: took}); rerr != nil {
		slog.Warn("record exchange", "err", rerr)
	}
	if _, rerr := store.LogActivity(memory.Activity{Module: "models", Action: "ask", Outcome: outcome, Detail: question, Duration: took}); rerr != nil {
		slog.Warn("record activity", "err", rerr)
	}
	if models.IsIncomplete(err) {
		// ask only shows the answer: it is kept, and said to be incomplete
		fmt.Fprintf(env.Stderr, "note: the answer above is incomplete: %v (raise --max-tokens)\n", err)
		return ExitOK
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
