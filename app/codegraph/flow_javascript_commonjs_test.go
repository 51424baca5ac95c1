package codegraph

import "testing"

// jsCommonJSFixture: CommonJS modules (module.exports = X, exports.x = …,
// require of a file, of a folder's index.js and of one property), a
// declaration beside a same-named property function, this inside anonymous
// functions assigned at top level, and var self = this; TypeScript as casts.
var jsCommonJSFixture = map[string]string{
	"lib/layer.js": `module.exports = Layer;

function Layer(path, fn) {
  if (!(this instanceof Layer)) {
    return new Layer(path, fn);
  }
}

Layer.prototype.match = function match(path) { return true };
`,
	"lib/router/index.js": `var Layer = require('../layer');

var proto = module.exports = function(options) {
  return proto;
};

proto.route = function route(path) {
  var layer = new Layer(path, null);
  return layer;
};

proto.use = function use(fn) {
  var layer = Layer('/', fn);
  return this;
};

proto.handle = function handle(req) {
  /** @type {Layer} */
  var typed = null;
  var self = this;
  next();
  function next(err) {
    self.process(req);
    self.missing(req);
  }
};

proto.process = function process(req) {};

['get', 'post'].forEach(function (method) {
  proto[method] = function (path) {
    var route = this.route(path);
    return this;
  };
});
`,
	"lib/utils.js": `exports.compile = function compile(val) { return val };
exports.setCharset = function setCharset(type) { return type };
module.exports.etag = function etag(body) { return body };
`,
	"lib/app.js": `var Router = require('./router');
var compile = require('./utils').compile;
var utils = require('./utils');
var resolve = require('path').resolve;

var app = exports = module.exports = {};

app.set = function set(setting, val) {
  this.settings = compile(val);
  return utils.etag(val);
};

app.sendfile = function (path) {
  sendfile(path);
};

function sendfile(path) {
  return resolve(path);
}

app.init = function init() {
  this.router = new Router({});
};
`,
	"lib/plain.js": `var obj = {};
obj.run = function run() {};
var other = {};
other.run = function run() {};

[1].forEach(function () {
  this.run();
});
`,
	"lib/debug.js": `function setup(env) {
  createDebug.enable = enable;
  createDebug.twice = enable;
  createDebug.twice = disable;
  function createDebug(ns) {
    createDebug.enable(ns);
    createDebug.twice(ns);
    createDebug.other(ns);
  }
  function enable(ns) {}
  function disable(ns) {}
  return createDebug;
}

function outside() {
  createDebug.enable('');
}
`,
	"src/cast.ts": `export class Sink { write(x: number): void {} }
export class Other { write(x: number): void {} }

function cast(x: unknown, y: unknown) {
  (x as Sink).write(1);
  (y as Other<number>).write(2);
  (x as any).write(3);
}

function castLocal(x: unknown) {
  const s = x as Sink;
  s.write(4);
  const o = x as Other<string>;
  o.write(5);
}
`,
}

// TestJSCommonJS checks each CommonJS shape with its exact edges.
func TestJSCommonJS(t *testing.T) {
	g := openT(t, writeTree(t, jsCommonJSFixture), Options{NoCache: true}).Graph()
	// module.exports = Layer: new Layer(…) and Layer(…) through require
	// run function Layer, also inside Layer itself.
	exactEdges(t, g, "lib/router/index:route", EdgeCalls, "lib/layer:Layer")
	exactEdges(t, g, "lib/router/index:use", EdgeCalls, "lib/layer:Layer")
	exactEdges(t, g, "lib/layer:Layer", EdgeCalls, "lib/layer:Layer")
	// var self = this in a function assigned to proto.handle: self.m() in
	// a nested function is proto.m; a name proto does not have is nothing.
	exactEdges(t, g, "lib/router/index:handle.next", EdgeCalls, "lib/router/index:process")
	// this.m() in an anonymous function assigned at top level
	// (proto[method] = function…): the one property function named m.
	exactEdges(t, g, "lib/router/index", EdgeCalls, "lib/router/index:route")
	// require('./utils').compile binds compile; utils.etag through
	// module.exports.etag; a declaration wins over res.sendfile for a bare
	// call; require('./router') names the folder's index.js, whose
	// module.exports is an anonymous function (no node: no edge).
	exactEdges(t, g, "lib/app:set", EdgeCalls, "lib/utils:compile", "lib/utils:etag")
	exactEdges(t, g, "lib/app:sendfile", EdgeCalls, "lib/app:sendfile")
	exactEdges(t, g, "lib/app:init", EdgeCalls)
	// Two objects have a run property: this.run() at top level stays open.
	exactEdges(t, g, "lib/plain", EdgeCalls)
	// obj.m = fn, then obj.m(): fn runs (inside the function that assigned
	// it); assigned twice or never, or outside that function: no edge.
	exactEdges(t, g, "lib/debug:setup.createDebug", EdgeCalls, "lib/debug:setup.enable")
	exactEdges(t, g, "lib/debug:outside", EdgeCalls)
	// TypeScript as casts type the receiver; as any types nothing.
	exactEdges(t, g, "src/cast:cast", EdgeCalls, "src/cast:Sink.write", "src/cast:Other.write")
	exactEdges(t, g, "src/cast:castLocal", EdgeCalls, "src/cast:Sink.write", "src/cast:Other.write")
}

// TestJSCommonJSIncremental: changing what a module exports re-resolves
// the files that require it; the update equals a fresh index.
func TestJSCommonJSIncremental(t *testing.T) {
	root := writeTree(t, jsCommonJSFixture)
	p := openT(t, root, Options{NoCache: true})
	edits := []struct{ file, from, to string }{
		{"lib/layer.js", "module.exports = Layer;", "module.exports = Other;\nfunction Other() {}"},
		{"lib/utils.js", "exports.compile = function compile", "exports.compile2 = function compile2"},
	}
	for i, e := range edits {
		applyEdit(t, p, root, i, e.file, e.from, e.to)
	}
}
