package codegraph

import (
	"strings"
	"sync"
)

// Walks of the class hierarchy whose answer depends on the build's tables
// only (bases, subclasses, members, the files' flow tables), not on how far
// a file's value-flow evaluation got: the overrides dispatchTargets lists,
// the subclasses' methods pySubclassMethods lists and the classes
// subAttrOwners takes an attribute from. A class with hundreds of
// subclasses (sympy's Expr, Basic) was walked again for every call on it in
// every file (dispatchTargets alone: 8.9 of 76 CPU-s of a pyenv cold
// index); hierMemo keeps each answer for the rest of the resolution pass.
// It is created before the files are resolved and dropped after
// (builder.hier), as the tables it reads are rebuilt or patched by the next
// build; the resolvers run in parallel, so it is locked.

// hierMemo memoises pure hierarchy walks for one resolution pass.
type hierMemo struct {
	mu sync.Mutex
	m  map[hierKey][]string
}

// hierKey is one question: a walk (hierDispatch, …) from class cls for
// name (a method ID or a member name).
type hierKey struct {
	walk uint8
	cls  string
	name string
}

// The walks hierMemo keeps.
const (
	hierDispatch   uint8 = iota // dispatchTargets(cls, target)
	hierSubMethods              // pySubclassMethods(cls, name)
	hierSubOwners               // subAttrOwners(cls, name)
)

// newHierMemo returns an empty memo.
func newHierMemo() *hierMemo { return &hierMemo{m: map[hierKey][]string{}} }

// hierWalk returns the answer of walk k, computing it with fn once per
// resolution pass (every time when b.hier is nil: outside a build's
// resolution). The returned slice is shared: callers must not modify it.
func (b *builder) hierWalk(k hierKey, fn func() []string) []string {
	h := b.hier
	if h == nil {
		return fn()
	}
	h.mu.Lock()
	v, ok := h.m[k]
	h.mu.Unlock()
	if ok {
		return v
	}
	v = fn()                       // outside the lock: fn may walk (and ask the memo) again
	k.name = strings.Clone(k.name) // not a substring of a file's references' text (refs_keep.go)
	h.mu.Lock()
	h.m[k] = v
	h.mu.Unlock()
	return v
}

// refMemoKey is a name-rule question of the value-flow layer: name, on
// object obj (or bare), seen in definition def of fb.
type refMemoKey struct {
	fb   *fileBuild
	def  int32
	name string
	obj  string
}

// refMemoVal is resolveRef's answer.
type refMemoVal struct {
	id  string
	out outcome
}

// resolveRef is the builder's resolveRef for a use of obj.name in def of
// fb, memoised for the file's evaluation: it reads only the build's tables,
// and the flow layer asks the same question many times (every evaluation of
// a dotted expression, every call site a parameter's values are read from).
func (fe *flowEval) resolveRef(fb *fileBuild, name, obj string, def int32) (string, outcome) {
	k := refMemoKey{fb, def, name, obj}
	if v, ok := fe.resolved[k]; ok {
		return v.id, v.out
	}
	id, out := fe.b.resolveRef(fb, fb.lang.family, refRec{Kind: refUse, Name: name, Object: obj, Def: def}, 0)
	if fe.resolved == nil {
		fe.resolved = map[refMemoKey]refMemoVal{}
	}
	fe.resolved[k] = refMemoVal{id, out}
	return id, out
}
