// Dotted connector names (issue 12): connectors named fx.reads and
// fx.writes are reached as fx.reads.method(…) and fx.writes.method(…) in
// both isolation modes; their calls pause, approve and replay (also from a
// second process); `types` declares one fx object that tsc accepts; a name
// that is both a connector and a namespace is a config error.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import {
  tempDir, writeConfig, connectStdio, codemode, callTool, cli, fixtureBin, e2eDir, fixturePair, countEffects,
} from "../lib/helpers.mjs";

const tsc = path.join(e2eDir, "node_modules", "typescript", "bin", "tsc");

function namespaceConfig(dir, isolation) {
  return fixturePair(dir, { reads: "fx.reads", writes: "fx.writes", isolation, extra: "  notes:\n    builtin: notes\n" });
}

const count = countEffects;

const program = `async () => {
  const r = await fx.reads.counter({ name: "read" });
  const w = await fx.writes.counter({ name: "write" });
  return { r, w, members: Object.keys(fx) };
}`;

for (const isolation of ["process", "inprocess"]) {
  describe(`dotted connector names, isolation ${isolation}`, () => {
    test("calls work, pause, approve and replay without repeating the read", async () => {
      const dir = tempDir();
      const { cfg, effects } = namespaceConfig(dir, isolation);
      const client = await connectStdio(cfg);
      try {
        const { tools } = await client.listTools();
        const desc = tools.find((t) => t.name === "codemode").description;
        assert.match(desc, /fx\.reads/);
        const first = await codemode(client, program);
        assert.equal(first.outcome.status, "paused", JSON.stringify(first.outcome));
        assert.deepEqual(first.outcome.pending.map((p) => [p.connector, p.method, p.seq]), [["fx.writes", "counter", 2]]);
        assert.deepEqual(count(effects), { read: 1 });
        const approved = await callTool(client, "codemode_approve", { executionId: first.outcome.executionId });
        assert.equal(approved.outcome.status, "completed", JSON.stringify(approved.outcome));
        assert.deepEqual(approved.outcome.result, { r: 1, w: 1, members: ["reads", "writes"] });
        assert.deepEqual(count(effects), { read: 1, write: 1 });

        const typo = await codemode(client, `await fx.raeds.counter({ name: "x" })`);
        assert.equal(typo.isError, true);
        assert.match(typo.outcome.error, /fx\.raeds is not a connector; did you mean reads\?/);
        assert.deepEqual(count(effects), { read: 1, write: 1 });
      } finally {
        await client.close();
      }
    });

    test("a run paused by one process is approved by another (replay from the log)", () => {
      const dir = tempDir();
      const { cfg, effects } = namespaceConfig(dir, isolation);
      const r = cli(["run", "--config", cfg, "--code", program]);
      const paused = JSON.parse(r.stdout);
      assert.equal(paused.status, "paused", r.stdout + r.stderr);
      assert.deepEqual(count(effects), { read: 1 });
      const a = cli(["approvals", "--config", cfg, "approve", paused.executionId]);
      assert.equal(a.code, 0, a.stdout + a.stderr);
      const done = JSON.parse(a.stdout);
      assert.equal(done.status, "completed", a.stdout);
      assert.deepEqual(done.result.members, ["reads", "writes"]);
      assert.deepEqual(count(effects), { read: 1, write: 1 });
    });
  });
}

describe("dotted connector names: declarations and configuration", () => {
  test("types declares one fx object; tsc --strict accepts it and a program using it, and rejects a wrong call", () => {
    const dir = tempDir();
    const { cfg } = namespaceConfig(dir, "inprocess");
    const r = cli(["types", "--config", cfg]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.match(/declare const fx:/g)?.length, 1, r.stdout);
    assert.match(r.stdout, /declare const fx: \{\n {2}reads: \{\n/);
    assert.match(r.stdout, /declare const codemode: \{/);
    const decl = path.join(dir, "codemode.d.ts");
    writeFileSync(decl, r.stdout);
    const ok = path.join(dir, "ok.ts");
    writeFileSync(ok, `/// <reference path="codemode.d.ts" />
async function main() {
  const r = await fx.reads.get_sum({ a: 1, b: 2 });
  await fx.writes.counter({ name: "x" });
  const hits = await codemode.search("counter");
  return [r, hits.results.map((h) => h.path), await notes.listNotes({})];
}
main();
`);
    const bad = path.join(dir, "bad.ts");
    writeFileSync(bad, `/// <reference path="codemode.d.ts" />
async function main() {
  await fx.reads.get_sum({ a: "one", b: 2 });
  await fx.read.counter({ name: "x" });
}
main();
`);
    const compile = (f) => spawnSync(process.execPath, [tsc, "--strict", "--noEmit", "--lib", "es2022", "--target", "es2022", f], { encoding: "utf8" });
    const good = compile(ok);
    assert.equal(good.status, 0, good.stdout + good.stderr);
    const wrong = compile(bad);
    assert.notEqual(wrong.status, 0);
    assert.match(wrong.stdout, /bad\.ts\(3,\d+\).*Type 'string' is not assignable to type 'number'/);
    assert.match(wrong.stdout, /bad\.ts\(4,\d+\).*Property 'read' does not exist/);

    const ns = cli(["types", "--config", cfg, "fx"]);
    assert.equal(ns.code, 0, ns.stderr);
    assert.match(ns.stdout, /declare const fx: \{/);
    assert.doesNotMatch(ns.stdout, /declare const (notes|codemode)/);
  });

  test("a name that is both a connector and a namespace is a config error naming both", () => {
    const dir = tempDir();
    const cfg = writeConfig(dir, `connectors:\n  fx:\n    builtin: notes\n  fx.reads:\n    command: ${JSON.stringify(fixtureBin)}\n`);
    const r = cli(["check", "--config", cfg]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /:4:3: connectors\["fx\.reads"\]: connector "fx\.reads" clashes with connector "fx" at line 2/);
  });
});
