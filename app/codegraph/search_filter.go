package codegraph

import "github.com/sahilm/fuzzy"

// candidateNames is the part of a fuzzy.Source that can match a query:
// names[k] is the name of source entry idx[k], read once.
type candidateNames struct {
	names []string
	idx   []int
}

func (c candidateNames) String(i int) string { return c.names[i] }
func (c candidateNames) Len() int            { return len(c.names) }

// fuzzyCandidates keeps the entries of src that fuzzy.FindFrom could
// match: its matches are the query's runes found in order in the name
// (each compared case-folded), so a name that does not hold the query's
// bytes in order, ASCII letters compared case-insensitively, cannot match.
// A name with a non-ASCII byte (a rune that may fold to an ASCII letter,
// such as the Kelvin sign) and every name of a non-ASCII query are kept.
// The matcher scores each name on its own and keeps the source's order, so
// its answer on the candidates is its answer on src (positions mapped
// through idx).
//
// masks, when not nil, holds byteClasses of every entry of src: an entry
// lacking a class the query has is skipped without reading its name.
func fuzzyCandidates(query string, src fuzzy.Source, masks []uint32) candidateNames {
	n := src.Len()
	var c candidateNames
	ascii := isASCII(query)
	qm := byteClasses(query)
	for i := 0; i < n; i++ {
		if ascii && masks != nil && !classesCover(masks[i], qm) {
			continue
		}
		s := src.String(i)
		if ascii && !HoldsInOrder(s, query) {
			continue
		}
		c.names = append(c.names, s)
		c.idx = append(c.idx, i)
	}
	return c
}

// utf8RuneSelf is utf8.RuneSelf: bytes below it are one-byte runes.
const utf8RuneSelf = 0x80

func isASCII(s string) bool {
	for k := 0; k < len(s); k++ {
		if s[k] >= utf8RuneSelf {
			return false
		}
	}
	return true
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// HoldsInOrder reports whether name holds the bytes of query in order,
// ASCII letters compared case-insensitively: a test that every match of a
// matcher spelling the query's letters in order (fuzzy search, word-start
// search) passes, made without allocating, so searches over every node run
// it before the matcher. True as soon as either holds a non-ASCII byte (a
// rune that may fold to an ASCII letter, such as the Kelvin sign).
func HoldsInOrder(name, query string) bool {
	k := 0
	for j := 0; j < len(name) && k < len(query); j++ {
		b, q := name[j], query[k]
		if b >= utf8RuneSelf || q >= utf8RuneSelf {
			return true
		}
		if lowerASCII(b) == lowerASCII(q) {
			k++
		}
	}
	return k == len(query)
}

// Byte classes of byteClasses: one bit per ASCII letter (either case),
// one for all digits, one for '_', one for every other ASCII byte, and
// classNonASCII for any byte from 0x80 up.
const (
	classDigit    = 1 << 26
	classUnder    = 1 << 27
	classOther    = 1 << 28
	classNonASCII = 1 << 31
)

// byteClasses returns the set of byte classes s holds (see classDigit).
func byteClasses(s string) uint32 {
	var m uint32
	for k := 0; k < len(s); k++ {
		switch b := s[k]; {
		case b >= utf8RuneSelf:
			m |= classNonASCII
		case 'a' <= b && b <= 'z':
			m |= 1 << (b - 'a')
		case 'A' <= b && b <= 'Z':
			m |= 1 << (b - 'A')
		case '0' <= b && b <= '9':
			m |= classDigit
		case b == '_':
			m |= classUnder
		default:
			m |= classOther
		}
	}
	return m
}

// classesCover reports whether a name with byte classes name may hold an
// ASCII query with byte classes query in order (HoldsInOrder): false only
// when the name lacks a class of the query and holds no non-ASCII byte.
func classesCover(name, query uint32) bool {
	return name&classNonASCII != 0 || query&^name == 0
}

// nameClasses returns byteClasses of every node's name, by position in
// g.nodes: made on the first search of g (one pass over the names) and
// kept, four bytes a node, so later searches skip most names without
// reading them.
func (g *Graph) nameClasses() []uint32 {
	g.classOnce.Do(func() {
		m := make([]uint32, len(g.nodes))
		for i, n := range g.nodes {
			if n != nil {
				m[i] = byteClasses(n.Name)
			}
		}
		g.classes = m
	})
	return g.classes
}

// NamesHolding returns the nodes whose name holds query in order
// (HoldsInOrder), in node order: the candidates of any search that spells
// the query's letters in order, found without reading most names.
func (g *Graph) NamesHolding(query string) []*Node {
	var out []*Node
	ascii := isASCII(query)
	qm := byteClasses(query)
	masks := g.nameClasses()
	for i, n := range g.nodes {
		if n == nil || ascii && !classesCover(masks[i], qm) {
			continue
		}
		if HoldsInOrder(n.Name, query) {
			out = append(out, n)
		}
	}
	return out
}
