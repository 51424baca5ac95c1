package codegraph

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// extractor parses files of one language; not safe for concurrent use.
type extractor struct {
	lang  *language
	run   *tsRunner
	roles []captureRole

	// Scratch space reused from file to file (an extractor serves one
	// worker at a time), emptied before each use.
	refs     []refAt
	interned internTable // the file's names (extract_intern.go)
	used     map[string]bool
	argKey   []byte    // a refArg's "slot\x00argument", built before interning
	packer   refPacker // packs the file's references (refs_packed.go)

	// maxDefs and maxRefs are maxFileDefs and maxFileRefs (tests lower them).
	maxDefs, maxRefs int
	// fullArgScan makes argCursor rescan every argument list (tests compare).
	fullArgScan bool
}

// refAt is a reference with the byte offset it was found at.
type refAt struct {
	r     refRec
	start uint32
}

// scratchMap returns m emptied, or a new map when m is nil or has grown
// large (clearing a large table for every small file would cost more).
func scratchMap[V any](m map[string]V, hint int) map[string]V {
	if m == nil || len(m) > 8192 {
		return make(map[string]V, hint)
	}
	clear(m)
	return m
}

// captureRole is the meaning of a query capture name.
type captureRole uint8

const (
	capOther captureRole = iota
	capDefClass
	capDefFunction
	capDefMethod
	capName
	capBody
	capReceiver
	capSelfVar
	capDocOwner
	capDoc
	capRefCall
	capRefUse
	capRefInherit
	capRefAssign
	capObject
	capImport
	capModule
	capAlias
	capWildcard
	capEnv
	capExportDefault
	capDefault
	capFn
	capGlobal
	capLocal
	capRefValue // a value flows into a name (see flow_python.go)
	capRefDecor // a decorator applied: a call from the scope around the definition
	capRefArg   // an argument of a call: @name the argument, @object the callee, @alias a keyword
	capRefImpl  // an implicit call of a special method on @object, named by @name (see pyImplicit)
	// capValue is the value expression of an assignment (@ref.assign): the
	// variable's type is that of the expression (Go type flow); the text is
	// kept in refRec.Object after valuePrefix.
	capValue
)

// valuePrefix marks a refAssign Object that is a value expression, not a type.
const valuePrefix = "="

// maxValueText bounds the value expressions kept for type flow.
const maxValueText = 160

var roleNames = map[string]captureRole{
	"def.class": capDefClass, "def.function": capDefFunction, "def.method": capDefMethod,
	"name": capName, "body": capBody, "receiver": capReceiver, "receiver.name": capSelfVar,
	"doc.owner": capDocOwner, "doc": capDoc,
	"ref.call": capRefCall, "ref.use": capRefUse, "ref.inherit": capRefInherit, "ref.assign": capRefAssign, "object": capObject,
	"import": capImport, "module": capModule, "alias": capAlias, "wildcard": capWildcard,
	"env": capEnv, "export.default": capExportDefault, "default": capDefault, "fn": capFn, "global": capGlobal, "local": capLocal,
	"ref.value": capRefValue, "ref.decorator": capRefDecor, "ref.arg": capRefArg, "ref.implicit": capRefImpl, "value": capValue,
}

// newExtractor compiles l's query into an extractor that owns it.
func newExtractor(l *language) (*extractor, error) {
	r, err := newTSRunner(l.grammar(), l.query)
	if err != nil {
		return nil, fmt.Errorf("compile %s query: %w", l.name, err)
	}
	e, err := extractorOf(l, r)
	if err != nil {
		r.close()
		return nil, err
	}
	return e, nil
}

// newSharedExtractor returns an extractor running q, l's compiled query,
// which it shares with other extractors (and does not close).
func newSharedExtractor(l *language, q *compiledQuery) (*extractor, error) {
	r, err := newQueryRunner(q)
	if err != nil {
		return nil, fmt.Errorf("%s parser: %w", l.name, err)
	}
	e, err := extractorOf(l, r)
	if err != nil {
		r.close()
		return nil, err
	}
	return e, nil
}

// extractorOf returns the extractor of runner r, whose query is l's: the
// roles of its captures, and its filters and children rules set on r.
func extractorOf(l *language, r *tsRunner) (*extractor, error) {
	roles := make([]captureRole, len(r.q.names))
	var only [][]uint16
	var kids [][]kidRule
	for i, n := range r.q.names {
		role, ok := roleNames[n]
		if r.q.sub != nil && i >= r.q.subBase {
			// cl_run_sub reports the sub query's matches as they are.
			if _, isFilter := l.captureTypes[n]; isFilter {
				return nil, fmt.Errorf("%s: sub query capture %s is a filter capture", l.name, n)
			}
			if _, isKids := l.captureKids[n]; isKids {
				return nil, fmt.Errorf("%s: sub query capture %s is a children capture", l.name, n)
			}
		}
		if types, isFilter := l.captureTypes[n]; isFilter && !ok {
			if only == nil {
				only = make([][]uint16, len(r.q.names))
			}
			only[i] = captureSymbols(r.q, types)
			role = roleNames[n[:max(strings.LastIndexByte(n, '.'), 0)]]
		}
		if rules, ok := l.captureKids[n]; ok {
			if kids == nil {
				kids = make([][]kidRule, len(r.q.names))
			}
			var err error
			if kids[i], err = captureKidRules(r.q, rules); err != nil {
				return nil, fmt.Errorf("%s capture %s: %w", l.name, n, err)
			}
		}
		roles[i] = role
	}
	if only != nil {
		if err := r.setOnly(only); err != nil {
			return nil, fmt.Errorf("%s: %w", l.name, err)
		}
	}
	if kids != nil {
		if err := r.setKids(kids); err != nil {
			return nil, fmt.Errorf("%s: %w", l.name, err)
		}
	}
	return &extractor{lang: l, run: r, roles: roles, maxDefs: maxFileDefs, maxRefs: maxFileRefs}, nil
}

// captureKidRules resolves children rules ("(outer)", "(outer) (inner)",
// see language.captureKids) to grammar symbols; a type the grammar lacks is
// an error (a match would otherwise be reported as it is).
func captureKidRules(q *compiledQuery, rules []string) ([]kidRule, error) {
	out := make([]kidRule, 0, len(rules))
	for _, rule := range rules {
		f := strings.Fields(rule)
		if len(f) == 0 || len(f) > 2 {
			return nil, fmt.Errorf("children rule %q: want one or two node types", rule)
		}
		var k kidRule
		for j, t := range f {
			if !strings.HasPrefix(t, "(") || !strings.HasSuffix(t, ")") {
				return nil, fmt.Errorf("children rule %q: %q is not a named node type", rule, t)
			}
			s := q.symbol(strings.Trim(t, "()"), true)
			if s == 0 {
				return nil, fmt.Errorf("children rule %q: no node type %s in the grammar", rule, t)
			}
			if j == 0 {
				k.outer = s
			} else {
				k.inner = s
			}
		}
		out = append(out, k)
	}
	return out, nil
}

// captureSymbols resolves a filter's node types ("(identifier)", `"=="`) to
// grammar symbols. A type the grammar lacks is left out (no node has it).
func captureSymbols(q *compiledQuery, types []string) []uint16 {
	syms := make([]uint16, 0, len(types))
	for _, t := range types {
		named := strings.HasPrefix(t, "(")
		name := strings.Trim(t, `()"`)
		if s := q.symbol(name, named); s != 0 {
			syms = append(syms, s)
		}
	}
	return syms
}

// Close frees the C objects.
func (e *extractor) Close() { e.run.close() }

// lineIndex maps byte offsets to 1-based lines.
type lineIndex []uint32

func newLineIndex(src []byte) lineIndex {
	li := make(lineIndex, 1, bytes.Count(src, []byte{'\n'})+1)
	// bytes.IndexByte skips a line's bytes many at a time: three times
	// faster than a loop over every byte (python3.11: 18 → 6 ms a run).
	for off := 0; ; {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return li
		}
		off += i + 1
		li = append(li, uint32(off))
	}
}

// line returns the 1-based line holding byte off.
func (li lineIndex) line(off uint32) int32 {
	// sort.Search(len(li), li[i] > off), without its call per step.
	lo, hi := 0, len(li)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if li[m] > off {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return int32(lo)
}

// lineCursor answers lineIndex.line for offsets that mostly come in
// order (a file's matches): it tries the previous answer's line and the
// next one before a binary search.
type lineCursor struct {
	li lineIndex
	k  int // li index of the previous answer's line
}

// line returns the 1-based line holding byte off (= c.li.line(off)).
func (c *lineCursor) line(off uint32) int32 {
	li, k := c.li, c.k
	if k < len(li) && li[k] <= off {
		if k+1 == len(li) || off < li[k+1] {
			return int32(k + 1)
		}
		if k+2 == len(li) || off < li[k+2] {
			c.k = k + 1
			return int32(k + 2)
		}
	}
	l := li.line(off)
	c.k = int(l) - 1
	return l
}

// capture is a captured node reduced to what we need (no more cgo after).
type capture struct {
	role       captureRole
	start, end uint32
}

// extract parses src and fills fd's definitions, references and imports,
// and with sum fd.Sum, src's hash (FNV-1a), computed along with the
// definitions' (see hashDefs). kt, when not nil, is the file's kept syntax
// tree: the parse is incremental from it and it is updated to the new tree
// (see tsRunner.run).
func (e *extractor) extract(ctx context.Context, src []byte, fd *fileData, kt *keptTree, sum bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	chunked := kt == nil && len(src) > e.run.chunkAt
	var flat []uint32
	if !chunked {
		var hasErr bool
		var err error
		flat, hasErr, err = e.run.run(src, kt)
		if err != nil {
			return fmt.Errorf("parse %s: %w", fd.Path, err)
		}
		fd.Syntax = hasErr
	}
	fd.BadUTF8 = !utf8.Valid(src)
	li := newLineIndex(src)
	fd.Lines = len(li)
	if len(src) > 0 && src[len(src)-1] == '\n' {
		fd.Lines--
	}
	// Names repeat a lot within a file: intern them.
	interned := &e.interned
	interned.reset()
	text := func(c capture) string {
		if c.end <= c.start || int(c.end) > len(src) {
			return ""
		}
		b := src[c.start:c.end]
		if len(b) > 64 {
			if fd.BadUTF8 {
				return strings.ToValidUTF8(string(b), "\uFFFD")
			}
			return string(b)
		}
		s, h, ok := interned.find(b)
		if ok {
			return s
		}
		s = string(b)
		if fd.BadUTF8 {
			if v := strings.ToValidUTF8(s, "\uFFFD"); v != s {
				return v // not b's text: not interned under b
			}
		}
		interned.add(s, h)
		return s
	}

	type docAt struct{ owner, doc capture }
	var docs []docAt
	refs := e.refs[:0]
	defer func() {
		clear(refs) // drop the strings until the next file
		e.refs = refs[:0]
		e.dropLargeScratch()
	}()
	var envs []struct {
		name  string
		start uint32
	}
	caps := make([]capture, 0, 8)
	args := argCursor{full: e.fullArgScan}
	lc := lineCursor{li: li}
	refsCut, defsCut := capCut{at: -1}, capCut{at: -1}
	// consume reads the matches of one parse (of the file, or of one part of
	// it starting at byte base).
	consume := func(flat []uint32, base uint32) {
		for pos := 0; pos+2 <= len(flat); {
			ncap := int(flat[pos+1])
			pos += 2
			if pos+3*ncap > len(flat) {
				break
			}
			caps = caps[:0]
			var main capture
			for k := 0; k < ncap; k++ {
				cp := capture{role: e.roles[flat[pos]], start: flat[pos+1] + base, end: flat[pos+2] + base}
				pos += 3
				caps = append(caps, cp)
				switch cp.role {
				case capDefClass, capDefFunction, capDefMethod, capDocOwner, capRefCall, capRefUse,
					capRefInherit, capRefAssign, capImport, capEnv, capExportDefault, capGlobal, capLocal,
					capRefValue, capRefDecor, capRefArg, capRefImpl:
					main = cp
				}
			}
			get := func(r captureRole) (capture, bool) {
				for _, c := range caps {
					if c.role == r {
						return c, true
					}
				}
				return capture{}, false
			}
			switch main.role {
			case capDefClass, capDefFunction, capDefMethod:
				if len(fd.Defs) >= e.maxDefs {
					defsCut.drop(main.start)
					continue
				}
			case capLocal, capRefImpl, capRefArg, capRefCall, capRefUse, capRefInherit, capRefAssign, capRefValue, capRefDecor:
				if len(refs) >= e.maxRefs {
					refsCut.drop(main.start)
					continue
				}
			}
			switch main.role {
			case capDefClass, capDefFunction, capDefMethod:
				nm, ok := get(capName)
				if !ok {
					continue
				}
				d := defRec{Name: text(nm), Parent: -1, Start: main.start, End: main.end,
					StartLine: lc.line(main.start), EndLine: li.line(max(main.end, main.start+1) - 1)}
				switch main.role {
				case capDefClass:
					d.Kind = KindClass
				case capDefFunction:
					d.Kind = KindFunction
				default:
					d.Kind = KindMethod
				}
				var recv, selfVar string
				if rc, ok := get(capReceiver); ok {
					recv = strings.TrimLeft(text(rc), "*")
					if i := strings.IndexByte(recv, '['); i > 0 { // generic receiver T[K]
						recv = recv[:i]
					}
				}
				if sv, ok := get(capSelfVar); ok {
					selfVar = text(sv)
				}
				d.setRecv(recv, selfVar)
				sigEnd := main.end
				if b, ok := get(capBody); ok && b.start > main.start {
					sigEnd = b.start
				}
				d.Sig = signature(text(capture{start: main.start, end: sigEnd}))
				if e.lang.docComments {
					d.Doc = leadingComment(src, main.start)
					if d.Doc == "" && e.lang.family == "js" {
						d.Doc = jsDocAbove(src, main.start)
					}
				}
				fd.Defs = append(fd.Defs, d)
			case capDocOwner:
				if dc, ok := get(capDoc); ok {
					docs = append(docs, docAt{main, dc})
				}
			case capLocal:
				if nm, ok := get(capName); ok {
					refs = append(refs, refAt{refRec{Kind: refLocal, Name: text(nm)}, nm.start})
				}
			case capRefImpl:
				ob, ok := get(capObject)
				if !ok {
					continue
				}
				tok := implicitToken(src, main.start)
				if nm, ok := get(capName); ok {
					tok = text(nm)
				}
				if len(e.lang.implicit[tok]) == 0 {
					continue
				}
				refs = append(refs, refAt{refRec{Kind: refImplicit, Name: tok, Object: text(ob), Line: lc.line(ob.start)}, ob.start})
			case capRefArg:
				nm, ok1 := get(capName)
				ob, ok2 := get(capObject)
				if !ok1 || !ok2 {
					continue
				}
				slot := ""
				if kw, ok := get(capAlias); ok {
					slot = text(kw)
				} else if body, ok := get(capBody); ok && body.start < nm.start && int(nm.start) <= len(src) {
					slot = strconv.Itoa(args.index(src, body.start, nm.start))
				}
				if slot == "" {
					continue
				}
				// Slot and argument repeat as much as names do: intern the pair.
				e.argKey = append(append(append(e.argKey[:0], slot...), argSep...), text(nm)...)
				name, h, ok := interned.find(e.argKey)
				if !ok {
					name = string(e.argKey)
					interned.add(name, h)
				}
				refs = append(refs, refAt{refRec{Kind: refArg, Name: name, Object: text(ob), Line: lc.line(nm.start)}, nm.start})
			case capRefCall, capRefUse, capRefInherit, capRefAssign, capRefValue, capRefDecor:
				nm, ok := get(capName)
				if !ok {
					if main.role != capRefAssign && main.role != capRefValue {
						continue
					}
					// A function's result type: "<return>" in the function.
					nm = capture{role: capName, start: main.start, end: main.start}
				}
				r := refRec{Kind: refCall, Name: text(nm), Line: lc.line(nm.start)}
				if nm.end == nm.start {
					r.Name = returnHint
				}
				if main.role == capRefUse {
					r.Kind = refUse
				} else if main.role == capRefInherit {
					r.Kind = refInherit
				} else if main.role == capRefAssign {
					r.Kind = refAssign
				} else if main.role == capRefValue {
					r.Kind = refValue
				} else if main.role == capRefDecor {
					r.Kind = refDecorator
				}
				if ob, ok := get(capObject); ok {
					r.Object = text(ob)
				} else if v, ok := get(capValue); ok && main.role == capRefAssign {
					if v.end-v.start > maxValueText {
						continue
					}
					r.Object = valuePrefix + text(v)
				}
				if r.Kind == refAssign && e.lang.importFns[r.Object] {
					continue // x = require("m") is an import, not a value
				}
				refs = append(refs, refAt{r, nm.start})
			case capImport:
				im := importRec{Line: lc.line(main.start), Start: main.start, End: main.end}
				if c, ok := get(capModule); ok {
					im.Module = stripQuotes(text(c))
				}
				if c, ok := get(capName); ok {
					im.Name = text(c)
				}
				if c, ok := get(capAlias); ok {
					im.Alias = text(c)
				}
				if _, ok := get(capWildcard); ok {
					im.Wildcard = true
				}
				if _, ok := get(capDefault); ok {
					im.Name = "default"
				}
				if fn, ok := get(capFn); ok && !e.lang.importFns[text(fn)] {
					continue
				}
				if im.Module == "" && im.Name == "" {
					continue
				}
				fd.Imports = append(fd.Imports, im)
			case capEnv:
				if ob, ok := get(capObject); ok && !e.lang.envObjects[text(ob)] {
					continue
				}
				if nm, ok := get(capName); ok {
					envs = append(envs, struct {
						name  string
						start uint32
					}{stripQuotes(text(nm)), main.start})
				}
			case capGlobal:
				if nm, ok := get(capName); ok {
					fd.Globals = append(fd.Globals, globalRec{Name: text(nm), Start: main.start, End: main.end})
				}
			case capExportDefault:
				if ob, ok := get(capObject); ok && !jsDefaultExport(text(ob)) {
					continue // x.y = name: only module.exports = name exports it
				}
				if nm, ok := get(capName); ok {
					fd.Default = text(nm)
				}
			}
		}
	}
	if chunked {
		cr, err := e.run.runChunked(src, consume)
		if err != nil {
			return fmt.Errorf("parse %s: %w", fd.Path, err)
		}
		fd.Syntax = cr.syntax
		if cr.forced >= 0 {
			fd.Caveat = fmt.Sprintf("a single top-level statement of more than %d MB at line %d was cut inside (first at line %d) to bound the parser's memory: what is inside it is indexed approximately, syntax errors from there on are not reported",
				e.run.maxPart>>20, li.line(uint32(cr.bigNode)), li.line(uint32(cr.forced)))
		}
	} else {
		consume(flat, 0)
	}
	for _, c := range []struct {
		cut  capCut
		max  int
		what string
	}{{defsCut, e.maxDefs, "definitions"}, {refsCut, e.maxRefs, "references"}} {
		if c.cut.n == 0 {
			continue
		}
		why := fmt.Sprintf("more than %d %s: %d left out to bound memory, the first at line %d", c.max, c.what, c.cut.n, li.line(uint32(c.cut.at)))
		if fd.Caveat != "" {
			why = fd.Caveat + "; " + why
		}
		fd.Caveat = why
	}

	// Definitions in document order, then nesting by byte ranges (pure Go).
	sort.SliceStable(fd.Defs, func(i, j int) bool {
		a, b := fd.Defs[i], fd.Defs[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.End > b.End
	})
	var inner map[uint32]int
	fd.Defs, inner = dedupDefs(fd.Defs)
	if sum {
		fd.Sum = hashDefs(src, fd.Defs, true)
	} else {
		hashDefs(src, fd.Defs, false)
	}
	var stack []int32
	for i := range fd.Defs {
		d := &fd.Defs[i]
		for len(stack) > 0 && fd.Defs[stack[len(stack)-1]].End <= d.Start {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			d.Parent = stack[len(stack)-1]
			if d.Kind == KindFunction && fd.Defs[d.Parent].Kind == KindClass {
				d.Kind = KindMethod
			}
		}
		stack = append(stack, int32(i))
	}
	if len(docs) > 0 {
		byStart := make(map[uint32]int, len(fd.Defs))
		for i, d := range fd.Defs {
			byStart[d.Start] = i
		}
		for st, i := range inner {
			byStart[st] = i
		}
		for _, dc := range docs {
			if i, ok := byStart[dc.owner.start]; ok && fd.Defs[i].Doc == "" {
				s := text(dc.doc)
				if e.lang.cleanDoc != nil {
					s = e.lang.cleanDoc(s)
				}
				fd.Defs[i].Doc = s
			}
		}
	}
	slices.SortStableFunc(refs, refAtCmp) // the same order as sort.SliceStable, without reflection
	// Locals matter only when a reference in the file uses the same name.
	e.used = scratchMap(e.used, min(len(refs), 1024)) // names repeat: far fewer than refs
	used := e.used
	for _, r := range refs {
		switch r.r.Kind {
		case refCall, refUse, refInherit, refDecorator, refImplicit:
			if r.r.Object == "" {
				used[r.r.Name] = true
			} else {
				first, _, _ := strings.Cut(r.r.Object, ".")
				used[first] = true
			}
		}
	}
	// A non-call use can only bind to a name the file itself defines or
	// imports (or a typed variable): drop the rest early. Not for languages
	// whose files share a scope (Go packages) nor with wildcard imports.
	var bindable map[string]bool
	if !e.lang.sharedScope {
		bindable = make(map[string]bool, len(fd.Defs)+len(fd.Imports)+8)
		for _, d := range fd.Defs {
			bindable[d.Name] = true
		}
		for _, im := range fd.Imports {
			if im.Wildcard {
				bindable = nil
				break
			}
			for _, n := range []string{im.Alias, im.Name, im.Module} {
				if n != "" {
					first, _, _ := strings.Cut(n, ".")
					bindable[first] = true
				}
			}
		}
		if bindable != nil {
			for _, sn := range e.lang.selfNames {
				bindable[sn] = true
			}
			bindable["super()"] = true
			for _, r := range refs {
				if r.r.Kind == refAssign {
					first, _, _ := strings.Cut(r.r.Name, ".")
					bindable[first] = true
				}
			}
		}
	}
	// Keep the references that matter in place, then copy them once into
	// an exact-size array: a huge file's references are the largest thing
	// extraction holds, and a second array sized for all of them doubled it.
	kept := refs[:0]
	for _, r := range refs {
		if r.r.Kind == refLocal && !used[r.r.Name] {
			continue
		}
		if r.r.Kind == refUse && bindable != nil {
			first := r.r.Name
			if r.r.Object != "" {
				first, _, _ = strings.Cut(r.r.Object, ".")
			}
			if !bindable[first] {
				continue
			}
		}
		r.r.Def = enclosing(fd.Defs, r.start)
		if r.r.Kind == refLocal && r.r.Def < 0 {
			continue // module-level names are the module's own, not locals
		}
		kept = append(kept, r)
	}
	e.packer.reset(len(kept))
	for i := range kept {
		e.packer.add(kept[i].r)
	}
	fd.Refs = e.packer.list()
	for _, ev := range envs {
		if ev.name == "" {
			continue
		}
		fd.Env = append(fd.Env, envRec{Name: ev.name, Def: enclosing(fd.Defs, ev.start)})
	}
	return nil
}

// Per-file budgets: a file with more definitions or references than these
// keeps the first ones (in match order) and says what it left out (a
// Caveat), so one generated file cannot take the index's memory with it.
// Ordinary files are far below: 12 MB of dense Python has 66,000
// definitions and 820,000 references (locals and arguments included).
const (
	maxFileDefs = 500_000
	maxFileRefs = 2_000_000
)

// capCut counts what a budget left out and where the first of it was.
type capCut struct {
	at int // byte offset of the first match left out, -1 for none
	n  int
}

func (c *capCut) drop(start uint32) {
	if c.at < 0 || int(start) < c.at {
		c.at = int(start)
	}
	c.n++
}

// dropLargeScratch lets go of scratch space a huge file grew, instead of
// keeping it alive (in the extractor) for the rest of the index.
func (e *extractor) dropLargeScratch() {
	if cap(e.refs) > 1<<16 {
		e.refs = nil
	}
	if len(e.used) > 8192 {
		e.used = nil
	}
}

// argCursor computes argument positions (argIndex) of one call after
// another: a call's arguments come in order, so each continues the count
// from the previous argument instead of rescanning the list from its "("
// (which made a call with 100,000 arguments quadratic).
type argCursor struct {
	body, pos uint32 // the argument list and the previous argument's start
	n         int    // its position (-1: unknowable)
	full      bool   // always rescan (tests compare)
}

// index returns the position of the argument starting at arg in the list
// whose "(" is at body.
func (a *argCursor) index(src []byte, body, arg uint32) int {
	if a.full || a.pos == 0 || a.body != body || arg < a.pos {
		a.body, a.pos, a.n = body, arg, argIndex(src[body+1:arg])
		return a.n
	}
	if a.n >= 0 {
		// The previous argument started at depth 0, outside quotes, with
		// only blanks since the comma before it: argIndex's state at the
		// list's start.
		if k := argIndex(src[a.pos:arg]); k < 0 {
			a.n = -1
		} else {
			a.n += k
		}
	}
	a.pos = arg
	return a.n
}

// dedupDefs drops a definition captured twice by overlapping patterns: the
// same range, or a decorated definition and the bare definition inside it
// (same name, same end). The first (outermost) wins; inner maps the start of
// each dropped inner definition to the index of the one kept.
func dedupDefs(ds []defRec) ([]defRec, map[uint32]int) {
	out := ds[:0]
	var inner map[uint32]int
	for _, d := range ds {
		if n := len(out); n > 0 {
			prev := out[n-1]
			if d.End == prev.End && d.Name == prev.Name && d.Kind == prev.Kind && d.Start >= prev.Start {
				if d.Start != prev.Start {
					if inner == nil {
						inner = map[uint32]int{}
					}
					inner[d.Start] = n - 1
				}
				continue
			}
		}
		out = append(out, d)
	}
	return out, inner
}

// enclosing returns the innermost definition containing byte off, or -1.
// defs are sorted by start; nesting is proper, so a binary search for the last
// def starting at or before off, then climbing parents, finds it.
func enclosing(defs []defRec, off uint32) int32 {
	// sort.Search(len(defs), defs[i].Start > off) - 1, without its call
	// per step.
	lo, hi := 0, len(defs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if defs[m].Start > off {
			hi = m
		} else {
			lo = m + 1
		}
	}
	i := lo - 1
	for i >= 0 {
		if defs[i].End > off {
			return int32(i)
		}
		i = int(defs[i].Parent)
	}
	return -1
}
