package retrieval

import (
	"math"
	"sort"
	"strings"

	"codeloom/models"
)

// BM25 parameters (the usual defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Field weights: a term in a name counts this many times.
const (
	weightName = 3
	weightQual = 2
	weightDoc  = 1
	weightCode = 1
)

// lexical is a BM25 index with postings lists: scoring touches only the
// documents that contain a query term.
type lexical struct {
	postings map[string][]posting
	lens     []float64
	avg      float64
}

type posting struct {
	doc int
	f   float64 // weighted term frequency
}

func newLexical() *lexical { return &lexical{postings: map[string][]posting{}} }

// add indexes one document (term → weighted frequency); returns its index.
// Call finish after the last add.
func (l *lexical) add(tf map[string]float64) int {
	d := len(l.lens)
	var n float64
	for t, f := range tf {
		l.postings[t] = append(l.postings[t], posting{d, f})
		n += f
	}
	l.lens = append(l.lens, n)
	return d
}

// finish computes the average document length.
func (l *lexical) finish() {
	var sum float64
	for _, x := range l.lens {
		sum += x
	}
	if len(l.lens) > 0 {
		l.avg = sum / float64(len(l.lens))
	}
}

// score returns BM25 scores of all documents with a positive score, best first.
func (l *lexical) score(query []string) []scored {
	acc := map[int]float64{}
	seen := map[string]bool{}
	total := float64(len(l.lens))
	for _, t := range query {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := l.postings[t]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (total-df+0.5)/(df+0.5))
		for _, p := range ps {
			norm := 1 - bm25B + bm25B*l.lens[p.doc]/max(l.avg, 1)
			acc[p.doc] += idf * p.f * (bm25K1 + 1) / (p.f + bm25K1*norm)
		}
	}
	out := make([]scored, 0, len(acc))
	for i, s := range acc {
		out = append(out, scored{i, s})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].score != out[b].score {
			return out[a].score > out[b].score
		}
		return out[a].idx < out[b].idx
	})
	return out
}

// scored is a document index with a score.
type scored struct {
	idx   int
	score float64
}

// stopwords are query words that carry no meaning for code search.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "is": true, "are": true, "was": true, "be": true, "to": true,
	"of": true, "in": true, "on": true, "for": true, "and": true, "or": true, "it": true, "its": true,
	"does": true, "do": true, "what": true, "where": true, "which": true, "how": true, "why": true,
	"who": true, "when": true, "this": true, "that": true, "with": true, "from": true, "by": true,
	"i": true, "me": true, "my": true, "we": true, "you": true, "can": true, "there": true, "at": true,
}

// terms splits text into stemmed index terms (identifier-aware), dropping stopwords.
func terms(text string) []string {
	words := models.Words(text)
	out := words[:0]
	for _, w := range words {
		if stopwords[w] || len(w) < 2 && !isDigit(w) {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

func isDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// stem strips a few English suffixes so that "prices", "priced" and
// "pricing" meet "price" (all become "pric").
func stem(w string) string {
	if len(w) <= 3 || strings.Contains(w, "_") || isDigit(w) {
		return w
	}
	base := w
	if len(w) > 4 {
		for _, suf := range []string{"ing", "ies", "es", "ed", "s"} {
			if !strings.HasSuffix(w, suf) || len(w)-len(suf) < 3 {
				continue
			}
			b := w[:len(w)-len(suf)]
			switch suf {
			case "ies":
				b += "y"
			case "s":
				if strings.HasSuffix(b, "s") || strings.HasSuffix(b, "u") || strings.HasSuffix(b, "i") {
					b = w // "class", "status", "analysis"
				}
			case "ing", "ed":
				if len(b) >= 4 && b[len(b)-1] == b[len(b)-2] && b[len(b)-1] != 'l' && b[len(b)-1] != 's' {
					b = b[:len(b)-1] // "running" → "run"
				}
			}
			base = b
			break
		}
	}
	if len(base) > 3 {
		base = strings.TrimSuffix(base, "e")
	}
	return base
}

// addTerms adds text's terms to tf with weight w.
func addTerms(tf map[string]float64, text string, w float64) {
	for _, t := range terms(text) {
		tf[t] += w
	}
}
