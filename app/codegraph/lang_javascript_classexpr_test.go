package codegraph

import (
	"reflect"
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
	var got []string
	for _, e := range edgeSet(g) {
		if e[:4] == "src/" {
			got = append(got, e)
		}
	}
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

func join(ss []string) string {
	out := ""
	for _, s := range ss {
		out += "  " + s + "\n"
	}
	return out
}
