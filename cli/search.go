package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/app/retrieval"
	"codeloom/models"
)

// searchHit is one line of `codeloom search --json`.
type searchHit struct {
	Score   float64         `json:"score"`
	Lexical float64         `json:"lexical"`
	Vector  float64         `json:"vector,omitempty"`
	Node    *codegraph.Node `json:"node"`
}

// runSearch implements `codeloom search DIR "query" [--json] [--limit N]
// [--model PATH | --endpoint URL]`: nodes ranked by BM25, fused with
// embedding similarity when a model is given.
func runSearch(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "print the ranking as JSON")
	limit := fs.Int("limit", 10, "number of results")
	var mf modelFlags
	mf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, `usage: codeloom search DIR "query" [--json] [--limit N] [--model PATH|NAME|URL | --endpoint URL] [--api-key K]`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(env.Stderr, `codeloom search: need a folder and a query (codeloom search DIR "query")`)
		return ExitUsage
	}
	dir, query := fs.Arg(0), fs.Arg(1)
	if code := checkDir(env, "search", dir); code != ExitOK {
		return code
	}
	if strings.TrimSpace(query) == "" {
		fmt.Fprintln(env.Stderr, "codeloom search: the query is empty")
		return ExitUsage
	}
	if *limit <= 0 {
		fmt.Fprintln(env.Stderr, "codeloom search: --limit must be positive")
		return ExitUsage
	}
	if code := mf.check(env, "search"); code != ExitOK {
		return code
	}
	restore := quietNativeLogs(mf.verbose)
	defer restore()
	engine, closeEngine, err := mf.open(ctx, env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom search: %v\n", err)
		return ExitFailure
	}
	defer closeEngine()
	// Lexical search only reads: like query it answers beside another
	// process holding the store (the app); embeddings are cached, so a
	// model needs the store for writing.
	openIx := openIndex
	if engine == nil {
		openIx = openIndexReadOnly
	}
	ix, store, closeIx, err := openIx(ctx, dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom search: %v\n", err)
		return ExitFailure
	}
	defer closeIx()
	var emb retrieval.Embedder
	if engine != nil {
		if err := embedNodes(ctx, env, ix, engine, mf.id(engine), store); embedFallback(ctx, err) {
			// a chat-only server (llama-server without --embeddings) still
			// has lexical search
			fmt.Fprintf(env.Stderr, "note: the model cannot embed (%v): lexical search only\n", err)
		} else if err != nil {
			fmt.Fprintf(env.Stderr, "codeloom search: %v\n", err)
			return ExitFailure
		} else {
			emb = engine
		}
	}
	res, err := ix.Search(ctx, query, emb, *limit)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom search: %v\n", err)
		return ExitFailure
	}
	if *asJSON {
		hits := make([]searchHit, 0, len(res))
		for _, r := range res {
			hits = append(hits, searchHit{Score: r.Score, Lexical: r.Lexical, Vector: r.Vector, Node: r.Node})
		}
		if err := writeJSONValue(env.Stdout, hits); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom search: write: %v\n", err)
			return ExitFailure
		}
		return ExitOK
	}
	if len(res) == 0 {
		fmt.Fprintf(env.Stderr, "codeloom search: nothing matches %q\n", query)
		return ExitOK
	}
	for _, r := range res {
		writeNodeLine(env.Stdout, r.Node, strconv.FormatFloat(r.Score, 'f', 4, 64))
	}
	return ExitOK
}

// openIndex indexes dir (through the graph cache in DIR/.codeloom) and
// builds its retrieval index. The store stays open until close is called.
func openIndex(ctx context.Context, dir string) (*retrieval.Index, *memory.Store, func(), error) {
	store, err := memory.OpenProject(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	p, err := codegraph.Open(ctx, dir, codegraph.Options{Store: store})
	if err != nil {
		store.Close()
		return nil, nil, nil, err
	}
	ix := retrieval.New(p.Graph())
	return ix, store, func() { p.Close(); store.Close() }, nil
}

// openIndexReadOnly is openIndex for a command that only reads: the graph
// comes from the cache through a reader (a snapshot when another process
// holds the store) and no store is returned.
func openIndexReadOnly(ctx context.Context, dir string) (*retrieval.Index, *memory.Store, func(), error) {
	p, err := codegraph.Open(ctx, dir, codegraph.Options{NoUpdates: true})
	if err != nil {
		return nil, nil, nil, err
	}
	return retrieval.New(p.Graph()), nil, func() { p.Close() }, nil
}

// embedNodes computes (or loads from the store) the node embeddings of ix.
func embedNodes(ctx context.Context, env Env, ix *retrieval.Index, e models.Engine, modelID string, store *memory.Store) error {
	last := -1
	st, err := ix.Embed(ctx, e, retrieval.EmbedOptions{ModelID: modelID, Cache: store, Progress: func(done, total int) {
		if pct := done * 100 / max(total, 1); pct/10 != last/10 {
			last = pct
			fmt.Fprintf(env.Stderr, "\rembedding nodes: %d/%d", done, total)
		}
	}})
	fmt.Fprintln(env.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "embeddings: %d nodes (%d cached, %d computed)\n", st.Nodes, st.Cached, st.Computed)
	return nil
}
