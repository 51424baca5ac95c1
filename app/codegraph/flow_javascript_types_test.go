package codegraph

import "testing"

// jsTypesFixture: JSDoc @type on fields, this.x and locals; TypeScript
// parameter properties, union annotations and non-null assertions.
var jsTypesFixture = map[string]string{
	"src/lib.ts": `export class Sink {
  write(x: number): void {}
}
export class Other {
  write(x: number): void {}
}
export function make(): Sink { return new Sink() }
`,
	"src/a.ts": `import { Sink, Other, make } from './lib'

class Holder {
  constructor(private readonly sink: Sink, public other?: Other, plain: Sink) {}
  run() { this.sink.write(1) }
  run2() { this.other.write(2) }
  run3() { this.plain.write(3) }
}

class Maybe {
  maybe: Sink | undefined
  opt() { this.maybe.write(4) }
  nonNull() { this.maybe!.write(5) }
}

function union(s: Sink | null) { s.write(6) }
function unionLocal() {
  const s: Sink | undefined = make()
  s.write(7)
}
function unionResult(): Other | null { return null }
function useUnionResult() { unionResult().write(8) }
`,
	"src/b.js": `import { Sink, Other, make } from './lib'

class C {
  /** @type {Other} */
  field = null

  constructor() {
    /** @type {Sink} */
    this.sink = null
    // a plain comment types nothing
    this.none = null
  }
  run() { this.sink.write(20) }
  runField() { this.field.write(21) }
  runNone() { this.none.write(22) }
}

function local() {
  /** @type {Sink|null} */
  let s = pick()
  s.write(23)
}

function pick() { return null }
`,
	"src/app.js": `var app = exports = module.exports = {}
app.lazy = function lazy() { return 1 }
app.use = function use(fn) {
  this.lazy()
  this.missing()
}

function Foo() { this.baz() }
Foo.prototype.bar = function () { this.baz() }
Foo.prototype.baz = function () { return 2 }
`,
	"src/util/die.ts":  "export function die(n: number) {}\nexport function warn() {}\n",
	"src/util/more.ts": "export function other() {}\n",
	"src/internal.ts":  "export * from './util/die'\nexport { other as renamed } from './util/more'\n",
	"src/user.ts": `import { die, renamed } from './internal'
import * as all from './internal'

export function useBarrel() {
  die(1)
  renamed()
}
`,
}

// TestJSTypeSources checks each shape with its exact edges.
func TestJSTypeSources(t *testing.T) {
	g := openT(t, writeTree(t, jsTypesFixture), Options{NoCache: true}).Graph()
	const sink, other = "src/lib:Sink.write", "src/lib:Other.write"
	// Parameter properties; a parameter without a modifier is not a field.
	exactEdges(t, g, "src/a:Holder.run", EdgeCalls, sink)
	exactEdges(t, g, "src/a:Holder.run2", EdgeCalls, other)
	exactEdges(t, g, "src/a:Holder.run3", EdgeCalls)
	// Unions with null/undefined, non-null assertions.
	exactEdges(t, g, "src/a:Maybe.opt", EdgeCalls, sink)
	exactEdges(t, g, "src/a:Maybe.nonNull", EdgeCalls, sink)
	exactEdges(t, g, "src/a:union", EdgeCalls, sink)
	exactEdges(t, g, "src/a:unionLocal", EdgeCalls, "src/lib:make", sink)
	exactEdges(t, g, "src/a:useUnionResult", EdgeCalls, "src/a:unionResult", other)
	// JSDoc @type on this.x, a class field and a local; other comments type nothing.
	exactEdges(t, g, "src/b:C.run", EdgeCalls, sink)
	exactEdges(t, g, "src/b:C.runField", EdgeCalls, other)
	exactEdges(t, g, "src/b:C.runNone", EdgeCalls)
	exactEdges(t, g, "src/b:local", EdgeCalls, "src/b:pick", sink)
	// this inside a function assigned to an object's property is the object.
	exactEdges(t, g, "src/app:use", EdgeCalls, "src/app:lazy")
	exactEdges(t, g, "src/app:bar", EdgeCalls, "src/app:baz")
	exactEdges(t, g, "src/app:Foo", EdgeCalls, "src/app:baz")
	// Names re-exported by a barrel file (export * from, export { a as b } from).
	exactEdges(t, g, "src/user:useBarrel", EdgeCalls, "src/util/die:die", "src/util/more:other")
}

// TestJSTypeSourcesIncremental: editing a JSDoc @type or a parameter
// property re-resolves the users; the update equals a fresh index.
func TestJSTypeSourcesIncremental(t *testing.T) {
	root := writeTree(t, jsTypesFixture)
	p := openT(t, root, Options{NoCache: true})
	edits := []struct{ file, from, to string }{
		{"src/b.js", "/** @type {Sink} */", "/** @type {Other} */"},
		{"src/a.ts", "private readonly sink: Sink", "private readonly sink: Other"},
		{"src/a.ts", "maybe: Sink | undefined", "maybe: Other | undefined"},
	}
	for i, e := range edits {
		applyEdit(t, p, root, i, e.file, e.from, e.to)
	}
}

func TestJSDocType(t *testing.T) {
	for c, want := range map[string]string{
		"/** @type {Sink} */":               "Sink",
		"/**\n * @type {null|ns.Sink}\n */": "ns.Sink",
		"/** @type {Array<Sink>} */":        "Array",
		"/** @type {function(): void} */":   "",
		"/** @param {Sink} s */":            "",
		"// @type {Sink}":                   "",
		"/** @type {?Sink} */":              "Sink",
		"/** @type {{a: number}} */":        "",
	} {
		if got := jsDocType(c); got != want {
			t.Errorf("jsDocType(%q) = %q, want %q", c, got, want)
		}
	}
}
