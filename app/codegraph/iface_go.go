package codegraph

import (
	"sort"
	"strings"
)

// Go interfaces: an interface type's methods are nodes (children of the
// interface); a concrete type of the project implements an interface when
// its method set (own methods and those promoted from embedded types of the
// project) has every method of the interface (its own and embedded ones) with
// the same name and the same numbers of parameters and results. Types get
// implements edges to their interfaces; a call resolved to an interface
// method gets a dispatches edge from the caller to each implementation.
// Matching ignores parameter types and pointer-versus-value receivers, and
// methods promoted from types outside the project are unknown.

// maxDispatchTargets bounds the implementations one interface call
// dispatches to (io.Writer-like interfaces in large trees have hundreds).
const maxDispatchTargets = 64

// isGoInterface reports an interface type node (its signature is
// "Name interface", see goQuery).
func isGoInterface(n nodeView) bool {
	return n.Kind == KindClass && n.Language == "go" && strings.HasSuffix(n.Signature, " interface")
}

// goArity returns the numbers of parameters and results in a Go function,
// method or interface method signature, or ok=false when it cannot tell.
func goArity(sig, name string) (params, results int, ok bool) {
	i := strings.Index(sig, name+"(")
	if i < 0 {
		i = strings.Index(sig, name+"[") // generic
		if i < 0 {
			return 0, 0, false
		}
	}
	s := sig[i+len(name):]
	if s[0] == '[' {
		j := groupEnd(s, 0)
		if j < 0 {
			return 0, 0, false
		}
		s = s[j+1:]
	}
	if s == "" || s[0] != '(' {
		return 0, 0, false
	}
	j := groupEnd(s, 0)
	if j < 0 {
		return 0, 0, false
	}
	params = countItems(s[1:j])
	rest := strings.TrimSpace(s[j+1:])
	switch {
	case rest == "":
	case rest[0] == '(':
		k := groupEnd(rest, 0)
		if k < 0 {
			return 0, 0, false
		}
		results = countItems(rest[1:k])
	default:
		results = 1
	}
	return params, results, true
}

// countItems counts the comma-separated items of a parameter list.
func countItems(s string) int {
	if strings.TrimSpace(s) == "" {
		return 0
	}
	n := 1
	for {
		i := topLevelIndex(s, ',')
		if i < 0 {
			return n
		}
		if strings.TrimSpace(s[i+1:]) != "" {
			n++
		}
		s = s[i+1:]
	}
}

// goMethodSet returns the methods of class cls by name, own first, then
// promoted from embedded types (breadth first: the shallowest wins).
func (b *builder) goMethodSet(cls string) map[string]string {
	ms := map[string]string{}
	seen := map[string]bool{cls: true}
	queue := []string{cls}
	for i := 0; i < len(queue); i++ {
		c := queue[i]
		for name, id := range b.members[c] {
			if _, ok := ms[name]; !ok {
				if n := b.node(id); n.found() && n.Kind == KindMethod {
					ms[name] = id
				}
			}
		}
		for _, base := range b.bases[c] {
			if !seen[base] {
				seen[base] = true
				queue = append(queue, base)
			}
		}
	}
	return ms
}

// goInterfaces computes implements edges and, for each interface, the
// concrete types implementing it, then dispatches edges for every call to
// an interface method in the files' results.
func (b *builder) goInterfaces(ordered []*fileBuild) []Edge {
	gi := b.goImplements(ordered)
	if gi == nil {
		return nil
	}
	edges := gi.edges
	for _, fb := range ordered {
		edges = append(edges, gi.dispatch(b, fb)...)
	}
	return edges
}

// goImpls is what Go interface matching found: implements edges, each
// interface's implementing types, and each concrete type's method set.
type goImpls struct {
	edges []Edge
	impls map[string][]string          // interface → implementing types
	sets  map[string]map[string]string // concrete type → method name → method ID
}

// goImplements matches every Go interface of the project against the
// concrete types; nil when the project has no Go interface.
func (b *builder) goImplements(ordered []*fileBuild) *goImpls {
	var ifaces, types []string
	for _, fb := range ordered {
		if fb.lang == nil || fb.lang.family != "go" {
			continue
		}
		for i, d := range fb.fd.Defs {
			if d.Kind != KindClass {
				continue
			}
			if isGoInterface(b.node(fb.ids[i])) {
				ifaces = append(ifaces, fb.ids[i])
			} else {
				types = append(types, fb.ids[i])
			}
		}
	}
	if len(ifaces) == 0 {
		return nil
	}
	type sigKey struct {
		name    string
		in, out int
	}
	sigOf := func(id, name string) (sigKey, bool) {
		n := b.node(id)
		if !n.found() {
			return sigKey{}, false
		}
		p, r, ok := goArity(n.Signature, name)
		return sigKey{name, p, r}, ok
	}
	// Concrete method sets, indexed by method name+arity.
	sets := make(map[string]map[string]string, len(types))
	byMethod := map[sigKey][]string{}
	for _, t := range types {
		ms := b.goMethodSet(t)
		if len(ms) == 0 {
			continue
		}
		sets[t] = ms
		for name, id := range ms {
			if k, ok := sigOf(id, name); ok {
				byMethod[k] = append(byMethod[k], t)
			}
		}
	}
	var edges []Edge
	impls := map[string][]string{} // interface → implementing types
	for _, in := range ifaces {
		ims := b.goMethodSet(in)
		if len(ims) == 0 {
			continue
		}
		var keys []sigKey
		ok := true
		for name, id := range ims {
			k, good := sigOf(id, name)
			if !good {
				ok = false
				break
			}
			keys = append(keys, k)
		}
		if !ok {
			continue
		}
		// Candidates: the types having the rarest of the methods.
		sort.Slice(keys, func(i, j int) bool {
			if a, b := len(byMethod[keys[i]]), len(byMethod[keys[j]]); a != b {
				return a < b
			}
			return keys[i].name < keys[j].name
		})
		for _, t := range byMethod[keys[0]] {
			all := true
			for _, k := range keys[1:] {
				id, has := sets[t][k.name]
				if !has {
					all = false
					break
				}
				if k2, _ := sigOf(id, k.name); k2 != k {
					all = false
					break
				}
			}
			if all {
				impls[in] = append(impls[in], t)
				edges = append(edges, Edge{From: t, To: in, Kind: EdgeImplements})
			}
		}
	}
	return &goImpls{edges: edges, impls: impls, sets: sets}
}

// dispatch returns the dispatches edges of one file: calls resolved to an
// interface method reach each implementation of the interface that
// declares the method. A call's source is a node of the file, so the
// duplicate filter is per file.
func (gi *goImpls) dispatch(b *builder, fb *fileBuild) []Edge {
	if fb.res == nil || fb.lang == nil || fb.lang.family != "go" {
		return nil
	}
	impls, sets := gi.impls, gi.sets
	var edges []Edge
	type dk struct{ from, to string }
	var seen map[dk]bool
	for _, e := range fb.res.edges {
		if e.Kind != EdgeCalls {
			continue
		}
		m := b.node(e.To)
		if !m.found() || m.Kind != KindMethod {
			continue
		}
		in := m.Parent
		if !isGoInterface(b.node(in)) {
			continue
		}
		ts := impls[in]
		if len(ts) > maxDispatchTargets {
			continue
		}
		for _, t := range ts {
			impl, ok := sets[t][m.Name]
			if !ok || seen[dk{e.From, impl}] {
				continue
			}
			if seen == nil {
				seen = map[dk]bool{}
			}
			seen[dk{e.From, impl}] = true
			edges = append(edges, Edge{From: e.From, To: impl, Kind: EdgeDispatches, Line: e.Line})
		}
	}
	return edges
}

// goVisibleType reports a Go type fact other files read: a struct field's
// type or a package-level variable's type or value, or a call of a parameter
// (callers passing functions to it get dispatches edges).
func goVisibleType(fd *fileData, r refRec) bool {
	if r.Kind == refCall {
		return goCallsParam(fd, r)
	}
	if r.Kind != refAssign || fd.Lang != "go" {
		return false
	}
	return r.Def < 0 || fd.Defs[r.Def].Kind == KindClass
}
