// Static call graph of a TS/JS package from the TypeScript checker: at every
// call and `new`, getResolvedSignature gives the declaration that runs.
// usage: node oracle.js SRCDIR OUT.json   (typescript resolved via NODE_PATH)
// Writes [callerFile, callLine, calleeFile, calleeLine, calleeName] for calls
// whose callee is declared with a body in a file under SRCDIR (paths
// relative to SRCDIR, lines 1-based; calleeLine is the declaration's first
// line without its leading comments).
const ts = require("typescript");
const fs = require("fs");
const path = require("path");

const root = path.resolve(process.argv[2]);
const out = process.argv[3];
const files = [];
(function walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules") walk(p);
    } else if (/\.(ts|tsx|js|mjs|cjs|jsx)$/.test(e.name) && !e.name.endsWith(".d.ts")) files.push(p);
  }
})(root);
const program = ts.createProgram(files, {
  allowJs: true, checkJs: true, noEmit: true, target: ts.ScriptTarget.ES2020,
  module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.NodeJs,
  skipLibCheck: true, strict: false, lib: ["lib.es2020.d.ts", "lib.dom.d.ts"],
});
const checker = program.getTypeChecker();
const pairs = [];
const line = (sf, pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;
for (const sf of program.getSourceFiles()) {
  const f = path.resolve(sf.fileName);
  if (!f.startsWith(root + path.sep) || sf.isDeclarationFile) continue;
  const rel = path.relative(root, f);
  const visit = (node) => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      let sig;
      try { sig = checker.getResolvedSignature(node); } catch (e) { sig = undefined; }
      let decl = sig && sig.declaration;
      if (decl && !decl.body && decl.symbol && decl.symbol.declarations) {
        decl = decl.symbol.declarations.find((d) => d.body) || decl; // an overload: its implementation
      }
      if ((!decl || !decl.body) && ts.isNewExpression(node)) {
        // A class without a constructor of its own: the class.
        const s = checker.getSymbolAtLocation(node.expression);
        const t = s && (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
        const c = t && t.declarations && t.declarations.find((d) => ts.isClassDeclaration(d));
        if (c) decl = Object.assign(Object.create(c), { body: c.members, __class: c });
      }
      if (decl && decl.body) {
        if (decl.__class) decl = decl.__class;
        const dsf = decl.getSourceFile();
        const df = path.resolve(dsf.fileName);
        if (df.startsWith(root + path.sep) && !dsf.isDeclarationFile) {
          let name = decl.name ? decl.name.getText(dsf) : "";
          if (ts.isConstructorDeclaration(decl)) name = "constructor";
          if (!name && decl.parent && ts.isVariableDeclaration(decl.parent)) name = decl.parent.name.getText(dsf);
          if (!name && decl.parent && ts.isPropertyAssignment(decl.parent)) name = decl.parent.name.getText(dsf);
          let start = decl;
          if (decl.parent && ts.isVariableDeclaration(decl.parent)) start = decl.parent;
          pairs.push([rel, line(sf, node.getStart(sf)), path.relative(root, df), line(dsf, start.getStart(dsf)), name]);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
fs.writeFileSync(out, JSON.stringify(pairs));
console.error(`oracle: ${pairs.length} resolved calls in ${files.length} files`);
