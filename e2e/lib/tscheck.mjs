// tscheck type-checks TypeScript files with the TypeScript compiler's API
// under --strict, one program per file (so files that declare the same
// globals do not clash), reusing the parsed standard library between them:
// much faster than one tsc process per file.
import ts from "typescript";

const options = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2022.d.ts"],
  types: [],
};

const host = ts.createCompilerHost(options);
const libCache = new Map();
const getSourceFile = host.getSourceFile.bind(host);
host.getSourceFile = (name, version, onError, create) => {
  const isLib = name.includes(`${"node_modules"}/typescript/lib/`);
  if (isLib && libCache.has(name)) return libCache.get(name);
  const sf = getSourceFile(name, version, onError, create);
  if (isLib) libCache.set(name, sf);
  return sf;
};

// diagnostics returns tsc's messages for one file, "" when it compiles.
export function diagnostics(file) {
  const program = ts.createProgram([file], options, host);
  const ds = ts.getPreEmitDiagnostics(program);
  return ts.formatDiagnostics(ds, {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => process.cwd(),
    getNewLine: () => "\n",
  });
}
