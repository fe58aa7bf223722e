// Issue 3 acceptance: the durable runtime verified from outside with real
// servers; side effects are counted outside the server (the fixture's
// counter file, server-memory's data file).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import { spawn } from "node:child_process";
import path from "node:path";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  tempDir, writeConfig, standardConfig, connectStdio, codemode, callTool, cli, bin, fixtureBin,
  fixturePair, countEffects,
} from "../lib/helpers.mjs";

// fixtureConfig: `reads` and `writes` are the same fixture server; writes
// needs approval for counter. Both count into one file.
function fixtureConfig(dir, extra = "") {
  return fixturePair(dir, { elicitation: extra.includes("elicitation") });
}

const count = countEffects;

const readThenWrite = `async () => {
  const r = await reads.counter({ name: "read" });
  const w = await writes.counter({ name: "write" });
  return { r, w };
}`;

describe("approvals", () => {
  test("a gated call pauses before any side effect; approve runs it exactly once without re-running reads", async () => {
    const dir = tempDir();
    const { cfg, effects } = fixtureConfig(dir);
    const client = await connectStdio(cfg);
    try {
      const first = await codemode(client, readThenWrite);
      assert.equal(first.outcome.status, "paused", JSON.stringify(first.outcome));
      assert.deepEqual(count(effects), { read: 1 }, "the write must not have happened");
      const id = first.outcome.executionId;
      assert.deepEqual(first.outcome.pending.map((p) => [p.connector, p.method, p.seq]), [["writes", "counter", 2]]);

      const pending = await callTool(client, "codemode_pending", {});
      assert.deepEqual(pending.outcome.pending.map((p) => p.executionId), [id]);

      const approved = await callTool(client, "codemode_approve", { executionId: id });
      assert.equal(approved.outcome.status, "completed", JSON.stringify(approved.outcome));
      assert.deepEqual(approved.outcome.result, { r: 1, w: 1 });
      assert.deepEqual(count(effects), { read: 1, write: 1 });

      const again = await callTool(client, "codemode_approve", { executionId: id });
      assert.equal(again.isError, true);
      assert.match(again.outcome.error, /completed/);
      assert.deepEqual(count(effects), { read: 1, write: 1 });
    } finally {
      await client.close();
    }
  });

  test("reject ends the run with nothing applied; approving afterwards is an error", async () => {
    const dir = tempDir();
    const { cfg, effects } = fixtureConfig(dir);
    const client = await connectStdio(cfg);
    try {
      const first = await codemode(client, `await writes.counter({ name: "write" })`);
      const id = first.outcome.executionId;
      const rejected = await callTool(client, "codemode_reject", { executionId: id });
      assert.equal(rejected.outcome.status, "rejected");
      const approve = await callTool(client, "codemode_approve", { executionId: id });
      assert.equal(approve.isError, true);
      assert.deepEqual(count(effects), {});
    } finally {
      await client.close();
    }
  });

  test("code that catches the pause and calls on still pauses with one pending action and causes nothing", async () => {
    const dir = tempDir();
    const { cfg, effects } = fixtureConfig(dir);
    const client = await connectStdio(cfg);
    try {
      const { outcome } = await codemode(client, `async () => {
        try { await writes.counter({ name: "write" }); } catch (e) {}
        try { await writes.counter({ name: "write2" }); } catch (e) {}
        await reads.counter({ name: "after" });
        return "escaped";
      }`);
      assert.equal(outcome.status, "paused");
      assert.equal(outcome.pending.length, 1);
      assert.deepEqual(count(effects), {});
      const p = await callTool(client, "codemode_pending", { executionId: outcome.executionId });
      assert.equal(p.outcome.pending.length, 1);
    } finally {
      await client.close();
    }
  });

  test("Math.random() and Date.now() before a paused call replay: approve completes without divergence", async () => {
    const dir = tempDir();
    const { cfg, effects } = fixtureConfig(dir);
    const client = await connectStdio(cfg);
    try {
      const { outcome } = await codemode(client, `async () => {
        const r = Math.random(), t = Date.now(), d = new Date().toISOString();
        await writes.counter({ name: "w-" + Math.floor(r * 1e9) + "-" + t });
        return { r, t, d };
      }`);
      assert.equal(outcome.status, "paused");
      await new Promise((res) => setTimeout(res, 20));
      const approved = await callTool(client, "codemode_approve", { executionId: outcome.executionId });
      assert.equal(approved.outcome.status, "completed", JSON.stringify(approved.outcome));
      const { r, t } = approved.outcome.result;
      assert.deepEqual(count(effects), { [`w-${Math.floor(r * 1e9)}-${t}`]: 1 });
    } finally {
      await client.close();
    }
  });

  test("Promise.all of two calls before a paused call: after approve each ran once", async () => {
    const dir = tempDir();
    const { cfg, effects } = fixtureConfig(dir);
    const client = await connectStdio(cfg);
    try {
      const { outcome } = await codemode(client, `async () => {
        const [a, b] = await Promise.all([reads.counter({ name: "a" }), reads.counter({ name: "b" })]);
        await writes.counter({ name: "w" });
        return a + b;
      }`);
      assert.equal(outcome.status, "paused");
      const approved = await callTool(client, "codemode_approve", { executionId: outcome.executionId });
      assert.equal(approved.outcome.status, "completed", JSON.stringify(approved.outcome));
      assert.equal(approved.outcome.result, 2);
      assert.deepEqual(count(effects), { a: 1, b: 1, w: 1 });
    } finally {
      await client.close();
    }
  });
});

describe("server-memory with a configured revert", () => {
  test("approve: [create_*] pauses create_entities; approve applies it; rollback removes it", async () => {
    const dir = tempDir();
    const client = await connectStdio(standardConfig(dir));
    const memFile = path.join(dir, "memory.jsonl");
    const stored = () => (existsSync(memFile) ? readFileSync(memFile, "utf8") : "");
    try {
      const { outcome } = await codemode(client, `async () => {
        const res = await memory.create_entities({ entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }] });
        return res;
      }`);
      assert.equal(outcome.status, "paused", JSON.stringify(outcome));
      assert.equal(outcome.pending[0].method, "create_entities");
      assert.doesNotMatch(stored(), /Ada/);
      const approved = await callTool(client, "codemode_approve", { executionId: outcome.executionId });
      assert.equal(approved.outcome.status, "completed", JSON.stringify(approved.outcome));
      assert.match(stored(), /Ada/);
      const rb = await callTool(client, "codemode_rollback", { executionId: outcome.executionId });
      assert.equal(rb.outcome.status, "rolled_back", JSON.stringify(rb.outcome));
      assert.deepEqual(rb.outcome.reverted, [1]);
      assert.doesNotMatch(stored(), /Ada/);
      const graph = await codemode(client, "(await memory.read_graph({})).entities.length");
      assert.equal(graph.outcome.result, 0);
    } finally {
      await client.close();
    }
  });

  test("rollback deletes what the call created, not an entity that existed before it", async () => {
    const dir = tempDir();
    const client = await connectStdio(standardConfig(dir));
    const names = async () => (await codemode(client, "(await memory.read_graph({})).entities.map(e => e.name).sort()")).outcome.result;
    try {
      const first = await codemode(client, `async () => memory.create_entities({ entities: [{ name: "Ada", entityType: "person", observations: [] }] })`);
      await callTool(client, "codemode_approve", { executionId: first.outcome.executionId });
      const { outcome } = await codemode(client, `async () => memory.create_entities({ entities: [
        { name: "Ada", entityType: "person", observations: [] }, { name: "Bob", entityType: "person", observations: [] }] })`);
      const approved = await callTool(client, "codemode_approve", { executionId: outcome.executionId });
      assert.deepEqual(approved.outcome.result.entities.map((e) => e.name), ["Bob"], JSON.stringify(approved.outcome));
      assert.deepEqual(await names(), ["Ada", "Bob"]);
      const rb = await callTool(client, "codemode_rollback", { executionId: outcome.executionId });
      assert.equal(rb.outcome.status, "rolled_back", JSON.stringify(rb.outcome));
      assert.deepEqual(await names(), ["Ada"], "the rollback deleted an entity the call did not create");
    } finally {
      await client.close();
    }
  });
});

describe("restarts and other surfaces", () => {
  test("kill -9 while paused: a new server on the same file lists and approves; effects happen once", async () => {
    const dir = tempDir();
    const { cfg, effects } = fixtureConfig(dir);
    // A raw stdio session we can SIGKILL.
    const proc = spawn(bin, ["serve", "--config", cfg], { stdio: ["pipe", "pipe", "pipe"] });
    const lines = [];
    let buf = "";
    proc.stdout.on("data", (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) { lines.push(JSON.parse(buf.slice(0, i))); buf = buf.slice(i + 1); }
    });
    const send = (m) => proc.stdin.write(JSON.stringify(m) + "\n");
    const waitFor = async (id) => {
      for (let i = 0; i < 600; i++) {
        const m = lines.find((l) => l.id === id);
        if (m) return m;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no response ${id}`);
    };
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "k", version: "1" } } });
    await waitFor(1);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "codemode", arguments: { code: readThenWrite } } });
    const paused = (await waitFor(2)).result.structuredContent;
    assert.equal(paused.status, "paused");
    const exited = new Promise((r) => proc.on("exit", r));
    proc.kill("SIGKILL");
    await exited;
    assert.deepEqual(count(effects), { read: 1 });

    // The CLI sees the paused run in the same database...
    const list = cli(["approvals", "list", "--config", cfg]);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(JSON.parse(list.stdout).pending.map((p) => p.executionId), [paused.executionId]);
    // ...and a new server approves it.
    const client = await connectStdio(cfg);
    try {
      const pending = await callTool(client, "codemode_pending", {});
      assert.equal(pending.outcome.pending.length, 1);
      const approved = await callTool(client, "codemode_approve", { executionId: paused.executionId });
      assert.equal(approved.outcome.status, "completed", JSON.stringify(approved.outcome));
      assert.deepEqual(count(effects), { read: 1, write: 1 });
    } finally {
      await client.close();
    }
  });

  test("the approvals CLI approves a run while a server is running on the same file", async () => {
    const dir = tempDir();
    const { cfg, effects } = fixtureConfig(dir);
    const client = await connectStdio(cfg);
    try {
      const { outcome } = await codemode(client, readThenWrite);
      const r = cli(["approvals", "approve", outcome.executionId, "--config", cfg]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).status, "completed");
      const ex = await callTool(client, "codemode_executions", { limit: 1 });
      assert.equal(ex.outcome.executions[0].status, "completed");
      assert.deepEqual(ex.outcome.executions[0].calls.map((c) => c.state), ["applied", "applied"]);
      assert.deepEqual(count(effects), { read: 1, write: 1 });
      const shown = cli(["executions", "show", outcome.executionId, "--config", cfg]);
      assert.equal(shown.code, 0, shown.stderr);
      assert.equal(JSON.parse(shown.stdout).calls.length, 2);
    } finally {
      await client.close();
    }
  });

  test("a snippet saved from a completed run runs via codemode.run and is found by codemode.search", async () => {
    const dir = tempDir();
    const { cfg, effects } = fixtureConfig(dir);
    const client = await connectStdio(cfg);
    try {
      const done = await codemode(client, `async (input) => await reads.counter({ name: (input && input.name) || "snip" })`);
      assert.equal(done.outcome.status, "completed", JSON.stringify(done.outcome));
      const saved = await callTool(client, "codemode_save_snippet", {
        name: "count_name", executionId: done.outcome.executionId, description: "count a name in the side-effect file",
      });
      assert.equal(saved.isError, false, JSON.stringify(saved.outcome));
      const run = await codemode(client, `async () => {
        const found = await codemode.search("count name side-effect");
        const n = await codemode.run("count_name", { name: "via-snippet" });
        return { paths: found.results.map(r => r.path), n };
      }`);
      assert.equal(run.outcome.status, "completed", JSON.stringify(run.outcome));
      assert.ok(run.outcome.result.paths.some((p) => p.includes("count_name")), JSON.stringify(run.outcome.result));
      assert.equal(run.outcome.result.n, 1);
      assert.equal(count(effects)["via-snippet"], 1);
    } finally {
      await client.close();
    }
  });

  test("an elicitation-capable client that accepts completes the gated call in one codemode call", async () => {
    const dir = tempDir();
    const { cfg, effects } = fixtureConfig(dir, "elicitation");
    const client = await connectStdio(cfg, { capabilities: { elicitation: {} } });
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return { action: "accept", content: {} };
    });
    try {
      const { outcome } = await codemode(client, readThenWrite);
      assert.equal(outcome.status, "completed", JSON.stringify(outcome));
      assert.equal(asked.length, 1);
      assert.match(asked[0], /writes\.counter/);
      assert.match(asked[0], /"write"/);
      assert.deepEqual(count(effects), { read: 1, write: 1 });
    } finally {
      await client.close();
    }
  });
});
