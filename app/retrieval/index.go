// Package retrieval finds the code a request is about: BM25 over node names,
// identifiers and docstrings (works with no model), fused by reciprocal rank
// with embedding similarity when a model is available, then widened through
// the code graph (dependency closure, callers, personalised rank) into a
// context trimmed to a token budget, in dependency order.
package retrieval

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"codeloom/app/codegraph"
	"codeloom/models"
)

// Embedder turns texts into unit vectors (models.Engine satisfies it).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Cache stores embeddings between runs (*memory.Store satisfies it).
type Cache interface {
	GetBlob(bucket, key string) ([]byte, error)
	PutBlobs(bucket string, puts map[string][]byte, deletes []string) error
}

// Bucket is the store bucket holding cached embeddings.
const Bucket = "embeddings"

// maxCodeScan bounds how much of a node's code is scanned for identifiers.
const maxCodeScan = 16 << 10

// rrfK is the constant of reciprocal rank fusion (the usual 60).
const rrfK = 60

// Index is the search index of one graph snapshot. Safe for concurrent use.
type Index struct {
	g     *codegraph.Graph
	nodes []*codegraph.Node // aligned with lex.docs
	lex   *lexical
	names []map[string]bool // terms of each node's name
	tests []bool            // node lives in a test file

	mu   sync.RWMutex
	vecs *Vectors
}

// New builds the lexical index of g: every node's name (weighted most),
// qualified name, path, signature and docstring, plus the identifiers in the
// code of classes, functions and methods. Files are read once each.
func New(g *codegraph.Graph) *Index {
	ix := &Index{g: g, lex: newLexical()}
	byFile := map[string][]*codegraph.Node{}
	for _, n := range g.Nodes() {
		byFile[n.Path] = append(byFile[n.Path], n)
	}
	paths := make([]string, 0, len(byFile))
	for p := range byFile {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		var src []byte
		if p != "" {
			src, _ = os.ReadFile(filepath.Join(g.Root(), filepath.FromSlash(p)))
		}
		for _, n := range byFile[p] {
			tf := map[string]float64{}
			addTerms(tf, n.Name, weightName)
			addTerms(tf, n.QualName, weightQual)
			if n.Kind == codegraph.KindFile {
				addTerms(tf, n.Path, weightQual)
			}
			if embeddable(n) && n.StartByte >= 0 && n.EndByte <= len(src) && n.StartByte < n.EndByte {
				// the code holds the signature and docstring too
				addTerms(tf, string(src[n.StartByte:min(n.EndByte, n.StartByte+maxCodeScan)]), weightCode)
			} else {
				addTerms(tf, n.Signature, weightDoc)
				addTerms(tf, n.Doc, weightDoc)
			}
			ix.lex.add(tf)
			ix.nodes = append(ix.nodes, n)
			nt := map[string]bool{}
			for _, t := range terms(n.Name) {
				nt[t] = true
			}
			ix.names = append(ix.names, nt)
			ix.tests = append(ix.tests, isTestPath(n.Path))
		}
	}
	ix.lex.finish()
	return ix
}

// Graph is the snapshot the index was built from.
func (ix *Index) Graph() *codegraph.Graph { return ix.g }

// HasVectors reports whether embeddings have been computed.
func (ix *Index) HasVectors() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.vecs != nil && ix.vecs.Len() > 0
}

// EmbedOptions controls Embed.
type EmbedOptions struct {
	ModelID   string // identifies the embedding model in cache keys (required with Cache)
	Cache     Cache  // nil = no caching
	BatchSize int    // texts per Embed call (default 16)
	MaxChars  int    // chunk size in characters (default 2000, about 500 tokens)
	MaxChunks int    // chunks per node, averaged (default 4)
	Progress  func(done, total int)
}

// EmbedStats reports what Embed did.
type EmbedStats struct {
	Nodes    int // nodes with a vector
	Cached   int // taken from the cache
	Computed int // computed by the model
}

// embeddable reports whether a node kind gets a vector.
func embeddable(n *codegraph.Node) bool {
	return n.Kind == codegraph.KindClass || n.Kind == codegraph.KindFunction || n.Kind == codegraph.KindMethod
}

// Embed computes a vector for every class, function and method (signature,
// docstring and code, chunked to MaxChars and averaged), reusing vectors
// cached under the hash of the embedded text, so only changed nodes go
// through the model.
func (ix *Index) Embed(ctx context.Context, e Embedder, o EmbedOptions) (EmbedStats, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = 16
	}
	if o.MaxChars <= 0 {
		o.MaxChars = 2000
	}
	if o.MaxChunks <= 0 {
		o.MaxChunks = 4
	}
	type job struct {
		node   *codegraph.Node
		key    string
		chunks []string
		vec    []float32
	}
	var jobs []*job
	files := map[string][]byte{}
	for _, n := range ix.nodes {
		if !embeddable(n) {
			continue
		}
		code, _ := nodeCode(ix.g, files, n)
		text := fmt.Sprintf("%s %s\n%s\n%s\n%s", n.Kind, n.QualName, n.Signature, n.Doc, code)
		sum := sha256.Sum256([]byte(text))
		jobs = append(jobs, &job{node: n, key: o.ModelID + ":" + hex.EncodeToString(sum[:16]), chunks: chunk(text, o.MaxChars, o.MaxChunks)})
	}
	var st EmbedStats
	if o.Cache != nil {
		for _, j := range jobs {
			if b, err := o.Cache.GetBlob(Bucket, j.key); err == nil && b != nil {
				// a corrupt blob decodes to nil and is computed again
				if j.vec = decodeVec(b); j.vec != nil {
					st.Cached++
				}
			}
		}
	}
	var todo []*job
	for _, j := range jobs {
		if j.vec == nil {
			todo = append(todo, j)
		}
	}
	done := st.Cached
	report := func() {
		if o.Progress != nil {
			o.Progress(done, len(jobs))
		}
	}
	report()
	for i := 0; i < len(todo); i += o.BatchSize {
		batch := todo[i:min(i+o.BatchSize, len(todo))]
		var texts []string
		for _, j := range batch {
			texts = append(texts, j.chunks...)
		}
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			return st, fmt.Errorf("embed nodes: %w", err)
		}
		if len(vecs) != len(texts) {
			return st, fmt.Errorf("embed nodes: %d vectors for %d texts", len(vecs), len(texts))
		}
		puts := map[string][]byte{}
		k := 0
		for _, j := range batch {
			v := make([]float32, len(vecs[k]))
			for c := range j.chunks {
				if len(vecs[k+c]) != len(v) {
					return st, fmt.Errorf("embed nodes: vectors of %d and %d dimensions in one batch", len(v), len(vecs[k+c]))
				}
				for d := range v {
					v[d] += vecs[k+c][d]
				}
			}
			k += len(j.chunks)
			models.Normalize(v)
			j.vec = v
			puts[j.key] = encodeVec(v)
			st.Computed++
		}
		if o.Cache != nil {
			if err := o.Cache.PutBlobs(Bucket, puts, nil); err != nil {
				return st, fmt.Errorf("embed nodes: cache: %w", err)
			}
		}
		done += len(batch)
		report()
	}
	var vs *Vectors
	for _, j := range jobs {
		if vs == nil {
			vs = NewVectors(len(j.vec))
		}
		if err := vs.Add(j.node.ID, j.vec); err != nil {
			return st, fmt.Errorf("embed nodes: %w (was the cache filled by another model?)", err)
		}
	}
	st.Nodes = len(jobs)
	ix.mu.Lock()
	ix.vecs = vs
	ix.mu.Unlock()
	return st, nil
}

// chunk splits text into at most n pieces of at most size bytes, cut at
// line ends where possible and never inside a UTF-8 character.
func chunk(text string, size, n int) []string {
	var out []string
	for text != "" && len(out) < n {
		if len(text) <= size {
			out = append(out, text)
			break
		}
		cut := size
		for cut > 0 && text[cut]&0xC0 == 0x80 {
			cut--
		}
		if nl := strings.LastIndexByte(text[:cut], '\n'); nl > size/2 {
			cut = nl + 1
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if len(out) == 0 {
		out = []string{" "}
	}
	return out
}

func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVec(b []byte) []float32 {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// Result is one ranked node.
type Result struct {
	Node    *codegraph.Node `json:"node"`
	Score   float64         `json:"score"`             // fused score (BM25 alone when no vectors)
	Lexical float64         `json:"lexical,omitempty"` // BM25 score
	Vector  float64         `json:"vector,omitempty"`  // cosine similarity
}

// Search ranks nodes for query: BM25, fused by reciprocal rank with vector
// similarity when e is non-nil and Embed has run. limit ≤ 0 means 10.
func (ix *Index) Search(ctx context.Context, query string, e Embedder, limit int) ([]Result, error) {
	if limit <= 0 {
		limit = 10
	}
	lex := ix.lexicalScores(query)
	ix.mu.RLock()
	vecs := ix.vecs
	ix.mu.RUnlock()
	if e == nil || vecs == nil || vecs.Len() == 0 {
		out := make([]Result, 0, min(limit, len(lex)))
		for _, s := range lex[:min(limit, len(lex))] {
			out = append(out, Result{Node: ix.nodes[s.idx], Score: s.score, Lexical: s.score})
		}
		return out, nil
	}
	qv, err := e.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("search: embed query: %w", err)
	}
	if len(qv) != 1 || len(qv[0]) != vecs.Dim() {
		return nil, fmt.Errorf("search: query vector does not match the index (%d dimensions)", vecs.Dim())
	}
	depth := max(limit*5, 50)
	fused := map[string]*Result{}
	for rank, s := range lex[:min(depth, len(lex))] {
		n := ix.nodes[s.idx]
		r := &Result{Node: n, Lexical: s.score}
		r.Score += 1 / float64(rrfK+rank+1)
		fused[n.ID] = r
	}
	for rank, h := range vecs.Search(qv[0], depth) {
		r, ok := fused[h.ID]
		if !ok {
			n, ok := ix.g.Node(h.ID)
			if !ok {
				continue
			}
			r = &Result{Node: n}
			fused[h.ID] = r
		}
		r.Vector = float64(h.Score)
		r.Score += 1 / float64(rrfK+rank+1)
	}
	out := make([]Result, 0, len(fused))
	for _, r := range fused {
		out = append(out, *r)
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].Node.ID < out[b].Node.ID
	})
	return out[:min(limit, len(out))], nil
}

// Adjustments on top of BM25, for code: a node whose name is covered by the
// query gains up to nameBoost (names are the strongest signal in code
// search), and code in test files counts testWeight unless the query is
// about tests.
const (
	nameBoost  = 0.75
	testWeight = 0.6
)

// lexicalScores is BM25 with the name and test-file adjustments, best first.
func (ix *Index) lexicalScores(query string) []scored {
	q := terms(query)
	res := ix.lex.score(q)
	qset := map[string]bool{}
	aboutTests := false
	for _, t := range q {
		qset[t] = true
		if strings.HasPrefix(t, "test") {
			aboutTests = true
		}
	}
	for i := range res {
		d := res[i].idx
		if nt := ix.names[d]; len(nt) > 0 {
			hit := 0
			for t := range nt {
				if qset[t] {
					hit++
				}
			}
			res[i].score *= 1 + nameBoost*float64(hit)/float64(len(nt))
		}
		if ix.tests[d] && !aboutTests {
			res[i].score *= testWeight
		}
	}
	sort.Slice(res, func(a, b int) bool {
		if res[a].score != res[b].score {
			return res[a].score > res[b].score
		}
		return res[a].idx < res[b].idx
	})
	return res
}

// isTestPath reports whether a project path is test code by common conventions.
func isTestPath(p string) bool {
	p = strings.ToLower(p)
	base := p[strings.LastIndex(p, "/")+1:]
	return strings.HasPrefix(p, "test/") || strings.HasPrefix(p, "tests/") ||
		strings.Contains(p, "/test/") || strings.Contains(p, "/tests/") || strings.Contains(p, "__tests__/") ||
		strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.go") || strings.HasSuffix(base, "_test.py") ||
		strings.Contains(base, ".test.") || strings.Contains(base, ".spec.")
}
