package models

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// ErrScriptExhausted is returned by Scripted when it has no answer left.
var ErrScriptExhausted = errors.New("scripted engine: no canned answer left")

// Call is one Generate call a Scripted engine received.
type Call struct {
	Messages []Message
	Options  GenOptions
}

// Scripted is an Engine that replays canned answers in order, records the
// prompts it receives and streams each answer in small chunks. Embed returns
// deterministic hashed bag-of-words vectors. It is meant for tests of the
// pipeline and the GUI; the zero value has no answers and 256-dim embeddings.
type Scripted struct {
	mu      sync.Mutex
	answers []string
	next    int
	calls   []Call
	// Dim is the embedding dimension (256 when 0). Set before first use.
	Dim int
	// ChunkSize is the streaming chunk size in bytes (4 when 0); chunks never
	// split a UTF-8 character.
	ChunkSize int
}

// NewScripted returns a Scripted engine that answers with answers, in order.
func NewScripted(answers ...string) *Scripted {
	return &Scripted{answers: append([]string(nil), answers...)}
}

// Add appends canned answers.
func (s *Scripted) Add(answers ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers = append(s.answers, answers...)
}

// Calls returns a copy of the Generate calls received so far.
func (s *Scripted) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		out[i] = Call{Messages: append([]Message(nil), c.Messages...), Options: c.Options}
	}
	return out
}

// Remaining reports how many canned answers are left.
func (s *Scripted) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.answers) - s.next
}

// Generate records the call and streams the next canned answer. Stop
// sequences and MaxTokens (counted as estimated tokens) are honoured.
func (s *Scripted) Generate(ctx context.Context, msgs []Message, opts GenOptions, onToken func(string)) (string, error) {
	s.mu.Lock()
	s.calls = append(s.calls, Call{Messages: append([]Message(nil), msgs...), Options: opts})
	if s.next >= len(s.answers) {
		s.mu.Unlock()
		return "", ErrScriptExhausted
	}
	answer := s.answers[s.next]
	s.next++
	chunk := s.ChunkSize
	s.mu.Unlock()
	if chunk <= 0 {
		chunk = 4
	}
	for _, stop := range opts.Stop {
		if stop == "" {
			continue
		}
		if i := strings.Index(answer, stop); i >= 0 {
			answer = answer[:i]
		}
	}
	if opts.MaxTokens > 0 && len(answer) > opts.MaxTokens*4 {
		answer = answer[:opts.MaxTokens*4]
		for len(answer) > 0 && !utf8.ValidString(answer) {
			answer = answer[:len(answer)-1]
		}
	}
	var out strings.Builder
	for rest := answer; rest != ""; {
		if err := ctx.Err(); err != nil {
			return out.String(), fmt.Errorf("scripted generate: %w", err)
		}
		n := min(chunk, len(rest))
		for n < len(rest) && !utf8.RuneStart(rest[n]) {
			n++
		}
		piece := rest[:n]
		rest = rest[n:]
		out.WriteString(piece)
		if onToken != nil {
			onToken(piece)
		}
	}
	return out.String(), nil
}

// Embed returns, for each text, an L2-normalised hashed bag-of-words vector:
// every lower-cased word (letters, digits, underscore; identifiers are also
// split at camelCase and snake_case boundaries) adds 1 to the dimension its
// FNV hash selects. Texts without words get a fixed unit vector.
func (s *Scripted) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	dim := s.Dim
	if dim <= 0 {
		dim = 256
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("scripted embed: %w", err)
		}
		out[i] = HashEmbed(t, dim)
	}
	return out, nil
}

// HashEmbed is the hashed bag-of-words embedding used by Scripted.
func HashEmbed(text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, w := range Words(text) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(dim)]++
	}
	if Normalize(v) == 0 {
		v[0] = 1
	}
	return v
}

// Normalize scales v to unit L2 length in place and returns its former length.
func Normalize(v []float32) float64 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	n := math.Sqrt(sum)
	if n == 0 {
		return 0
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return n
}

// Words splits text into lower-case words: runs of letters, digits and
// underscores, plus the parts of identifiers split at underscores and at
// camelCase boundaries ("parseHTTPRequest" → "parsehttprequest", "parse",
// "http", "request").
func Words(text string) []string {
	var out []string
	isWord := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return !isWord(r) }) {
		lower := strings.ToLower(tok)
		out = append(out, lower)
		parts := splitIdent(tok)
		if len(parts) > 1 {
			for _, p := range parts {
				out = append(out, strings.ToLower(p))
			}
		}
	}
	return out
}

// splitIdent splits an identifier at underscores and camelCase boundaries.
func splitIdent(s string) []string {
	var parts []string
	for _, seg := range strings.Split(s, "_") {
		if seg == "" {
			continue
		}
		rs := []rune(seg)
		start := 0
		for i := 1; i < len(rs); i++ {
			prev, cur := rs[i-1], rs[i]
			next := rune(0)
			if i+1 < len(rs) {
				next = rs[i+1]
			}
			boundary := (unicode.IsLower(prev) || unicode.IsDigit(prev)) && unicode.IsUpper(cur) ||
				unicode.IsUpper(prev) && unicode.IsUpper(cur) && next != 0 && unicode.IsLower(next)
			if boundary {
				parts = append(parts, string(rs[start:i]))
				start = i
			}
		}
		parts = append(parts, string(rs[start:]))
	}
	return parts
}
