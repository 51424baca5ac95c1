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
	for _, q := range queries {
		want := fuzzy.FindFrom(q, names)
		cand := fuzzyCandidates(q, names)
		got := fuzzy.FindFrom(q, cand)
		for k := range got {
			got[k].Index = cand.idx[got[k].Index]
		}
		if len(want) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("query %q: with the prefilter %+v, without %+v", q, got, want)
		}
	}
	// The prefilter does drop names: it is not a no-op that the equality
	// above would pass trivially.
	if c := fuzzyCandidates("parse", names); len(c.names) == len(names) || len(c.names) == 0 {
		t.Errorf("prefilter kept %d of %d names for %q", len(c.names), len(names), "parse")
	}
}

// fuzzyStrings is a fuzzy.Source over strings.
type fuzzyStrings []string

func (s fuzzyStrings) String(i int) string { return s[i] }
func (s fuzzyStrings) Len() int            { return len(s) }
