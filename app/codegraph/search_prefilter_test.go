package codegraph

import (
	"reflect"
	"testing"

	"github.com/sahilm/fuzzy"
)

// The prefilter in front of the fuzzy matcher changes nothing: on every
// query, fuzzy.FindFrom over the candidates (positions mapped back) equals
// fuzzy.FindFrom over the whole source, scores, matched positions and
// order included. The names include runes that fold to ASCII letters
// (Kelvin sign, long s), so a prefilter that dropped a name with such a
// rune, or compared case-sensitively, fails here.
func TestFuzzyCandidatesKeepEveryMatch(t *testing.T) {
	names := fuzzyStrings{
		"parse", "Parser", "parse_args", "ArgumentParser", "_parse_known_args", "p_a_r_s_e",
		"sparse", "PARSE", "pars", "apres", "", "x", "json.decoder.JSONDecoder.raw_decode",
		"json/decoder.py", "argparse.ArgumentParser.parse_args", "\u212aey", "key", "KEY", "ſet", "set",
		"naïve_parse", "日本parse", "p\xffarse", "re.compile", "camelCaseName", "snake_case_name",
		"a.b/c.d", "Make", "make", "mAkE", "kelvin\u212a", "ParseError", "parseError", "par se",
	}
	queries := []string{
		"parse", "Parse", "PARSE", "p", "pa", "prs", "args", "ArgParse", "json.dec", "decoder.py",
		"key", "KEY", "k", "set", "sEt", "ſ", "\u212a", "naïve", "日本", "e", "zz", "a.b", "c.d",
		"make", "camel", "snake_case", "par se", " ", "parseerror", "x",
	}
	masks := make([]uint32, len(names))
	for i, n := range names {
		masks[i] = byteClasses(n)
	}
	for _, q := range queries {
		want := fuzzy.FindFrom(q, names)
		for _, m := range [][]uint32{nil, masks} {
			cand := fuzzyCandidates(q, names, m)
			got := fuzzy.FindFrom(q, cand)
			for k := range got {
				got[k].Index = cand.idx[got[k].Index]
			}
			if len(want) == 0 && len(got) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("query %q (byte classes %v): with the prefilter %+v, without %+v", q, m != nil, got, want)
			}
		}
	}
	// The prefilter does drop names: it is not a no-op that the equality
	// above would pass trivially.
	if c := fuzzyCandidates("parse", names, nil); len(c.names) == len(names) || len(c.names) == 0 {
		t.Errorf("prefilter kept %d of %d names for %q", len(c.names), len(names), "parse")
	}
}

// The byte classes only skip names HoldsInOrder rejects: on every name
// of a real graph and queries of letters, digits, '_', other ASCII bytes
// and non-ASCII runes, NamesHolding equals HoldsInOrder over every node;
// and the classes do reject names by themselves (a filter that kept every
// name would pass the equality).
func TestNamesHoldingEqualsHoldsInOrder(t *testing.T) {
	root := writeTree(t, map[string]string{"m.py": `
class KelvinKName:
    def get_2_items(self): pass
    def naïve_set(self): pass
def parse_args(argv): pass
def _x9(): pass
def ſtuff(): pass
VALUE_A = 1
`})
	g := openT(t, root, Options{NoCache: true}).Graph()
	queries := []string{"get", "G", "2", "_", "x9", "naïve", "set", "kelvin", "k", "e_a", "zz", "a-b", "pa_ar", "stuff", ""}
	for _, q := range queries {
		var want []*Node
		for _, n := range g.Nodes() {
			if HoldsInOrder(n.Name, q) {
				want = append(want, n)
			}
		}
		if got := g.NamesHolding(q); !reflect.DeepEqual(got, want) {
			t.Errorf("NamesHolding(%q) = %v, HoldsInOrder keeps %v", q, nodeNames(got), nodeNames(want))
		}
	}
	skipped := 0
	for _, m := range g.nameClasses() {
		if !classesCover(m, byteClasses("x9")) {
			skipped++
		}
	}
	if skipped == 0 || skipped == len(g.Nodes()) {
		t.Errorf("byte classes skip %d of %d names for %q", skipped, len(g.Nodes()), "x9")
	}
}

func nodeNames(ns []*Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}

// fuzzyStrings is a fuzzy.Source over strings.
type fuzzyStrings []string

func (s fuzzyStrings) String(i int) string { return s[i] }
func (s fuzzyStrings) Len() int            { return len(s) }
