// Declarations under tsc --strict (issue 12): every golden declaration file
// the Go tests check in (typegen's and the OpenAPI connector's), and
// `codemode-mcp types` for real servers as one self-contained file that a
// program can be checked against.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { tempDir, standardConfig, cli, e2eDir } from "../lib/helpers.mjs";
import { diagnostics } from "../lib/tscheck.mjs";

const repo = path.resolve(e2eDir, "..");

function goldens(dir) {
  return readdirSync(path.join(repo, dir)).filter((f) => f.endsWith(".ts")).map((f) => path.join(repo, dir, f)).sort();
}

describe("golden declaration files compile under --strict", () => {
  const files = [...goldens("typegen/testdata"), ...goldens("connectors/openapi/testdata")];
  test("there are golden files for every typegen feature", () => {
    for (const name of ["cases", "constructs", "named", "namespaces", "keywords", "everything", "memory"]) {
      assert.ok(files.some((f) => f.endsWith(`typegen/testdata/${name}.ts`)), `typegen/testdata/${name}.ts is missing`);
    }
  });
  for (const f of files) {
    test(path.relative(repo, f), () => {
      assert.equal(diagnostics(f), "");
    });
  }
});

// An optional property named after a member every object inherits
// (toString, constructor, …) must not make every call a type error.
test("a call leaving out properties named after Object's members type-checks", () => {
  const dir = tempDir();
  const prog = path.join(dir, "words.ts");
  writeFileSync(prog, `/// <reference path="${path.join(repo, "typegen/testdata/keywords.ts")}" />
words.class({ class: "c", type: "t" });
words.toString({ class: "c", type: "t", toString: "s", valueOf: "v" });
`);
  assert.equal(diagnostics(prog), "");
});

describe("codemode-mcp types", () => {
  test("one self-contained file: the codemode global and every connector; programs check against it", () => {
    const dir = tempDir();
    const r = cli(["types", "--config", standardConfig(dir)]);
    assert.equal(r.code, 0, r.stderr);
    for (const g of ["codemode", "notes", "everything", "memory"]) {
      assert.equal(r.stdout.match(new RegExp(`^declare const ${g}: `, "gm"))?.length, 1, `declare const ${g}`);
    }
    const decl = path.join(dir, "codemode.d.ts");
    writeFileSync(decl, r.stdout);
    assert.equal(diagnostics(decl), "");

    const good = path.join(dir, "good.ts");
    writeFileSync(good, `/// <reference path="codemode.d.ts" />
async function main() {
  const sum = await everything.get_sum({ a: 1, b: 2 });
  const graph = await memory.read_graph({});
  const names: string[] = graph.entities.map((e) => e.name);
  const found = await codemode.search("add two numbers");
  const d = await codemode.describe(found.results[0].path);
  const v = await codemode.step("now", () => Date.now());
  return { sum, names, types: d.types, v: v + 1 };
}
main();
`);
    assert.equal(diagnostics(good), "");

    const bad = path.join(dir, "bad.ts");
    writeFileSync(bad, `/// <reference path="codemode.d.ts" />
async function main() {
  await everything.get_sum({ a: "1", b: 2 });
  await everything.get_summ({ a: 1, b: 2 });
  await memory.create_entities({ entities: [{ name: "x" }] });
  const n: number = (await codemode.search("x")).total.length;
}
main();
`);
    const out = diagnostics(bad);
    assert.match(out, /bad\.ts\(3,\d+\).*Type 'string' is not assignable to type 'number'/);
    assert.match(out, /bad\.ts\(4,\d+\).*Property 'get_summ' does not exist/);
    assert.match(out, /bad\.ts\(5,\d+\).*entityType/);
    assert.match(out, /bad\.ts\(6,\d+\).*Property 'length' does not exist on type 'number'/);
  });
});
