package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestOpenAIStreaming(t *testing.T) {
	var got chatRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad path or key", 400)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range []string{"Hel", "lo, ", "wörld"} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", p)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, ": keep-alive\n\ndata: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	o := NewOpenAI(srv.URL+"/v1/", "m")
	o.APIKey = "k"
	var pieces []string
	ans, err := o.Generate(context.Background(), []Message{{RoleUser, "hi"}}, GenOptions{MaxTokens: 9, Stop: []string{"X"}, Seed: 3, JSONSchema: `{"type":"string"}`}, func(p string) { pieces = append(pieces, p) })
	if err != nil || ans != "Hello, wörld" {
		t.Fatalf("%q %v", ans, err)
	}
	if strings.Join(pieces, "|") != "Hel|lo, |wörld" {
		t.Fatalf("pieces %q", pieces)
	}
	if !got.Stream || got.MaxTokens != 9 || got.Model != "m" || got.Messages[0].Content != "hi" || got.Stop[0] != "X" || *got.Seed != 3 || got.ResponseFormat == nil {
		t.Fatalf("request %+v", got)
	}
}

func TestOpenAIErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "embeddings") {
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":{"message":"model not loaded"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\ndata: {not json}\n\n")
	}))
	defer srv.Close()
	o := NewOpenAI(srv.URL, "")
	if _, err := o.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "HTTP 500: model not loaded") {
		t.Fatalf("embed error %v", err)
	}
	ans, err := o.Generate(context.Background(), nil, GenOptions{}, nil)
	if err == nil || ans != "ok" || !strings.Contains(err.Error(), "bad stream chunk") {
		t.Fatalf("%q %v", ans, err)
	}
	if _, err := o.Generate(context.Background(), nil, GenOptions{JSONSchema: "{oops"}, nil); err == nil {
		t.Fatal("bad schema accepted")
	}
	closed := NewOpenAI("http://127.0.0.1:1", "")
	if _, err := closed.Generate(context.Background(), nil, GenOptions{}, nil); err == nil {
		t.Fatal("refused connection gave no error")
	}
}

func TestOpenAITimeoutsAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "embeddings") { // never answers
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"first\"}}]}\n\n")
		w.(http.Flusher).Flush()
		select { // then goes silent
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	o := NewOpenAI(srv.URL, "")
	o.ConnectTimeout = 100 * time.Millisecond
	o.IdleTimeout = 100 * time.Millisecond
	if _, err := o.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "no response within") {
		t.Fatalf("connect timeout: %v", err)
	}
	ans, err := o.Generate(context.Background(), nil, GenOptions{}, nil)
	if err == nil || ans != "first" || !strings.Contains(err.Error(), "silent") {
		t.Fatalf("idle timeout: %q %v", ans, err)
	}
	o.IdleTimeout = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	ans, err = o.Generate(ctx, nil, GenOptions{}, func(string) { cancel() })
	if !errors.Is(err, context.Canceled) || ans != "first" {
		t.Fatalf("cancel: %q %v", ans, err)
	}
}

func TestOpenAIEmbed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if req.Model != "emb" || len(req.Input) != 2 {
			http.Error(w, "bad request", 400)
			return
		}
		// out of order, unnormalised
		fmt.Fprint(w, `{"data":[{"index":1,"embedding":[0,3,4]},{"index":0,"embedding":[2,0,0]}]}`)
	}))
	defer srv.Close()
	o := NewOpenAI(srv.URL, "chat")
	o.EmbedModel = "emb"
	vs, err := o.Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0][0] != 1 || math.Abs(float64(vs[1][1])-0.6) > 1e-6 || math.Abs(float64(vs[1][2])-0.8) > 1e-6 {
		t.Fatalf("vectors %v", vs)
	}
}
