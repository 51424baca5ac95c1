package retrieval

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"codeloom/app/codegraph"
	"codeloom/app/memory"
	"codeloom/models"
)

func sampleGraph(t testing.TB) *codegraph.Graph {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "assets", "sample")
	p, err := codegraph.Open(context.Background(), root, codegraph.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p.Graph()
}

func TestLexicalSearchOnSample(t *testing.T) {
	ix := New(sampleGraph(t))
	cases := map[string]string{
		"where is the tax rate read from the environment": "tax_rate",
		"discount for buying many units":                  "bulk_discount",
		"save the inventory as JSON":                      "save",
		"total value of the whole stock":                  "total_value",
		"price including tax":                             "price_with_tax",
		"fetchPrices":                                     "fetch_prices",
	}
	for q, want := range cases {
		res, err := ix.Search(context.Background(), q, nil, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 || res[0].Node.Name != want {
			var got []string
			for _, r := range res {
				got = append(got, r.Node.QualName)
			}
			t.Errorf("%q: top %v, want %s first", q, got, want)
			continue
		}
		if res[0].Score <= 0 || res[0].Lexical != res[0].Score || res[0].Vector != 0 {
			t.Errorf("%q: scores %+v", q, res[0])
		}
	}
	if res, _ := ix.Search(context.Background(), "test tax rate from environment", nil, 1); len(res) != 1 || !strings.HasPrefix(res[0].Node.Path, "tests/") {
		t.Errorf("a query about tests should find the test first: %+v", res)
	}
	if res, _ := ix.Search(context.Background(), "zebra quantum flux", nil, 5); len(res) != 0 {
		t.Errorf("nonsense query matched %d nodes", len(res))
	}
}

func TestContextAssembly(t *testing.T) {
	g := sampleGraph(t)
	ix := New(g)
	c, err := ix.Context(context.Background(), "price with tax", ContextOptions{Budget: 400})
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, p := range c.Pieces {
		pos[p.Node.Name] = i
	}
	pt, ok1 := pos["price_with_tax"]
	tr, ok2 := pos["tax_rate"]
	if !ok1 || !ok2 {
		t.Fatalf("context lacks price_with_tax or its dependency tax_rate: %v", pos)
	}
	if tr > pt {
		t.Fatalf("dependency tax_rate (%d) after price_with_tax (%d)", tr, pt)
	}
	if c.Tokens > c.Budget || c.Tokens == 0 || c.Tokens < models.EstimateTokens(c.Text())-len(c.Pieces) {
		t.Fatalf("tokens %d budget %d", c.Tokens, c.Budget)
	}
	if !c.Env["TAX_RATE"] {
		t.Fatalf("context env %v lacks TAX_RATE (read by tax_rate, set in the sample's .env)", c.Env)
	}
	txt := c.Text()
	if !strings.Contains(txt, "TAX_RATE (set in .env)") || strings.Contains(txt, "=") && strings.Contains(txt, "TAX_RATE=") {
		t.Fatalf("env line missing or leaks a value:\n%s", txt)
	}
	if !strings.Contains(txt, "def price_with_tax(price):") || !strings.Contains(txt, "inventory/pricing.py:") {
		t.Fatalf("text:\n%s", txt)
	}
	// a tiny budget keeps only what fits, and says what was left out
	small, err := ix.Context(context.Background(), "line total of an item", ContextOptions{Budget: 60})
	if err != nil {
		t.Fatal(err)
	}
	if small.Tokens > 60 || len(small.Omitted) == 0 {
		t.Fatalf("small budget: %d tokens, omitted %v", small.Tokens, small.Omitted)
	}
	for _, p := range small.Pieces {
		if p.Tokens != models.EstimateTokens(p.Text()) {
			t.Fatalf("piece token count %d", p.Tokens)
		}
	}
	// no overlap: a class and one of its methods never both appear
	big, _ := ix.Context(context.Background(), "inventory add item total value", ContextOptions{Budget: 4000, Seeds: 5})
	ids := map[string]bool{}
	for _, p := range big.Pieces {
		ids[p.Node.ID] = true
	}
	for _, p := range big.Pieces {
		if ids[p.Node.Parent] {
			t.Fatalf("%s included with its parent", p.Node.QualName)
		}
	}
}

func TestEmbedCacheAndFusion(t *testing.T) {
	g := sampleGraph(t)
	ix := New(g)
	store, err := memory.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	eng := &countingEmbedder{Scripted: &models.Scripted{Dim: 128}}
	st, err := ix.Embed(context.Background(), eng, EmbedOptions{ModelID: "hash128", Cache: store, BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if st.Nodes == 0 || st.Computed != st.Nodes || st.Cached != 0 {
		t.Fatalf("first run %+v", st)
	}
	first := eng.texts
	ix2 := New(g)
	st2, err := ix2.Embed(context.Background(), eng, EmbedOptions{ModelID: "hash128", Cache: store})
	if err != nil {
		t.Fatal(err)
	}
	if st2.Cached != st.Nodes || st2.Computed != 0 || eng.texts != first {
		t.Fatalf("second run %+v, %d texts embedded", st2, eng.texts-first)
	}
	// a different model id does not reuse the vectors
	ix3 := New(g)
	st3, _ := ix3.Embed(context.Background(), eng, EmbedOptions{ModelID: "other", Cache: store})
	if st3.Computed != st.Nodes {
		t.Fatalf("other model reused cache: %+v", st3)
	}
	res, err := ix2.Search(context.Background(), "bulk discount quantity", eng, 5)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Node.Name != "bulk_discount" || res[0].Vector <= 0 || res[0].Lexical <= 0 {
		t.Fatalf("fused top %+v", res[0])
	}
	if !ix2.HasVectors() || New(g).HasVectors() {
		t.Fatal("HasVectors")
	}
}

type countingEmbedder struct {
	*models.Scripted
	texts int
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts += len(texts)
	return c.Scripted.Embed(ctx, texts)
}

func TestStem(t *testing.T) {
	for in, want := range map[string]string{"prices": "pric", "pricing": "pric", "priced": "pric", "price": "pric", "taxes": "tax", "class": "class", "classes": "class", "items": "item", "running": "run", "status": "status", "inventories": "inventory"} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChunk(t *testing.T) {
	text := strings.Repeat("line of code\n", 100) + "€€€"
	cs := chunk(text, 100, 50)
	if strings.Join(cs, "") != text {
		t.Fatal("chunks lose text")
	}
	for _, c := range cs {
		if len(c) > 100 || !strings.HasSuffix(c, "\n") && c != cs[len(cs)-1] {
			t.Fatalf("chunk %q", c)
		}
	}
	if got := chunk(text, 100, 2); len(got) != 2 {
		t.Fatalf("max chunks: %d", len(got))
	}
}

func TestVectorsSearch(t *testing.T) {
	v := NewVectors(3)
	v.Add("x", []float32{1, 0, 0})
	v.Add("y", []float32{0, 1, 0})
	v.Add("xy", []float32{0.7071, 0.7071, 0})
	if err := v.Add("bad", []float32{1}); err == nil {
		t.Fatal("wrong dimension accepted")
	}
	h := v.Search([]float32{0.9, 0.1, 0}, 2)
	if len(h) != 2 || h[0].ID != "x" || h[1].ID != "xy" {
		t.Fatalf("%+v", h)
	}
	if v.Search([]float32{1, 0}, 2) != nil {
		t.Fatal("wrong query dimension")
	}
}

// mapCache is an in-memory Cache.
type mapCache map[string][]byte

func (m mapCache) GetBlob(bucket, key string) ([]byte, error) { return m[key], nil }
func (m mapCache) PutBlobs(bucket string, puts map[string][]byte, deletes []string) error {
	for k, v := range puts {
		m[k] = v
	}
	return nil
}

func TestEmbedRecomputesCorruptCacheEntries(t *testing.T) {
	g := sampleGraph(t)
	cache := mapCache{}
	eng := &models.Scripted{Dim: 16}
	st, err := New(g).Embed(context.Background(), eng, EmbedOptions{ModelID: "m", Cache: cache})
	if err != nil || st.Computed == 0 {
		t.Fatalf("first run %+v, %v", st, err)
	}
	for k := range cache {
		cache[k] = []byte{1, 2, 3} // not a whole number of float32s
	}
	st2, err := New(g).Embed(context.Background(), eng, EmbedOptions{ModelID: "m", Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if st2.Cached != 0 || st2.Computed != st.Nodes || st2.Nodes != st.Nodes {
		t.Fatalf("corrupt cache run %+v, want all %d computed", st2, st.Nodes)
	}
}
