package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"codeloom/models"
	"codeloom/models/llamacpp"
)

// modelFlags are the model choices of every command that talks to a model
// (ask, search, task): one source — a GGUF file, a store name, or a server —
// resolved by models.ResolveSource.
type modelFlags struct {
	path, endpoint, endpointModel, apiKey string
	ctxLen, threads                       int
	verbose                               bool
	src                                   models.Source // set by open
}

// modelFlagHelp is the --model flag's description.
const modelFlagHelp = "the model: a GGUF file, a name `codeloom models` lists (tiny:latest, org/repo:Q8_0, publisher/repo/file), or a server URL / host:port"

func (m *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.path, "model", "", modelFlagHelp)
	fs.StringVar(&m.endpoint, "endpoint", "", "OpenAI-compatible server (llama-server, Ollama, LM Studio …), e.g. http://127.0.0.1:8080 or localhost:11434 (default: $OPENAI_BASE_URL, $OPENAI_API_BASE or $OLLAMA_HOST)")
	fs.StringVar(&m.endpointModel, "endpoint-model", "", "model name sent to the server (default: the only one it serves)")
	RegisterAPIKeyFlag(fs, &m.apiKey)
	fs.IntVar(&m.ctxLen, "ctx", 0, "context length for a GGUF model (default: the model's, at most 4096)")
	fs.IntVar(&m.threads, "threads", 0, "CPU threads for a GGUF model (default: all)")
	fs.BoolVar(&m.verbose, "v", false, "show llama.cpp's log")
}

// RegisterAPIKeyFlag adds --api-key (a server's bearer token) to fs.
func RegisterAPIKeyFlag(fs *flag.FlagSet, key *string) {
	fs.StringVar(key, "api-key", "", "bearer token for the server (default: $OPENAI_API_KEY)")
}

func (m *modelFlags) check(env Env, cmd string) int {
	if m.path != "" && m.endpoint != "" {
		fmt.Fprintf(env.Stderr, "codeloom %s: choose one of --model and --endpoint (--endpoint-model names the server's model)\n", cmd)
		return ExitUsage
	}
	return ExitOK
}

// request is what the flags say, for models.ResolveSource.
func (m *modelFlags) request() models.SourceRequest {
	return models.SourceRequest{Model: m.path, Endpoint: m.endpoint, EndpointModel: m.endpointModel, APIKey: m.apiKey}
}

// open returns the chosen engine (nil when none was chosen, by flags or the
// environment) and its closer.
func (m *modelFlags) open(ctx context.Context, env Env) (models.Engine, func(), error) {
	src, err := models.ResolveSource(ctx, m.request())
	if err != nil {
		return nil, nil, err
	}
	m.src = src
	return openSource(ctx, env.Stderr, src, llamacpp.Options{ContextLength: m.ctxLen, Threads: m.threads})
}

// openSource loads a GGUF source in process or connects to a server source
// (asking it what it is), reporting on w. The zero source gives a nil engine.
func openSource(ctx context.Context, w io.Writer, src models.Source, lo llamacpp.Options) (models.Engine, func(), error) {
	switch {
	case src.IsServer():
		o, err := models.Connect(ctx, src.URL, src.APIKey, src.Model)
		if err != nil {
			if src.Origin != "--endpoint" && src.Origin != "--model" {
				err = fmt.Errorf("%w (the server comes from $%s)", err, src.Origin)
			}
			return nil, nil, err
		}
		s := o.Server
		ctxText := "context unknown"
		if s.ContextLength > 0 {
			ctxText = fmt.Sprintf("context %d tokens (%s)", s.ContextLength, s.ContextFrom)
		}
		model := o.Model
		if model == "" {
			model = "(unnamed)"
		}
		fmt.Fprintf(w, "server %s (%s, model %s, %s)\n", o.BaseURL, s.Kind, model, ctxText)
		return o, func() {}, nil
	case src.Path != "":
		start := time.Now()
		e, err := llamacpp.Load(ctx, src.Path, lo)
		if err != nil {
			return nil, nil, err
		}
		info := e.Info()
		fmt.Fprintf(w, "model %s (%s, %s, %s params) loaded in %s, chat format %s\n",
			src.Name, info.Architecture, info.FileType, humanCount(info.Parameters), time.Since(start).Round(time.Millisecond), e.ChatFormat().Name)
		return e, func() { e.Close() }, nil
	}
	return nil, func() {}, nil
}

// id names the engine's embedding space for the embedding cache.
func (m *modelFlags) id(e models.Engine) string {
	if o, ok := e.(*models.OpenAI); ok {
		return "endpoint:" + o.BaseURL + "/" + o.Model
	}
	if ip, ok := e.(models.InfoProvider); ok {
		i := ip.Info()
		return fmt.Sprintf("gguf:%s:%d:%d", i.Name, i.Size, i.Parameters)
	}
	return "model"
}

// name names the engine's model for records: the model's own name, else
// the server's address.
func (m *modelFlags) name(e models.Engine) string {
	if ip, ok := e.(models.InfoProvider); ok && ip.Info().Name != "" {
		return ip.Info().Name
	}
	if o, ok := e.(*models.OpenAI); ok {
		return o.BaseURL
	}
	return m.endpoint
}

// embedFallback reports whether a failed embedding should fall back to
// lexical search: any failure but the command's own cancellation (a
// chat-only server, a model without embeddings, a broken cache).
func embedFallback(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil
}

// openTaskModel opens the model task's flags (or the environment) choose,
// reporting on w, and names it for the records ("" and a nil engine when
// none was chosen).
func openTaskModel(ctx context.Context, w io.Writer, m modelFlags) (models.Engine, string, func(), error) {
	src, err := models.ResolveSource(ctx, m.request())
	if err != nil {
		return nil, "", nil, err
	}
	if src.Path != "" {
		fmt.Fprintf(w, "loading %s …\n", src)
	}
	e, closeModel, err := openSource(ctx, w, src, llamacpp.Options{ContextLength: m.ctxLen, Threads: m.threads})
	if err != nil || e == nil {
		return e, "", closeModel, err
	}
	return e, m.name(e), closeModel, nil
}
