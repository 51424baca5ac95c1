package models

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
)

// Source is where a model comes from: a GGUF file run in process, or a
// server speaking the OpenAI API (llama-server, Ollama, LM Studio, vLLM …).
type Source struct {
	Path   string `json:"path,omitempty"`   // GGUF file to load in process ("" for a server)
	Name   string `json:"name,omitempty"`   // the name the user gave (a store name, a file)
	URL    string `json:"url,omitempty"`    // server address ("" for a file)
	APIKey string `json:"-"`                // bearer token for the server
	Model  string `json:"model,omitempty"`  // model name sent to the server ("" = ask it)
	Origin string `json:"origin,omitempty"` // what chose it: "--model", "--endpoint", "OPENAI_BASE_URL", …
}

// IsServer reports whether s is a server.
func (s Source) IsServer() bool { return s.URL != "" }

// IsZero reports whether no model was chosen.
func (s Source) IsZero() bool { return s.Path == "" && s.URL == "" }

// String describes s for messages.
func (s Source) String() string {
	switch {
	case s.IsServer() && s.Model != "":
		return fmt.Sprintf("%s (model %s)", s.URL, s.Model)
	case s.IsServer():
		return s.URL
	case s.Name != "" && s.Name != s.Path:
		return fmt.Sprintf("%s (%s)", s.Name, s.Path)
	}
	return s.Path
}

// SourceRequest is what the user said about the model: flags, else the
// environment.
type SourceRequest struct {
	// Model is a GGUF path, a name `codeloom models` lists (an Ollama tag
	// such as "tiny:latest", an LM Studio "publisher/repo/file", a Hugging
	// Face "org/repo/file"), a server URL or a bare host:port.
	Model string
	// Endpoint is a server URL or host:port; EndpointModel the model name sent to it.
	Endpoint, EndpointModel string
	// APIKey is the server's bearer token ("" = $OPENAI_API_KEY).
	APIKey string
	// Env reads the environment (default os.Getenv).
	Env func(string) string
	// Discover says where store names are looked up.
	Discover DiscoverOptions
}

// ErrNoSuchModel is returned for a --model that is neither a file, a listed
// name nor a server.
var ErrNoSuchModel = errors.New("no such model")

// hostPort matches a bare host:port ("localhost:8080", "10.0.0.2:11434", "[::1]:8080").
var hostPort = regexp.MustCompile(`^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):[0-9]{1,5}$`)

// ResolveSource turns what the user said into a Source. Flags win; without
// them OPENAI_BASE_URL (or OPENAI_API_BASE) with OPENAI_API_KEY, then
// OLLAMA_HOST, select a server. The zero Source means nothing was chosen.
func ResolveSource(ctx context.Context, r SourceRequest) (Source, error) {
	env := r.Env
	if env == nil {
		env = os.Getenv
	}
	key := r.APIKey
	if key == "" {
		key = env("OPENAI_API_KEY")
	}
	server := func(raw, origin string, defPort string) (Source, error) {
		u, err := ServerURL(raw, defPort)
		if err != nil {
			return Source{}, fmt.Errorf("%s: %w", origin, err)
		}
		return Source{URL: u, APIKey: key, Model: r.EndpointModel, Origin: origin}, nil
	}
	switch {
	case r.Model != "" && r.Endpoint != "":
		return Source{}, errors.New("choose one of --model and --endpoint (--endpoint-model names the server's model)")
	case r.Endpoint != "":
		return server(r.Endpoint, "--endpoint", "")
	case r.Model != "":
		return resolveModel(ctx, r, server)
	}
	for _, v := range []string{"OPENAI_BASE_URL", "OPENAI_API_BASE"} {
		if u := strings.TrimSpace(env(v)); u != "" {
			return server(u, v, "")
		}
	}
	if h := strings.TrimSpace(env("OLLAMA_HOST")); h != "" {
		return server(h, "OLLAMA_HOST", "11434")
	}
	return Source{}, nil
}

func resolveModel(ctx context.Context, r SourceRequest, server func(string, string, string) (Source, error)) (Source, error) {
	m := r.Model
	if strings.Contains(m, "://") {
		return server(m, "--model", "")
	}
	if st, err := os.Stat(m); err == nil && !st.IsDir() {
		return Source{Path: m, Name: m, Origin: "--model"}, nil
	}
	found, err := Discover(ctx, r.Discover)
	if err != nil {
		return Source{}, err
	}
	f, err := LookupModel(found, m)
	if err == nil {
		if f.Error != "" {
			return Source{}, fmt.Errorf("model %s (%s) cannot be used: %s", m, f.Path, f.Error)
		}
		return Source{Path: f.Path, Name: f.Name, Origin: "--model"}, nil
	}
	if hostPort.MatchString(m) {
		return server(m, "--model", "")
	}
	return Source{}, err
}

// ServerURL makes a server address a URL: a bare host or host:port gets
// http:// (and defPort when it has no port), 0.0.0.0 (a listen address) is
// reached as 127.0.0.1.
func ServerURL(raw, defPort string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errors.New("empty server address")
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("server address %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("server address %q: not http or https", raw)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return "", fmt.Errorf("server address %q has no host", raw)
	}
	if host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = defPort
	}
	if port != "" {
		u.Host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	} else {
		u.Host = host
	}
	return strings.TrimRight(u.String(), "/"), nil
}
