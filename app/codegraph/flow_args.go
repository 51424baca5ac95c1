package codegraph

import (
	"slices"
	"sort"
	"strings"
	"sync"
)

// Parameter values from call sites in other files (Python): the values a
// parameter of a function of file B can hold include what the calls of
// that function in the files importing B pass (message.py's
// `g.flatten(self)` gives generator.py's `flatten(self, msg)` its msg, and
// from there every same-file call that passes msg on). One hop only: an
// argument is evaluated in the caller's file without that file's own
// parameter values, so B's edges depend on the callers' contents, not on
// their callers.
//
// Incremental updates: while B is resolved, the callee names whose call
// sites it read are kept (fileBuild.argAsked); a build that re-resolves a
// file A with call sites of those names (or changed one that had them)
// re-resolves B too (argDependents).

// pyArgIndex lists the Python argument sites of the project by callee
// name: built on first use, then kept and patched by updates that keep the
// same files (builder.pyArgs, nextArgIndex).
type pyArgIndex struct {
	once  sync.Once
	sites map[string][]argSite // callee's last name → sites, by path then position
	// imported holds the paths some file with sites imports (the files
	// that can have callers elsewhere; a superset after updates).
	imported map[string]bool
}

// argSite is one refArg record: file and index into its references. The
// paths of the project files that file imports (only they can be the
// callee's; paths, as an update replaces the objects of changed files) are
// the file's argImports, shared by its sites (pyenv's stdlib: ≈ 1 M sites).
type argSite struct {
	fb  *fileBuild
	cur refCursor // where its reference is in fb.argList()
}

// key identifies the site (siteTargets).
func (s argSite) key() argSiteKey { return argSiteKey{s.fb, s.cur.off} }

// argSiteKey is an argSite without its imports (a map key).
type argSiteKey struct {
	fb  *fileBuild
	off int32 // the reference's offset in fb.argList()
}

// calleeName returns the last name of a call's callee text ("a.b.f" → "f")
// and the object before it.
func calleeName(callee string) (obj, name string) {
	if i := strings.LastIndex(callee, "."); i > 0 {
		return callee[:i], callee[i+1:]
	}
	return "", callee
}

// argIndex returns the build's argument sites, building them on first use
// (safe from the parallel resolvers).
func (b *builder) argIndex() *pyArgIndex {
	x := b.pyArgs
	if x == nil {
		return &pyArgIndex{} // not inside a build
	}
	x.once.Do(func() {
		x.sites = map[string][]argSite{}
		x.imported = map[string]bool{}
		for _, fb := range b.ordered {
			x.add(b, fb)
		}
	})
	return x
}

// argIndexSplit builds the argument index of the last build
// (builder.final) before its resolution starts, with each file's argument
// records copied into a list of their own (fileBuild.argRefs) that the
// sites point into: a file's references are then read by no other file,
// and are dropped as soon as the file is resolved (finalTrim.done).
func (b *builder) argIndexSplit() {
	x := b.pyArgs
	if x == nil {
		return
	}
	x.once.Do(func() {
		x.sites = map[string][]argSite{}
		x.imported = map[string]bool{}
		p := newRefPacker(0)
		for _, fb := range b.ordered {
			x.addSplit(b, fb, p)
		}
		// No site is added later: the lists' append slack goes, and the
		// names are copied out of the references' text (a map assignment
		// stores its key again: each name was the last site's substring),
		// which then goes with the references (refs_keep.go).
		sites := make(map[string][]argSite, len(x.sites))
		for name, l := range x.sites {
			if cap(l)-len(l) > len(l)/8 {
				l = slices.Clone(l)
			}
			sites[strings.Clone(name)] = l
		}
		x.sites = sites
	})
}

// argList is the list fb's argument sites point into: its argument
// records alone once argIndexSplit copied them, else all its references.
func (fb *fileBuild) argList() refList {
	if fb.argSplit {
		return fb.argRefs
	}
	return fb.fd.Refs
}

// add appends fb's argument sites to their lists.
func (x *pyArgIndex) add(b *builder, fb *fileBuild) {
	x.addSplit(b, fb, nil)
}

// addSplit is add; with p set, fb's argument records are also copied (with
// p, as scratch) into fb.argRefs, and its sites point there.
func (x *pyArgIndex) addSplit(b *builder, fb *fileBuild, p *refPacker) {
	if fb.lang == nil || fb.lang.family != "python" {
		return
	}
	if p != nil {
		fb.argSplit = true // no sites: an empty list
		p.reset(0)
		defer func() {
			if p.n > 0 {
				fb.argRefs = p.list()
			}
		}()
	}
	fb.argImports = nil
	found := false
	for c := range fb.fd.Refs.KindCursors(refArg) {
		r, _ := fb.fd.Refs.at(c)
		_, name := calleeName(r.Object)
		if !found {
			found = true
			for _, t := range b.flowDependents(fb) {
				fb.argImports = append(fb.argImports, t.fd.Path)
				x.imported[t.fd.Path] = true
			}
			if fb.argImports == nil {
				return // imports no project file: no site can reach one
			}
		}
		if p != nil {
			c = refCursor{off: int32(len(p.data)), prevLine: p.line}
			p.add(r)
		}
		s := argSite{fb, c}
		l := x.sites[name]
		// By path, then position (as a fresh index lists them). A fresh
		// index adds the files in path order, each site after the last.
		if n := len(l); n == 0 || l[n-1].fb.fd.Path < fb.fd.Path || l[n-1].fb == fb && l[n-1].cur.off < s.cur.off {
			x.sites[name] = append(l, s)
			continue
		}
		at := sort.Search(len(l), func(j int) bool {
			return l[j].fb.fd.Path > fb.fd.Path || l[j].fb.fd.Path == fb.fd.Path && l[j].cur.off > s.cur.off
		})
		x.sites[name] = slices.Insert(l, at, s)
	}
}

// nextArgIndex returns the argument index of a new build: a fresh one
// (built on first use) when files came or went, else the previous one with
// the changed files' sites replaced (the other files' sites are the same,
// and so are the files their imports name: the same files are named by the
// same modules).
func (b *builder) nextArgIndex(old map[string]*fileBuild, changed []*fileBuild, sameFiles bool) *pyArgIndex {
	x := b.pyArgs
	if !sameFiles || x == nil || x.sites == nil {
		return &pyArgIndex{}
	}
	for _, fb := range changed {
		o := old[fb.fd.Path]
		if o == nil {
			return &pyArgIndex{}
		}
		if o.lang != nil && o.lang.family == "python" {
			done := map[string]bool{}
			for _, r := range o.fd.Refs.All() {
				if r.Kind != refArg {
					continue
				}
				_, name := calleeName(r.Object)
				if l, ok := x.sites[name]; ok && !done[name] {
					done[name] = true
					x.sites[name] = slices.DeleteFunc(l, func(s argSite) bool { return s.fb == o })
				}
			}
		}
		x.add(b, fb)
	}
	return x
}

// crossParamValues returns what calls in the files importing fb pass to
// parameter name of function f of fb.
//
// Which sites bind which parameter of f depends on the sites' targets only
// (siteReaches, memoised for the file at their first check), so it is
// listed once per function (fe.crossSites) and read again for its other
// parameters; the arguments are evaluated each time, in site order, as
// before.
func (fe *flowEval) crossParamValues(fb *fileBuild, f int32, name string, depth int) []flowVal {
	key := defLocation{fb, f}
	if cs, ok := fe.crossSites[key]; ok {
		var out []flowVal
		for _, c := range cs {
			if c.param == name {
				out = addVals(out, fe.expr(c.fb, c.def, c.arg, depth+1)...)
			}
		}
		return out
	}
	d := fb.fd.Defs[f]
	fid := fb.ids[f]
	names := []string{d.Name}
	if d.Name == "__init__" && d.Parent >= 0 && fb.fd.Defs[d.Parent].Kind == KindClass {
		names = append(names, fb.fd.Defs[d.Parent].Name) // C(x) runs C.__init__
	}
	if d.Parent < 0 {
		names = append(names, fe.moduleAliases()[d.Name]...) // make = c_make or py_make
	}
	var out []flowVal
	var cs []crossSite
	for _, n := range names {
		for _, s := range fe.argSites(n) {
			r, _ := s.fb.argList().at(s.cur)
			slot, arg, ok := strings.Cut(r.Name, argSep)
			if !ok || arg == "" {
				continue
			}
			obj, cname := calleeName(r.Object)
			if !fe.siteReaches(s, refRec{Kind: refCall, Name: cname, Object: obj, Def: r.Def}, fid) {
				continue
			}
			_, p, ok := fe.b.paramSlot(fid, slot, !fe.unboundCall(s.fb, obj, r.Def))
			if !ok {
				continue
			}
			cs = append(cs, crossSite{fb: s.fb, def: r.Def, arg: arg, param: p})
			if p == name {
				out = addVals(out, fe.expr(s.fb, r.Def, arg, depth+1)...)
			}
		}
	}
	if fe.crossSites == nil {
		fe.crossSites = map[defLocation][]crossSite{}
	}
	fe.crossSites[key] = cs
	return out
}

// crossSite is a call site in another file that passes argument arg
// (evaluated in scope def of fb) to parameter param.
type crossSite struct {
	fb    *fileBuild
	def   int32
	arg   string
	param string
}

// moduleAliases maps each name of fe.fb to the module-level variables of
// fe.fb assigned it (make_scanner = c_make_scanner or py_make_scanner),
// built once per evaluation.
func (fe *flowEval) moduleAliases() map[string][]string {
	if fe.aliases != nil {
		return fe.aliases
	}
	fe.aliases = map[string][]string{}
	for k, ss := range fe.fb.flowVars() {
		if k.scope >= 0 || k.attr {
			continue
		}
		for _, src := range ss {
			if src.scope < 0 && !src.call && src.mode == flowPlain && isDottedIdent(src.expr) && !strings.Contains(src.expr, ".") && !slices.Contains(fe.aliases[src.expr], k.name) {
				fe.aliases[src.expr] = append(fe.aliases[src.expr], k.name)
			}
		}
	}
	for _, v := range fe.aliases {
		slices.Sort(v) // map order: the same list every run
	}
	return fe.aliases
}

// argSites returns the argument sites of callee name in the files
// importing fe.fb (memoised), and records that fe.fb's edges read them.
func (fe *flowEval) argSites(name string) []argSite {
	if v, ok := fe.sitesOf[name]; ok {
		return v
	}
	fe.fb.askArgs(name)
	var out []argSite
	idx := fe.b.argIndex()
	p := fe.fb.fd.Path
	if !idx.imported[p] {
		return nil // no file with call sites imports fe.fb
	}
	// A file's sites are next to each other and share one imports list:
	// it is searched once per file.
	var last *fileBuild
	in := false
	for _, s := range idx.sites[name] {
		if s.fb != last {
			last = s.fb
			in = s.fb.fd.Path != p && slices.Contains(s.fb.argImports, p)
		}
		if in {
			out = append(out, s)
		}
	}

	if fe.sitesOf == nil {
		fe.sitesOf = map[string][]argSite{}
	}
	fe.sitesOf[name] = out
	return out
}

// siteReaches reports that call cr of site s can run fid: it is bound to
// it, to its class (a constructor), or to a method fid overrides.
func (fe *flowEval) siteReaches(s argSite, cr refRec, fid string) bool {
	if fe.siteTargets == nil {
		fe.siteTargets = map[argSiteKey][]string{}
	}
	ts, ok := fe.siteTargets[s.key()]
	if !ok {
		id, out := fe.resolveRef(s.fb, cr.Name, cr.Object, cr.Def)
		switch out {
		case outResolved:
			ts = []string{id}
		case outUnresolved:
			ts = fe.flowCallTargets(s.fb, cr)
		}
		fe.siteTargets[s.key()] = ts
	}
	for _, t := range ts {
		if t == fid {
			return true
		}
		n := fe.b.node(t)
		if !n.found() {
			continue
		}
		switch {
		case n.Kind == KindClass:
			if init, ok := fe.b.member(t, "__init__", false); ok && init == fid {
				return true
			}
		case n.Kind == KindMethod && cr.Object != "" && !strings.HasPrefix(cr.Object, "super("):
			cls := n.Parent
			if slices.Contains(s.fb.lang.selfNames, cr.Object) {
				if c, ok := fe.b.enclosingClass(s.fb, cr.Def); ok {
					cls = c
				}
			}
			// fid overrides t: a method of the same name in a subclass of
			// cls (what dispatchTargets lists, without listing them all).
			fn := fe.b.node(fid)
			if !fn.found() || fn.Kind != KindMethod || fn.Name != n.Name || fn.Parent == cls {
				continue
			}
			found := false
			fe.b.walkMRO(fn.Parent, func(c string) bool {
				found = c == cls
				return !found
			})
			if found {
				return true
			}
		}
	}
	return false
}

// askArgs records that fb's edges read the call sites of callee name in
// other files.
func (fb *fileBuild) askArgs(name string) {
	if fb.argAsked == nil {
		fb.argAsked = map[string]bool{}
	}
	if !fb.argAsked[name] {
		fb.argAsked[strings.Clone(name)] = true // not a substring of the references' text (refs_keep.go)
	}
}

// argDependents returns the files, other than affected ones, whose edges
// read call sites that an affected file has (or the previous version of a
// changed one had): the files it imports that asked for the callee's
// name. Their parameter values may have changed with it. For a changed
// file whose interface is the same (a body edit), only the sites that
// differ between its versions, or whose scope's assignments (flow, types,
// locals) differ, count: an edit elsewhere in the file evaluates them
// the same.
func (b *builder) argDependents(affected []*fileBuild, old map[string]*fileBuild) []*fileBuild {
	if len(affected) == len(b.ordered) {
		return nil
	}
	in := make(map[*fileBuild]bool, len(affected))
	for _, fb := range affected {
		in[fb] = true
	}
	var out []*fileBuild
	check := func(fb *fileBuild, d *argDiff) {
		var imps []*fileBuild
		for _, r := range fb.fd.Refs.All() {
			if r.Kind != refArg || (d != nil && !d.matters(fb, r)) {
				continue
			}
			_, name := calleeName(r.Object)
			if imps == nil {
				if imps = b.flowDependents(fb); imps == nil {
					return
				}
			}
			for _, t := range imps {
				if !in[t] && t.argAsked[name] {
					in[t] = true
					out = append(out, t)
				}
			}
		}
	}
	for _, fb := range affected {
		if fb.lang == nil || fb.lang.family != "python" {
			continue
		}
		o := old[fb.fd.Path]
		if o == nil || o == fb || o.lang == nil {
			check(fb, nil)
			continue
		}
		var d *argDiff
		if o.iface == fb.iface {
			d = diffArgs(o, fb)
		}
		check(fb, d)
		check(o, d)
	}
	return out
}

// argDiff is what differs, for argument sites, between two versions of a
// file with the same interface: sites (counted by callee, argument and
// scope) and the scopes whose assignments differ.
type argDiff struct {
	sites  map[argSiteText]int // new count minus old count
	scopes map[int32]bool
}

// argSiteText is a refArg record without its line.
type argSiteText struct {
	callee, arg string
	def         int32
}

// diffArgs compares the versions o and fb of a file.
func diffArgs(o, fb *fileBuild) *argDiff {
	d := &argDiff{sites: map[argSiteText]int{}, scopes: map[int32]bool{}}
	for _, r := range fb.fd.Refs.All() {
		if r.Kind == refArg {
			d.sites[argSiteText{r.Object, r.Name, r.Def}]++
		}
	}
	for _, r := range o.fd.Refs.All() {
		if r.Kind == refArg {
			d.sites[argSiteText{r.Object, r.Name, r.Def}]--
		}
	}
	changedTabScopes(d.scopes, o, fb) // flow sources, hints, locals (flow_names.go)
	return d
}

// matters reports that site r of fb (either version) may be evaluated
// differently in the other version.
func (d *argDiff) matters(fb *fileBuild, r refRec) bool {
	if d.sites[argSiteText{r.Object, r.Name, r.Def}] != 0 || d.scopes[-1] {
		return true
	}
	for s := r.Def; s >= 0; s = fb.fd.Defs[s].Parent {
		if d.scopes[s] {
			return true
		}
	}
	return false
}

// classImport returns the definition an import in the body of class cls
// of fb binds to name (a function imported into a class is its method).
func (fe *flowEval) classImport(fb *fileBuild, cls int32, name string) (string, bool) {
	if fb.lang.family != "python" || len(fb.fd.Imports) == 0 {
		return "", false
	}
	k := defLocation{fb: fb, idx: cls}
	m, ok := fe.classImports[k]
	if !ok {
		c := fb.fd.Defs[cls]
		for _, im := range fb.fd.Imports {
			local := im.Alias
			if local == "" {
				local = im.Name
			}
			if local == "" || im.Wildcard || im.Start < c.Start || im.End > c.End {
				continue
			}
			// Not inside one of the class's own definitions (a method's
			// import is local to it); they follow cls in source order.
			inner := false
			for j := int(cls) + 1; j < len(fb.fd.Defs) && fb.fd.Defs[j].Start < c.End; j++ {
				if d := fb.fd.Defs[j]; d.Start <= im.Start && im.End <= d.End {
					inner = true
					break
				}
			}
			if inner {
				continue
			}
			if bd, ok := fb.scopeLookup(local); ok && bd.kind == bDef {
				if m == nil {
					m = map[string]string{}
				}
				m[local] = bd.id
			}
		}
		if fe.classImports == nil {
			fe.classImports = map[defLocation]map[string]string{}
		}
		fe.classImports[k] = m
	}
	id, ok := m[name]
	return id, ok
}
