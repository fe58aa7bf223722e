// sandbox.typecheck: tsc, from outside: with TypeScript's tsc on PATH (the
// suite's own), a program with a type error the check before running
// cannot see is refused with line:col in the model's code, and nothing
// runs; a correct program runs. A program that names a TypeScript file of
// the server's (an import type, an import declaration, a reference
// directive) is refused without the checker reading it: its contents
// appear nowhere.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { chmodSync, writeFileSync } from "node:fs";
import { tempDir, writeConfig, connectStdio, codemode, cli, e2eDir, everythingBin } from "../lib/helpers.mjs";

const binDir = path.join(e2eDir, "node_modules", ".bin");
// The suite's own tsc first on PATH.
const env = { PATH: `${binDir}${path.delimiter}${process.env.PATH}` };

// typecheckConfig writes a configuration with sandbox.typecheck: tsc, the
// notes connector and the connectors of extra (YAML), and returns its path.
function typecheckConfig(dir, extra = "") {
  return writeConfig(dir, `
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
sandbox:
  typecheck: tsc
approvals:
  elicitation: false
connectors:
  notes:
    builtin: notes
${extra}`);
}

test("sandbox.typecheck: tsc refuses a program with type errors before it runs", async () => {
  const dir = tempDir();
  const cfg = typecheckConfig(dir, `  everything:
    command: ${JSON.stringify(everythingBin)}
`);
  const client = await connectStdio(cfg, { env });
  try {
    const bad = await codemode(client, `async () => {
  const r = await notes.listNotes({});
  return r.notes.map((n) => n.txt);
}`);
    assert.equal(bad.outcome.status, "error", JSON.stringify(bad.outcome));
    assert.match(bad.outcome.error, /type error.*nothing was run/);
    assert.match(bad.outcome.error, /line 3:\d+: Property 'txt' does not exist/);
    assert.ok(!bad.outcome.executionId, "no execution is stored");

    const good = await codemode(client, "```ts\nconst r = await notes.listNotes({});\nconst n: number = r.notes.length;\nreturn n;\n```");
    assert.equal(good.outcome.status, "completed", JSON.stringify(good.outcome));
    assert.equal(good.outcome.result, 0);
  } finally {
    await client.close();
  }

  // Without a checker on PATH the server does not start: the setting asks
  // for one.
  const r = cli(["run", "--config", cfg, "--code", "1"], { env: { ...process.env, PATH: "/nonexistent" } });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr + r.stdout, /sandbox\.typecheck is tsc, but neither tsgo nor tsc is on PATH/);
});

test("sandbox.typecheck: tsc reads no file of the server's", async () => {
  const dir = tempDir();
  // A file any user may read, so that only the checker's confinement
  // keeps it out (not its permissions).
  const secretDir = tempDir();
  chmodSync(secretDir, 0o755);
  const secret = "SECRET-" + randomBytes(8).toString("hex");
  const module = path.join(secretDir, "secret");
  writeFileSync(`${module}.ts`, `export const key = { value: "${secret}" } as const;\nexport declare const typed: "${secret}";\n`, { mode: 0o644 });
  const cfg = typecheckConfig(dir);
  const client = await connectStdio(cfg, { env });
  try {
    for (const code of [
      `const a: number = (null as any as typeof import(${JSON.stringify(module)})).key;\nreturn a;`,
      `const a: number = (null as any as typeof import(${JSON.stringify(module + ".ts")})).typed;\nreturn a;`,
      `import type { key } from ${JSON.stringify(module)};\nconst a: number = (null as any as typeof key);\nreturn a;`,
      `/// <reference path=${JSON.stringify(module + ".ts")} />\nconst a: number = key;\nreturn a;`,
    ]) {
      const r = await codemode(client, code);
      const said = JSON.stringify(r.outcome);
      assert.ok(!said.includes(secret), `the outcome shows the server's file: ${said}`);
      assert.equal(r.outcome.status, "error", said);
      assert.match(r.outcome.error, /type error.*nothing was run/, said);
      assert.ok(!r.outcome.executionId, "no execution is stored");
    }
  } finally {
    await client.close();
  }
});
