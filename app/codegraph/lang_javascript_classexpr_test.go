package codegraph

import (
	"reflect"
	"strings"
	"testing"
)

// TestJSClassExpressions: classes defined by a class expression bound to a
// name (what TypeScript emits for every decorated class, e.g. monaco's
// `let ModelService = class ModelService extends Disposable {…}`), named or
// not, in JavaScript and TypeScript, are classes with their methods, bases
// and calls, like class declarations.
func TestJSClassExpressions(t *testing.T) {
	root := writeTree(t, map[string]string{
		"src/base.js": "export class Disposable { dispose() {} }\n",
		"src/model.js": `import { Disposable } from './base'
let ModelService = ModelService_1 = class ModelService extends Disposable {
  createModel(v) { const d = this._create(v); this.dispose(); return d }
  _create(v) { return v }
}
const Anon = class extends Disposable {
  run() { return this.go() }
  go() { return 1 }
}
function use() { const s = new ModelService(); s.createModel(1); new Anon().run() }
export { ModelService, Anon, use }
`,
		"src/view.ts": `export let View = class View {
  render(): number { return this.paint() }
  paint(): number { return 2 }
}
`,
	})
	g := openT(t, root, Options{NoCache: true}).Graph()
	for _, c := range []struct {
		qual string
		kind Kind
	}{
		{"src/model:ModelService", KindClass},
		{"src/model:ModelService.createModel", KindMethod},
		{"src/model:ModelService._create", KindMethod},
		{"src/model:Anon", KindClass},
		{"src/model:Anon.run", KindMethod},
		{"src/view:View", KindClass},
		{"src/view:View.render", KindMethod},
	} {
		if n := byQual(t, g, c.qual); n.Kind != c.kind {
			t.Errorf("%s is a %s, want a %s", c.qual, n.Kind, c.kind)
		}
	}
	got := srcEdges(g)
	want := []string{
		"src/model -imports-> src/base",
		"src/model:Anon -inherits-> src/base:Disposable",
		"src/model:Anon.run -calls-> src/model:Anon.go",
		"src/model:ModelService -inherits-> src/base:Disposable",
		"src/model:ModelService.createModel -calls-> src/base:Disposable.dispose",
		"src/model:ModelService.createModel -calls-> src/model:ModelService._create",
		"src/model:use -calls-> src/model:Anon",
		"src/model:use -calls-> src/model:Anon.run",
		"src/model:use -calls-> src/model:ModelService",
		"src/model:use -calls-> src/model:ModelService.createModel",
		"src/view:View.render -calls-> src/view:View.paint",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("edges:\n%s\nwant:\n%s", join(got), join(want))
	}
}

// srcEdges is edgeSet's part between the fixtures' files under src/.
func srcEdges(g *Graph) []string {
	var out []string
	for _, e := range edgeSet(g) {
		if strings.HasPrefix(e, "src/") {
			out = append(out, e)
		}
	}
	return out
}

func join(ss []string) string { return "  " + strings.Join(ss, "\n  ") + "\n" }

// TestJSDeclarationBesideImplementation: a compiled TypeScript package
// ships types.d.ts beside types.js, both module "types". The classes the
// JavaScript defines are the ones its names mean, so `this.m()` in a
// subclass reaches the base's method body, not a declared signature.
func TestJSDeclarationBesideImplementation(t *testing.T) {
	root := writeTree(t, map[string]string{
		"lib/types.d.ts": "export declare class ZodType {\n    _getType(input: unknown): string;\n}\nexport declare class ZodVoid extends ZodType {\n    _parse(input: unknown): string;\n}\n",
		"lib/types.js":   "class ZodType {\n    _getType(input) { return typeof input }\n}\nexports.ZodType = ZodType;\nclass ZodVoid extends ZodType {\n    _parse(input) { return this._getType(input) }\n}\nexports.ZodVoid = ZodVoid;\n",
		"lib/use.js":     "const types_1 = require('./types');\nfunction check(x) { return new types_1.ZodVoid()._parse(x) }\n",
	})
	g := openT(t, root, Options{NoCache: true}).Graph()
	in := func(path, qual string) *Node {
		for _, n := range g.Nodes() {
			if n.Path == path && n.QualName == qual {
				return n
			}
		}
		t.Fatalf("no node %s in %s", qual, path)
		return nil
	}
	edge := func(from, to *Node, kind EdgeKind) bool {
		for _, e := range g.Out(from.ID, kind) {
			if e.To == to.ID {
				return true
			}
		}
		return false
	}
	voidJS, baseJS := in("lib/types.js", "lib/types:ZodVoid"), in("lib/types.js", "lib/types:ZodType")
	if !edge(voidJS, baseJS, EdgeInherits) {
		t.Error("ZodVoid (types.js) does not inherit types.js's ZodType")
	}
	if !edge(in("lib/types.js", "lib/types:ZodVoid._parse"), in("lib/types.js", "lib/types:ZodType._getType"), EdgeCalls) {
		t.Error("this._getType() in ZodVoid._parse does not reach ZodType._getType's body")
	}
	if !edge(in("lib/use.js", "lib/use:check"), in("lib/types.js", "lib/types:ZodVoid._parse"), EdgeCalls) {
		t.Error("check does not call types.js's ZodVoid._parse")
	}
	// The module is the implementation for the file's import too.
	if !edge(in("lib/use.js", "lib/use"), in("lib/types.js", "lib/types"), EdgeImports) {
		t.Error("use.js does not import types.js")
	}
}

// TestJSClassFromFunction: a class whose base is a call of a function that
// makes a class (effect's `class Int extends make(ast) {}` with
// `const make = ast => class SchemaClass { static pipe() {} }`, and mixins
// `class B extends Mixin(A) {}`) inherits the class the function makes,
// so `Int.pipe()` and `this.m()` reach its methods; the call itself is a
// call of the function.
func TestJSClassFromFunction(t *testing.T) {
	root := writeTree(t, map[string]string{
		"src/schema.js": `export const make = ast => class SchemaClass {
  static pipe() { return ast }
  static annotations(a) { return make(a) }
}
export class Int extends make(1) {}
export function use() { return Int.pipe() }
`,
		"src/mixin.ts": `class Base { hello(): number { return 1 } }
function Walker(B: any) {
  return class extends B {
    walk(): number { return this.hello() }
  }
}
function notAClass() { return 1 }
export class Dog extends Walker(Base) {
  run(): number { return this.walk() }
}
export class Odd extends notAClass() {
  go(): number { return this.walk() }
}
`,
	})
	g := openT(t, root, Options{NoCache: true}).Graph()
	got := srcEdges(g)
	// The mixin's class is named "class" (it has no name of its own). Its
	// base is a parameter, which the base pass does not follow: this.hello()
	// in it reaches nothing (docs/callgraph-shapes.md, open).
	want := []string{
		"src/mixin:Dog -calls-> src/mixin:Walker",
		"src/mixin:Dog -inherits-> src/mixin:Walker.class",
		"src/mixin:Dog -uses-> src/mixin:Base",
		"src/mixin:Dog.run -calls-> src/mixin:Walker.class.walk",
		"src/mixin:Odd -calls-> src/mixin:notAClass",
		"src/schema:Int -calls-> src/schema:make",
		"src/schema:Int -inherits-> src/schema:make.SchemaClass",
		"src/schema:make.SchemaClass.annotations -calls-> src/schema:make",
		"src/schema:use -calls-> src/schema:make.SchemaClass.pipe",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("edges:\n%s\nwant:\n%s", join(got), join(want))
	}
}

// TestTSInterfaceDispatch: x.m() on a value typed by an interface (a field
// injected through the constructor, a parameter) or by an abstract class
// that leaves m abstract dispatches to the m of each implementing class;
// an interface nobody implements gives no edge, and a class's own method
// stays a call.
func TestTSInterfaceDispatch(t *testing.T) {
	root := writeTree(t, map[string]string{
		"src/svc.ts": `export interface IModelService {
  createModel(v: string): number;
}
export class ModelService implements IModelService {
  createModel(v: string): number { return v.length }
}
export class TestModelService implements IModelService {
  createModel(v: string): number { return 0 }
}
export abstract class Shape {
  abstract area(): number;
  twice(): number { return 2 * this.area() }
}
export class Square extends Shape {
  area(): number { return 4 }
}
export interface Lonely { run(): void }
`,
		"src/user.ts": `import { IModelService, Shape, Lonely, ModelService } from './svc'
export class Editor {
  constructor(private readonly modelService: IModelService) {}
  open(): number { return this.modelService.createModel('x') }
}
export function direct(s: IModelService, sh: Shape, l: Lonely, m: ModelService): number {
  l.run()
  m.createModel('z')
  return s.createModel('y') + sh.area()
}
`,
	})
	g := openT(t, root, Options{NoCache: true}).Graph()
	var got []string
	for _, e := range srcEdges(g) {
		if strings.Contains(e, "-calls->") || strings.Contains(e, "-dispatches->") {
			got = append(got, e)
		}
	}
	want := []string{
		"src/svc:Shape.twice -dispatches-> src/svc:Square.area",
		"src/user:Editor.open -dispatches-> src/svc:ModelService.createModel",
		"src/user:Editor.open -dispatches-> src/svc:TestModelService.createModel",
		"src/user:direct -calls-> src/svc:ModelService.createModel",
		"src/user:direct -dispatches-> src/svc:ModelService.createModel",
		"src/user:direct -dispatches-> src/svc:Square.area",
		"src/user:direct -dispatches-> src/svc:TestModelService.createModel",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("edges:\n%s\nwant:\n%s", join(got), join(want))
	}
}
