// Issue 2 acceptance, verified from outside as a new user would.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, mkdirSync, statSync, readdirSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import {
  tempDir, standardConfig, writeConfig, connectStdio, startHTTP, connectHTTP,
  codemode, cli, everythingBin, e2eDir,
} from "../lib/helpers.mjs";

describe("stdio", () => {
  let dir, client;
  before(async () => {
    dir = tempDir();
    client = await connectStdio(standardConfig(dir));
  });
  after(async () => client?.close());

  test("lists the codemode tools with honest annotations", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    for (const n of ["codemode", "codemode_approve", "codemode_executions", "codemode_pending", "codemode_reject", "codemode_rollback", "codemode_save_snippet", "codemode_snippets"]) {
      assert.ok(names.includes(n), `missing tool ${n} in ${names}`);
    }
    const cm = tools.find((t) => t.name === "codemode");
    assert.match(cm.description, /- everything \(\d+ methods\)/);
    assert.match(cm.description, /- memory \(\d+ methods\)/);
    assert.match(cm.description, /- notes \(3 methods\)/);
    assert.equal(tools.find((t) => t.name === "codemode_pending").annotations.readOnlyHint, true);
    assert.equal(tools.find((t) => t.name === "codemode_approve").annotations.destructiveHint, true);
  });

  test("calls a real downstream server: everything.get_sum", async () => {
    const { outcome, isError } = await codemode(client, "async () => await everything.get_sum({a: 2, b: 40})");
    assert.equal(isError, false, JSON.stringify(outcome));
    assert.equal(outcome.status, "completed");
    assert.match(outcome.executionId, /^exec_/);
    // server-everything answers in prose: "The sum of 2 and 40 is 42."
    assert.match(String(outcome.result), /\b42\b/);
  });

  // The first program a newcomer reads, at the top of the README, runs
  // as written against notes and everything.
  test("the README's opening example runs", async () => {
    const readme = readFileSync(path.join(e2eDir, "..", "README.md"), "utf8");
    const example = readme.match(/```js\n([\s\S]*?)```/)?.[1];
    assert.ok(example?.includes("notes.listNotes"), `the README's first js block is not the opening example:\n${example}`);
    const { outcome, isError } = await codemode(client, example);
    assert.equal(isError, false, JSON.stringify(outcome));
    assert.equal(outcome.status, "completed", JSON.stringify(outcome));
    assert.equal(typeof outcome.result.open, "number", JSON.stringify(outcome));
    assert.match(String(outcome.result.sum), new RegExp(`\\b${outcome.result.open + 40}\\b`), JSON.stringify(outcome));
  });

  test("typed structured output of server-memory reaches the program as an object", async () => {
    const { outcome, isError } = await codemode(client, `async () => {
      const g = await memory.read_graph({});
      return { type: typeof g, isArray: Array.isArray(g.entities), keys: Object.keys(g).sort() };
    }`);
    assert.equal(isError, false, JSON.stringify(outcome));
    assert.deepEqual(outcome.result, { type: "object", isArray: true, keys: ["entities", "relations"] });
  });

  test("TypeScript, fences and statement lists", async () => {
    const ts = await codemode(client, "```ts\ninterface P { a: number; b: number }\nconst p: P = { a: 1, b: 2 };\nconst total = (p.a + p.b) as number;\ntotal * 2\n```");
    assert.equal(ts.outcome.status, "completed", JSON.stringify(ts.outcome));
    assert.equal(ts.outcome.result, 6);
    const stmts = await codemode(client, "const r = await notes.listNotes({});\nr.notes.length >= 0");
    assert.equal(stmts.outcome.result, true, JSON.stringify(stmts.outcome));
  });

  test("console.log of an object shows JSON", async () => {
    const { outcome } = await codemode(client, "async () => { console.log({a: 1}); return 'ok'; }");
    assert.deepEqual(outcome.logs, ['{"a":1}']);
  });

  test("a thrown error is an isError outcome with its message", async () => {
    const { outcome, isError } = await codemode(client, "async () => { throw new Error('nope, not today'); }");
    assert.equal(isError, true);
    assert.equal(outcome.status, "error");
    assert.match(outcome.error, /nope, not today/);
  });

  test("while(true) is stopped by the timeout and the next call works", async () => {
    const t0 = Date.now();
    const { outcome, isError } = await codemode(client, "async () => { while (true) {} }");
    assert.equal(isError, true);
    assert.match(outcome.error, /timed out/);
    assert.ok(Date.now() - t0 < 30000);
    const next = await codemode(client, "1 + 1");
    assert.equal(next.outcome.result, 2);
  });

  test("a syntax error reports line:col", async () => {
    const { outcome, isError } = await codemode(client, "async () => {\n  const x = 1;\n  const = 2;\n}");
    assert.equal(isError, true);
    assert.match(outcome.error, /3:\d+|line 3/);
  });

  test("require, process and fetch do not exist", async () => {
    const { outcome } = await codemode(client, "[typeof require, typeof process, typeof fetch]");
    assert.deepEqual(outcome.result, ["undefined", "undefined", "undefined"]);
  });

  test("a tool's isError becomes a thrown Error carrying its message", async () => {
    const { outcome } = await codemode(client, `async () => {
      const relations = "not an array"; // made at run time: the check before running leaves it to the call
      try { await memory.create_relations({relations}); return "no error"; }
      catch (e) { return String(e.message || e); }
    }`);
    assert.equal(outcome.status, "completed");
    assert.notEqual(outcome.result, "no error");
  });
});

describe("streamable HTTP and SSE", () => {
  for (const transport of ["http", "sse"]) {
    test(`a real client over ${transport} runs get_sum`, async () => {
      const dir = tempDir();
      const srv = await startHTTP(standardConfig(dir), transport);
      try {
        const client = await connectHTTP(srv.url, transport);
        const { tools } = await client.listTools();
        assert.ok(tools.some((t) => t.name === "codemode"));
        const { outcome } = await codemode(client, "async () => await everything.get_sum({a: 2, b: 40})");
        assert.equal(outcome.status, "completed", JSON.stringify(outcome));
        assert.match(String(outcome.result), /\b42\b/);
        await client.close();
      } finally {
        const code = await srv.stop();
        assert.equal(code, 0, srv.stderr());
      }
      // Graceful shutdown stopped and reaped the downstream servers.
      const left = spawnSync("pgrep", ["-f", everythingBin], { encoding: "utf8" });
      assert.equal(left.stdout.trim(), "", "downstream processes left behind");
    });
  }
});

describe("command line", () => {
  test("run prints the outcome JSON", () => {
    const dir = tempDir();
    const r = cli(["run", "--config", standardConfig(dir), "--code", "async () => await everything.get_sum({a: 2, b: 40})"]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.status, "completed");
    assert.match(String(out.result), /\b42\b/);
  });

  test("run reads a file and exits 1 on a script error", () => {
    const dir = tempDir();
    const f = path.join(dir, "p.ts");
    writeFileSync(f, "const n: number = 1;\nthrow new Error('bad ' + n);\n");
    const r = cli(["run", "--config", standardConfig(dir), f]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(JSON.parse(r.stdout).error, /bad 1/);
  });

  test("types prints declarations for every connector", () => {
    const dir = tempDir();
    const r = cli(["types", "--config", standardConfig(dir)]);
    assert.equal(r.code, 0, r.stderr);
    for (const c of ["notes", "everything", "memory"]) assert.match(r.stdout, new RegExp(`declare const ${c}\\b`));
    assert.match(r.stdout, /get_sum\(/);
  });

  test("the declarations of real servers are valid TypeScript (tsc --strict)", () => {
    const dir = tempDir();
    const r = cli(["types", "--config", standardConfig(dir)]);
    assert.equal(r.code, 0, r.stderr);
    const f = path.join(dir, "codemode.d.ts");
    writeFileSync(f, r.stdout);
    const tsc = path.join(e2eDir, "node_modules", "typescript", "bin", "tsc");
    const t = spawnSync(process.execPath, [tsc, "--strict", "--noEmit", "--lib", "es2022", f], { encoding: "utf8" });
    assert.equal(t.status, 0, t.stdout + t.stderr);
  });

  test("check on a misspelt key exits 2 naming the key and line", () => {
    const dir = tempDir();
    const cfg = writeConfig(dir, `connectors:\n  everything:\n    comand: ${JSON.stringify(everythingBin)}\n`);
    const r = cli(["check", "--config", cfg]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /comand/);
    assert.match(r.stderr, /:3\b/);
  });

  test("a Claude Desktop JSON file works unchanged", () => {
    const dir = tempDir();
    const cfg = path.join(dir, "claude_desktop_config.json");
    writeFileSync(cfg, JSON.stringify({ mcpServers: { everything: { command: everythingBin, args: [] } } }, null, 2));
    const r = cli(["run", "--config", cfg, "--db", path.join(dir, "x.db"), "--code", "async () => await everything.get_sum({a: 1, b: 1})"], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(String(JSON.parse(r.stdout).result), /\b2\b/);
    const c = cli(["check", "--config", cfg, "--db", path.join(dir, "x.db")], { cwd: dir });
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.match(c.stdout, /everything: \d+ tools/);
  });

  // The README's quick start, as written: its first command on no
  // configuration pauses at notes.createNote, and the approvals command it
  // names completes the run.
  test("the README's quick start: run pauses, approvals approve completes", () => {
    const readme = readFileSync(path.join(e2eDir, "..", "README.md"), "utf8");
    const code = readme.match(/^go run \.\/cmd\/codemode-mcp run --code '([^']+)'/m)?.[1];
    assert.ok(code, "the README's quick start has no `go run ./cmd/codemode-mcp run --code '…'` line");
    assert.match(readme, /approve it with\s+`go run \.\/cmd\/codemode-mcp approvals approve <executionId>`/);
    const dir = tempDir();
    const work = path.join(dir, "work");
    mkdirSync(work);
    const env = { ...process.env, XDG_STATE_HOME: path.join(dir, "state"), CODEMODE_CONFIG: "" };
    const r = cli(["run", "--code", code], { cwd: work, env });
    assert.equal(r.code, 0, r.stderr);
    const paused = JSON.parse(r.stdout);
    assert.equal(paused.status, "paused", r.stdout);
    assert.deepEqual(paused.pending.map((p) => `${p.connector}.${p.method}`), ["notes.createNote"], r.stdout);
    const a = cli(["approvals", "approve", paused.executionId], { cwd: work, env });
    assert.equal(a.code, 0, a.stdout + a.stderr);
    const done = JSON.parse(a.stdout);
    assert.equal(done.status, "completed", a.stdout);
    assert.match(done.result.id, /^note_/, a.stdout);
  });

  test("version", () => {
    const r = cli(["version"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^codemode-mcp /);
  });

  test("with no config and no --db, the log goes to the data directory and nothing to the working directory", () => {
    const dir = tempDir();
    const work = path.join(dir, "work");
    mkdirSync(work);
    const env = { ...process.env, XDG_STATE_HOME: path.join(dir, "state"), CODEMODE_CONFIG: "" };
    const r = cli(["run", "--code", "1"], { cwd: work, env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).result, 1);
    const db = path.join(dir, "state", "codemode-mcp", "codemode.db");
    assert.equal(statSync(db).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(db)).mode & 0o777, 0o700);
    assert.deepEqual(readdirSync(work), []);
    const v = cli(["version"], { cwd: work, env });
    assert.equal(v.code, 0, v.stderr);
    assert.ok(v.stdout.includes(`\nlog:    ${db}\n`), v.stdout);
  });
});
