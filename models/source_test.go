package models

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolveSource(t *testing.T) {
	home := t.TempDir()
	env, system := storeLayout(t, home)
	getenv := func(vars map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := vars[k]; ok {
				return v
			}
			return env[k]
		}
	}
	disc := DiscoverOptions{Home: home, SystemOllama: system, Env: getenv(nil)}
	file := filepath.Join(home, "models/sub/a.gguf")
	ctx := context.Background()
	for _, c := range []struct {
		req  SourceRequest
		want Source
	}{
		{SourceRequest{}, Source{}},
		{SourceRequest{Model: file}, Source{Path: file, Name: file, Origin: "--model"}},
		{SourceRequest{Model: "tiny:latest"}, Source{Path: filepath.Join(home, ".ollama/models/blobs/sha256-deadbeef"), Name: "tiny:latest", Origin: "--model"}},
		{SourceRequest{Model: "org/repo:Q8_0"}, Source{Path: filepath.Join(home, "xdg/huggingface/hub/models--org--repo/snapshots/rev/model.Q8_0.gguf"), Name: "org/repo/model.Q8_0", Origin: "--model"}},
		{SourceRequest{Model: "localhost:8080"}, Source{URL: "http://localhost:8080", Origin: "--model"}},
		{SourceRequest{Model: "https://example.test/v1"}, Source{URL: "https://example.test/v1", Origin: "--model"}},
		{SourceRequest{Endpoint: "127.0.0.1:11434", EndpointModel: "tiny:latest", APIKey: "k"}, Source{URL: "http://127.0.0.1:11434", Model: "tiny:latest", APIKey: "k", Origin: "--endpoint"}},
		{SourceRequest{Env: getenv(map[string]string{"OPENAI_BASE_URL": "http://h:1/v1", "OPENAI_API_KEY": "sk", "OLLAMA_HOST": "x"})}, Source{URL: "http://h:1/v1", APIKey: "sk", Origin: "OPENAI_BASE_URL"}},
		{SourceRequest{Env: getenv(map[string]string{"OPENAI_API_BASE": "h:2"})}, Source{URL: "http://h:2", Origin: "OPENAI_API_BASE"}},
		{SourceRequest{Env: getenv(map[string]string{"OLLAMA_HOST": "0.0.0.0"})}, Source{URL: "http://127.0.0.1:11434", Origin: "OLLAMA_HOST"}},
		{SourceRequest{Env: getenv(map[string]string{"OLLAMA_HOST": "ollama.lan:9999"})}, Source{URL: "http://ollama.lan:9999", Origin: "OLLAMA_HOST"}},
		// flags win over the environment; the key comes from it
		{SourceRequest{Endpoint: "h:3", Env: getenv(map[string]string{"OPENAI_BASE_URL": "http://other", "OPENAI_API_KEY": "sk"})}, Source{URL: "http://h:3", APIKey: "sk", Origin: "--endpoint"}},
	} {
		if c.req.Env == nil {
			c.req.Env = getenv(nil)
		}
		c.req.Discover = disc
		got, err := ResolveSource(ctx, c.req)
		if err != nil || got != c.want {
			t.Errorf("%+v:\n got %+v %v\nwant %+v", c.req, got, err, c.want)
		}
	}
	for _, bad := range []SourceRequest{
		{Model: "nope:latest"},
		{Model: "broken"},
		{Model: file, Endpoint: "h:1"},
		{Endpoint: "ftp://h"},
		{Endpoint: "http://"},
	} {
		bad.Env, bad.Discover = getenv(nil), disc
		if got, err := ResolveSource(ctx, bad); err == nil {
			t.Errorf("%+v accepted: %+v", bad, got)
		}
	}
	if _, err := ResolveSource(ctx, SourceRequest{Model: "nope:latest", Env: getenv(nil), Discover: disc}); !errors.Is(err, ErrNoSuchModel) {
		t.Errorf("unknown name: %v", err)
	}
	os.Remove(file)
}
