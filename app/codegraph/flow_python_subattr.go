package codegraph

import "slices"

// Attributes and special methods that a Python class leaves to its
// subclasses: a base class reads self.network_address, self._flavour or
// runs str(self) while only its subclasses (or the mixins they add) assign
// the attribute or define the method. The value is the union over the
// subclasses, as a dispatch: which subclass the instance has is unknown.

// pySubclassAttr returns the values of attribute name of v (a class or an
// instance of it) when neither the class nor its bases set it: what each
// subclass sets (a method, a property's result, a class attribute, a
// self.name assignment), marked may (dispatches).
func (fe *flowEval) pySubclassAttr(v flowVal, name string, depth int) []flowVal {
	b := fe.b
	if len(b.subs[v.id]) == 0 || depth > maxFlowDepth {
		return nil
	}
	if loc, ok := b.defAt(v.id); !ok || loc.fb.lang == nil || loc.fb.lang.family != "python" {
		return nil
	}
	var out []flowVal
	for _, c := range fe.subAttrOwners(v.id, name) {
		vs, _ := fe.pyOwnAttr(c, v.inst, name, depth)
		out = addVals(out, vs...)
	}
	return asMay(out)
}

// subAttrOwners returns the classes pySubclassAttr takes attribute name of
// cls from, in its order: for each subclass (breadth first, at most
// maxSubclassWalk), the first class along its bases past cls's own that
// sets name. That depends on the hierarchy only, and walking it is the
// cost (sympy's Expr has hundreds of subclasses, each with its bases): it
// is kept for the file, while the values (which depend on how far the
// evaluation got) are read again each time.
func (fe *flowEval) subAttrOwners(cls, name string) []string {
	return fe.b.hierWalk(hierKey{hierSubOwners, cls, name}, func() []string { return fe.b.walkSubAttrOwners(cls, name) })
}

// walkSubAttrOwners is subAttrOwners' walk (kept per resolution pass by
// hierWalk).
func (b *builder) walkSubAttrOwners(cls, name string) []string {
	var out []string
	for _, s := range b.subclassWalk(cls) {
		// The first class along s's bases that sets name, past those
		// cls has (they do not): s itself or a mixin it adds.
		b.walkMRO(s, func(c string) bool {
			if b.subclassOf(cls, c) {
				return true
			}
			if !b.pySetsAttr(c, name) {
				return true
			}
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
			return false
		})
	}
	return out
}

// subclassWalk returns the subclasses of cls, theirs and so on, breadth
// first, each once, at most maxSubclassWalk-1 of them.
func (b *builder) subclassWalk(cls string) []string {
	queue := []string{cls}
	for i := 0; i < len(queue); i++ {
		for _, s := range b.subs[queue[i]] {
			if len(queue) >= maxSubclassWalk || slices.Contains(queue, s) {
				continue
			}
			queue = append(queue, s)
		}
	}
	return queue[1:]
}

// pySetsAttr reports that class c itself sets attribute name: what
// pyOwnAttr reads (a member, or a self.name assignment in its methods).
func (b *builder) pySetsAttr(c, name string) bool {
	loc, ok := b.defAt(c)
	if !ok {
		return false
	}
	if _, ok := b.members[c][name]; ok {
		return true
	}
	_, ok = loc.fb.flowAt(loc.idx, true, "self."+name)
	return ok
}

// pyOwnAttr returns what class c itself (not its bases) sets attribute
// name to, read on an instance (inst) or on the class, and whether it
// sets it.
func (fe *flowEval) pyOwnAttr(c string, inst bool, name string, depth int) ([]flowVal, bool) {
	b := fe.b
	loc, ok := b.defAt(c)
	if !ok {
		return nil, false
	}
	if id, ok := b.members[c][name]; ok {
		if inst && b.pyProperty(id) {
			return fe.returns(id, depth+1), true
		}
		return []flowVal{{id: id}}, true
	}
	if ss, ok := loc.fb.flowAt(loc.idx, true, "self."+name); ok {
		return fe.srcs(loc.fb, ss, depth+1), true
	}
	return nil, false
}

// pySubclassMethods returns the methods named name that the subclasses of
// class cls define when cls and its bases have none (str(self) in a base
// whose subclasses define __str__).
func (b *builder) pySubclassMethods(cls, name string) []string {
	if b.pyNames[name]&pyMethod == 0 {
		return nil
	}
	return b.subclassMethods(cls, name)
}

// subclassMethods returns the methods named name that the subclasses of
// class cls define, once per resolution pass (hierWalk).
func (b *builder) subclassMethods(cls, name string) []string {
	if len(b.subs[cls]) == 0 {
		return nil
	}
	return b.hierWalk(hierKey{hierSubMethods, cls, name}, func() []string { return b.walkSubclassMethods(cls, name) })
}

// walkSubclassMethods is pySubclassMethods' walk.
func (b *builder) walkSubclassMethods(cls, name string) []string {
	var out []string
	for _, s := range b.subclassWalk(cls) {
		if id, ok := b.member(s, name, false); ok && !slices.Contains(out, id) {
			if n := b.node(id); n.found() && n.Kind == KindMethod {
				out = append(out, id)
			}
		}
	}
	return out
}

// pyImplicitBySubclass adds the dispatches of an implicit call (str(x),
// x == y, for …) of special method name on v whose class has none: to the
// methods its subclasses define (a "raise" constructs v's own class).
func (b *builder) pyImplicitBySubclass(src string, v flowVal, name string, r refRec, res *fileResult) {
	if r.Name == "raise" || !v.inst {
		return
	}
	for _, m := range b.pySubclassMethods(v.id, name) {
		if m != src {
			res.addEdge(src, m, EdgeDispatches, r.Line)
		}
	}
}
