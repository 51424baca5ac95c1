package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// jsFlowFixture has one function per JS/TS shape the value-flow layer handles.
var jsFlowFixture = map[string]string{
	"src/lib.ts": `export class Sink {
  write(x: number): void {}
}

export class Builder {
  setA(a: number): Builder { return this }
  setB(b: number) { return this }
  build(): Sink { return new Sink() }
}

export class Base {
  run() { return this.step() }
  step() { return 1 }
}

export class Child extends Base {
  constructor() { super() }
  step() { return super.step() + 1 }
}

export function operate(init: (source: Builder, sink: Sink) => void) {}

export function each(cb) { return cb() }
`,
	"src/app.ts": `import { Sink, Builder, Child, operate, each } from './lib'

class Service {
  private sink: Sink
  send(to: Sink) { to.write(1) }
  flush() { this.sink.write(2) }
}

function local() { return 1 }

function fromCall(b: Builder) {
  const s = b.build()
  s.write(3)
}

function chain() {
  new Builder().setA(1).setB(2).build()
}

function callbacks() {
  each(local)
  operate((source, sink) => {
    source.setA(1)
    sink.write(4)
  })
}

function values() {
  const f = local
  f()
}
`,
	"src/doc.js": `import { Sink } from './lib'

/**
 * @param {Sink} s where to write
 * @returns {Sink}
 */
function viaDoc(s) {
  s.write(5)
  return s
}

function useDoc(x) {
  viaDoc(x).write(6)
}

/**
 * A blank line below does not detach JSDoc.
 * @param {Sink} t
 */

function spaced(t) {
  t.write(7)
}
`,
}

// TestJSValueFlow checks each JS/TS shape with its exact edges.
func TestJSValueFlow(t *testing.T) {
	g := openT(t, writeTree(t, jsFlowFixture), Options{NoCache: true}).Graph()
	// TypeScript annotations on parameters and fields.
	exactEdges(t, g, "src/app:Service.send", EdgeCalls, "src/lib:Sink.write")
	exactEdges(t, g, "src/app:Service.flush", EdgeCalls, "src/lib:Sink.write")
	// A local assigned from a method call (typed by its return annotation).
	exactEdges(t, g, "src/app:fromCall", EdgeCalls, "src/lib:Builder.build", "src/lib:Sink.write")
	// A builder chain returning this (annotated or not).
	exactEdges(t, g, "src/app:chain", EdgeCalls, "src/lib:Builder", "src/lib:Builder.setA", "src/lib:Builder.setB", "src/lib:Builder.build")
	// Callbacks: a function passed and called through the parameter; a
	// callback's parameters typed by the callee's declared function type.
	exactEdges(t, g, "src/app:callbacks", EdgeCalls, "src/lib:each", "src/lib:operate", "src/lib:Builder.setA", "src/lib:Sink.write")
	exactEdges(t, g, "src/lib:each", EdgeCalls, "src/app:local")
	// A function value through a variable.
	exactEdges(t, g, "src/app:values", EdgeCalls, "src/app:local")
	// JSDoc @param and @returns.
	exactEdges(t, g, "src/doc:viaDoc", EdgeCalls, "src/lib:Sink.write")
	exactEdges(t, g, "src/doc:useDoc", EdgeCalls, "src/doc:viaDoc", "src/lib:Sink.write")
	exactEdges(t, g, "src/doc:spaced", EdgeCalls, "src/lib:Sink.write")
	// super(), super.m(), and this.m() dispatching to an override.
	exactEdges(t, g, "src/lib:Child.constructor", EdgeCalls, "src/lib:Base")
	exactEdges(t, g, "src/lib:Child.step", EdgeCalls, "src/lib:Base.step")
	exactEdges(t, g, "src/lib:Base.run", EdgeCalls, "src/lib:Base.step")
	exactEdges(t, g, "src/lib:Base.run", EdgeDispatches, "src/lib:Child.step")
}

// TestJSValueFlowIncremental checks that edits reaching other files through
// the flow (a callback's declared type, a return annotation, a JSDoc type)
// re-resolve them: the updated graph equals a fresh index.
func TestJSValueFlowIncremental(t *testing.T) {
	root := writeTree(t, jsFlowFixture)
	p := openT(t, root, Options{NoCache: true})
	edits := []struct{ file, from, to string }{
		{"src/lib.ts", "init: (source: Builder, sink: Sink) => void", "init: (source: Sink, sink: Builder) => void"},
		{"src/lib.ts", "build(): Sink {", "build(): Builder {"},
		{"src/doc.js", "@param {Sink} s", "@param {Builder} s"},
		{"src/lib.ts", "export function each(cb) { return cb() }", "export function each(cb) { return 0 }"},
	}
	for i, e := range edits {
		applyEdit(t, p, root, i, e.file, e.from, e.to)
	}
}

// applyEdit replaces from by to in file, updates p and compares its graph
// with a fresh index of root; it returns the updated graph.
func applyEdit(t *testing.T, p *Project, root string, i int, file, from, to string) *Graph {
	t.Helper()
	path := writeEdit(t, root, i, file, from, to)
	g, err := p.UpdateFiles(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	fresh := openT(t, root, Options{NoCache: true}).Graph()
	if got, want := edgeSet(g), edgeSet(fresh); !reflect.DeepEqual(got, want) {
		t.Errorf("edit %d: updated graph differs from a fresh index:\n got %v\nwant %v", i, got, want)
	}
	return g
}

// writeEdit replaces the first from by to in file (edit i, a slash path
// under root), failing when from is not there; it returns the file's path.
func writeEdit(t *testing.T, root string, i int, file, from, to string) string {
	t.Helper()
	return rewriteFile(t, root, file, func(src string) string {
		if !strings.Contains(src, from) {
			t.Fatalf("edit %d: %q not in %s", i, from, file)
		}
		return strings.Replace(src, from, to, 1)
	})
}

// rewriteFile replaces the text of file (a slash path under root) by
// fn's answer and returns its path.
func rewriteFile(t *testing.T, root, file string, fn func(string) string) string {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(file))
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(fn(string(src))), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
