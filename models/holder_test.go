package models

import (
	"context"
	"errors"
	"testing"
)

type closingEngine struct {
	*Scripted
	closed bool
}

func (c *closingEngine) Close() error { c.closed = true; return nil }

func TestHolder(t *testing.T) {
	var h Holder
	if _, err := h.Generate(context.Background(), nil, GenOptions{}, nil); !errors.Is(err, ErrNoModel) {
		t.Fatalf("empty holder: %v", err)
	}
	if h.CountTokens("abcdefgh") != 2 {
		t.Fatal("estimate")
	}
	a := &closingEngine{Scripted: NewScripted("from a")}
	b := &closingEngine{Scripted: NewScripted("from b")}
	h.Set(a)
	if got, _ := h.Generate(context.Background(), nil, GenOptions{}, nil); got != "from a" {
		t.Fatal(got)
	}
	h.Set(b)
	if !a.closed || b.closed {
		t.Fatal("previous engine not closed on swap")
	}
	if got, _ := h.Generate(context.Background(), nil, GenOptions{}, nil); got != "from b" {
		t.Fatal(got)
	}
	if v, err := h.Embed(context.Background(), []string{"x"}); err != nil || len(v) != 1 {
		t.Fatal(err)
	}
	var _ Engine = &h
}
