package codegraph

import (
	"strconv"
	"strings"
)

// String formatting as implicit calls: f"{x}", "%s" % x and "{}".format(x)
// run x's __str__ (its __repr__ for !r / %r, or when the class has no
// __str__: object.__str__ falls back on it; its __format__ when the class
// defines one). Extraction records each as an implicit reference whose
// Object is the whole formatting expression (it starts with the literal),
// named "{" (an f-string field), "%" or "format".

// pyFormatted reports an implicit reference of a formatting expression.
func pyFormatted(r refRec) bool {
	if r.Name != "{" && r.Name != "%" && r.Name != "format" {
		return false
	}
	return r.Name == "{" || pyLitStart(r.Object) >= 0
}

// pyLitStart returns the index of the opening quote of the string literal e
// starts with (after its prefix letters: f, r, b, u), -1 when it does not
// start with one.
func pyLitStart(e string) int {
	for i := 0; i < len(e) && i < 3; i++ {
		switch e[i] {
		case '"', '\'':
			return i
		case 'f', 'F', 'r', 'R', 'b', 'B', 'u', 'U':
		default:
			return -1
		}
	}
	return -1
}

// pyFormatArg is one formatted value: its expression and whether it is
// converted with repr.
type pyFormatArg struct {
	expr string
	repr bool
	fmt  bool // format(x, spec) runs: x's __format__ when its class has one
}

// pyFormatArgs returns the values a formatting expression converts.
func pyFormatArgs(r refRec) []pyFormatArg {
	e := strings.TrimSpace(r.Object)
	switch r.Name {
	case "{":
		return pyFStringField(e)
	case "%":
		return pyPercentArgs(e)
	}
	return pyDotFormatArgs(e)
}

// pyFStringField reads one f-string field "{expr!r:spec}".
func pyFStringField(e string) []pyFormatArg {
	if len(e) < 3 || e[0] != '{' || e[len(e)-1] != '}' {
		return nil
	}
	in := e[1 : len(e)-1]
	end := len(in)
scan:
	for i := 0; i < len(in); i++ {
		switch c := in[i]; c {
		case '(', '[', '{', '"', '\'':
			j := groupEnd(in, i)
			if j < 0 {
				return nil
			}
			i = j
		case '!', ':', '=', '<', '>':
			if i+1 < len(in) && in[i+1] == '=' || c == '<' || c == '>' {
				return nil // a comparison inside the field
			}
			end = i
			break scan
		}
	}
	a := pyFormatArg{expr: strings.TrimSpace(in[:end]), fmt: true}
	rest := in[end:]
	// {x=} (self-documenting) converts with repr unless told otherwise.
	a.repr = strings.HasPrefix(rest, "!r") || strings.HasPrefix(rest, "!a") || strings.HasPrefix(rest, "=") && !strings.Contains(rest, "!s") && !strings.Contains(rest, ":")
	return []pyFormatArg{a}
}

// pyLiteral splits e into its leading string literal's content and the
// text after it; ok is false for triple-quoted or unterminated literals.
func pyLiteral(e string) (lit, rest string, ok bool) {
	q := pyLitStart(e)
	if q < 0 || strings.HasPrefix(e[q:], `"""`) || strings.HasPrefix(e[q:], `'''`) {
		return "", "", false
	}
	end := quoteEnd(e, q)
	if end < 0 {
		return "", "", false
	}
	return e[q+1 : end], strings.TrimSpace(e[end+1:]), true
}

// pyPercentArgs reads "fmt" % x and "fmt" % (x, y): each %s or %r
// conversion takes the item at its position (a mapping key, %(name)s, or a
// * width makes positions unknown: nothing is read).
func pyPercentArgs(e string) []pyFormatArg {
	lit, rest, ok := pyLiteral(e)
	if !ok || !strings.HasPrefix(rest, "%") {
		return nil
	}
	rest = strings.TrimSpace(rest[1:])
	var convs []byte
	for i := 0; i < len(lit); i++ {
		if lit[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(lit) && strings.IndexByte("#0- +.0123456789lhL", lit[j]) >= 0 {
			j++
		}
		if j >= len(lit) || lit[j] == '(' || lit[j] == '*' {
			return nil
		}
		if lit[j] != '%' {
			convs = append(convs, lit[j])
		}
		i = j
	}
	var items []string
	if strings.HasPrefix(rest, "(") && groupEnd(rest, 0) == len(rest)-1 {
		items = splitTop(rest[1 : len(rest)-1])
		if len(convs) == 1 && len(items) == 1 {
			items = []string{rest[1 : len(rest)-1]} // (x) is x
		}
	} else {
		if len(convs) != 1 {
			return nil
		}
		items = []string{rest}
	}
	var out []pyFormatArg
	for i, c := range convs {
		if i >= len(items) {
			break
		}
		if c == 's' || c == 'r' || c == 'a' {
			out = append(out, pyFormatArg{expr: strings.TrimSpace(items[i]), repr: c != 's'})
		}
	}
	return out
}

// pyDotFormatArgs reads "fmt".format(a, b, k=c): each replacement field
// ({}, {0}, {k}, with !r) takes its argument.
func pyDotFormatArgs(e string) []pyFormatArg {
	lit, rest, ok := pyLiteral(e)
	if !ok || !strings.HasPrefix(rest, ".format(") || groupEnd(rest, 7) != len(rest)-1 {
		return nil
	}
	var pos []string
	kw := map[string]string{}
	for _, a := range splitTop(rest[8 : len(rest)-1]) {
		a = strings.TrimSpace(a)
		if strings.HasPrefix(a, "*") {
			return nil
		}
		if k, v, ok := strings.Cut(a, "="); ok && isDottedIdent(strings.TrimSpace(k)) && !strings.HasPrefix(v, "=") {
			kw[strings.TrimSpace(k)] = strings.TrimSpace(v)
			continue
		}
		pos = append(pos, a)
	}
	var out []pyFormatArg
	auto := 0
	for i := 0; i < len(lit); i++ {
		if lit[i] != '{' {
			continue
		}
		if i+1 < len(lit) && lit[i+1] == '{' {
			i++
			continue
		}
		j := strings.IndexByte(lit[i:], '}')
		if j < 0 {
			return out
		}
		field := lit[i+1 : i+j]
		i += j
		name, conv := field, ""
		if k := strings.IndexAny(field, "!:"); k >= 0 {
			name, conv = field[:k], field[k:]
		}
		var arg string
		switch n, err := strconv.Atoi(name); {
		case name == "":
			if auto < len(pos) {
				arg = pos[auto]
			}
			auto++
		case err == nil:
			if n < len(pos) {
				arg = pos[n]
			}
		default:
			arg = kw[name] // an attribute or index of it ({0.x}) is not read
		}
		if arg != "" {
			out = append(out, pyFormatArg{expr: arg, repr: strings.HasPrefix(conv, "!r") || strings.HasPrefix(conv, "!a"), fmt: true})
		}
	}
	return out
}

// pyConvertDunders are the special methods string conversions run.
var pyConvertDunders = []string{"__str__", "__repr__", "__format__"}

// resolvePyConvert handles the implicit references that convert values to
// strings: str(x), repr(x) and formatting expressions; false for others.
func (b *builder) resolvePyConvert(fe *flowEval, fb *fileBuild, r refRec, src string, res *fileResult) bool {
	var args []pyFormatArg
	switch {
	case r.Name == "str" || r.Name == "repr":
		args = []pyFormatArg{{expr: r.Object, repr: r.Name == "repr"}}
	case pyFormatted(r):
		args = pyFormatArgs(r)
	default:
		return false
	}
	if !b.pyAnyMethod(pyConvertDunders) {
		return true
	}
	for _, a := range args {
		if a.expr == "" || pyLitStart(a.expr) >= 0 {
			continue
		}
		for _, v := range fe.topExpr(fb, r.Def, a.expr) {
			if !v.inst || v.elem {
				continue
			}
			name := "__repr__"
			if !a.repr {
				name = "__str__"
				if _, ok := b.member(v.id, "__format__", false); ok && a.fmt {
					name = "__format__"
				}
			}
			b.pyConvert(fe, src, v, name, r.Line, res)
		}
	}
	return true
}

// pyConvert adds the call of conversion method name (__str__, __repr__,
// __format__) on instance v: the method its class has (a class attribute
// `__str__ = __repr__` included; __str__ falls back on __repr__ as
// object.__str__ does) and the overrides in its subclasses.
func (b *builder) pyConvert(fe *flowEval, src string, v flowVal, name string, line int32, res *fileResult) {
	m, ok := b.member(v.id, name, false)
	if !ok && name == "__str__" {
		for _, a := range fe.attr(flowVal{id: v.id}, name, 0) {
			if n := b.node(a.id); n.found() && n.Kind == KindMethod && !a.inst && !a.elem && !a.may {
				m, ok = a.id, true
				break
			}
		}
		if !ok {
			// object.__str__ runs the class's __repr__ (not when an outside
			// base, str or Exception, has its own __str__); a subclass's
			// own __str__ may run instead.
			b.pyImplicitBySubclass(src, v, name, refRec{Line: line}, res)
			if b.pyOutsideBase(v.id) {
				return
			}
			name = "__repr__"
			m, ok = b.member(v.id, name, false)
		}
	}
	if !ok {
		b.pyImplicitBySubclass(src, v, name, refRec{Line: line}, res)
		return
	}
	addValEdge(res, src, m, v, line)
	for _, o := range b.dispatchTargets(v.id, m) {
		res.addEdge(src, o, EdgeDispatches, line)
	}
}

// pyOutsideBase reports that class cls derives from a class outside the
// project (whose special methods are unknown).
func (b *builder) pyOutsideBase(cls string) bool {
	found := false
	b.walkMRO(cls, func(c string) bool {
		found = b.extBase[c]
		if loc, ok := b.defAt(c); ok && !found {
			// Built-in bases (str, Exception) are not in extBase.
			n := 0
			for _, r := range loc.fb.inherits {
				if r.parent == loc.idx && r.name != "object" {
					n++
				}
			}
			found = n > len(b.bases[c])
		}
		return !found
	})
	return found
}
