package models

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestScriptedReplaysInOrderAndRecords(t *testing.T) {
	s := NewScripted("first answer", "zweite Antwort ünïcode")
	ctx := context.Background()
	var chunks []string
	got, err := s.Generate(ctx, []Message{{Role: RoleUser, Content: "q1"}}, GenOptions{}, func(p string) { chunks = append(chunks, p) })
	if err != nil || got != "first answer" {
		t.Fatalf("got %q, %v", got, err)
	}
	if len(chunks) < 2 || strings.Join(chunks, "") != got {
		t.Fatalf("chunks %q do not stream the answer", chunks)
	}
	chunks = nil
	got, err = s.Generate(ctx, []Message{{Role: RoleUser, Content: "q2"}}, GenOptions{}, func(p string) { chunks = append(chunks, p) })
	if err != nil || got != "zweite Antwort ünïcode" {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, c := range chunks {
		if !strings.ContainsRune(c, '\uFFFD') && len([]rune(c)) == 0 {
			t.Fatalf("empty chunk")
		}
		if strings.ToValidUTF8(c, "?") != c {
			t.Fatalf("chunk %q splits a character", c)
		}
	}
	if _, err := s.Generate(ctx, nil, GenOptions{}, nil); !errors.Is(err, ErrScriptExhausted) {
		t.Fatalf("want ErrScriptExhausted, got %v", err)
	}
	calls := s.Calls()
	if len(calls) != 3 || calls[0].Messages[0].Content != "q1" || calls[1].Messages[0].Content != "q2" {
		t.Fatalf("calls not recorded: %+v", calls)
	}
}

func TestScriptedStopAndCancel(t *testing.T) {
	s := NewScripted("abc STOP def", "a long answer that is cancelled")
	got, err := s.Generate(context.Background(), nil, GenOptions{Stop: []string{"STOP"}}, nil)
	if err != nil || got != "abc " {
		t.Fatalf("stop: got %q, %v", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	got, err = s.Generate(ctx, nil, GenOptions{}, func(string) {
		n++
		if n == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || n != 2 || got == "" || len(got) >= len("a long answer that is cancelled") {
		t.Fatalf("cancel: got %q after %d chunks, err %v", got, n, err)
	}
}

func TestScriptedEmbed(t *testing.T) {
	s := &Scripted{Dim: 64}
	vs, err := s.Embed(context.Background(), []string{"parse the HTTP request", "parseHTTPRequest", "", "totally different words"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if len(v) != 64 {
			t.Fatalf("dim %d", len(v))
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Fatalf("vector %d not normalised: %v", i, n)
		}
	}
	again, _ := s.Embed(context.Background(), []string{"parse the HTTP request"})
	if !reflect.DeepEqual(again[0], vs[0]) {
		t.Fatal("embedding not deterministic")
	}
	if dot(vs[0], vs[1]) <= dot(vs[0], vs[3]) {
		t.Fatalf("related texts should be closer: %v vs %v", dot(vs[0], vs[1]), dot(vs[0], vs[3]))
	}
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestWords(t *testing.T) {
	got := Words("parseHTTPRequest snake_case x2")
	want := []string{"parsehttprequest", "parse", "http", "request", "snake_case", "snake", "case", "x2"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q want %q", got, want)
	}
}
