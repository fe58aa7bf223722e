// Issue 29 acceptance: a codemode run is an MCP task (2025-11-25) driven
// through the TypeScript SDK's experimental tasks API, against the real
// binary; side effects are counted outside the server (the fixture's
// counter file).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  tempDir, writeConfig, connectStdio, connectHTTP, startHTTP, codemode, cli, fixtureBin, countEffects,
} from "../lib/helpers.mjs";

// taskConfig: `reads` and `writes` are the fixture server, counting into
// one file; writes needs approval for counter. The plain call's timeout is
// long enough for the slow program the first test runs both ways.
function taskConfig(dir, { elicitation = false } = {}) {
  const effects = path.join(dir, "effects.txt");
  const cfg = writeConfig(dir, `
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
sandbox:
  timeout: 60s
  task_timeout: 5m
approvals:
  elicitation: ${elicitation}
connectors:
  reads:
    command: ${JSON.stringify(fixtureBin)}
    env: { FIXTURE_SIDE_EFFECTS: ${JSON.stringify(effects)} }
  writes:
    command: ${JSON.stringify(fixtureBin)}
    env: { FIXTURE_SIDE_EFFECTS: ${JSON.stringify(effects)} }
    approve: ["counter"]
`);
  return { cfg, effects };
}

// streamTask runs a task-augmented codemode call through the SDK's
// callToolStream and collects what it yields: the created task (and how
// long it took to come), the statuses polled, and the final result or
// error. onStatus sees each polled task.
async function streamTask(client, code, onStatus = () => {}) {
  const began = performance.now();
  const out = { statuses: [] };
  const stream = client.experimental.tasks.callToolStream(
    { name: "codemode", arguments: { code } }, CallToolResultSchema, { task: { ttl: 600000 }, timeout: 300000 });
  for await (const m of stream) {
    if (m.type === "taskCreated") {
      out.createdAfter = performance.now() - began;
      out.task = m.task;
    } else if (m.type === "taskStatus") {
      out.statuses.push(m.task.status);
      await onStatus(m.task);
    } else if (m.type === "result") {
      out.result = m.result;
    } else if (m.type === "error") {
      out.error = m.error;
    }
  }
  return out;
}

function withoutID(outcome) {
  const { executionId, ...rest } = outcome;
  return rest;
}

describe("long runs as tasks", () => {
  test("a task-augmented call of a 30-second program returns its task at once; working, then completed, with the plain call's outcome", async (t) => {
    const dir = tempDir();
    const { cfg } = taskConfig(dir);
    const client = await connectStdio(cfg);
    try {
      const tools = await client.listTools();
      assert.equal(tools.tools.find((x) => x.name === "codemode").execution?.taskSupport, "optional");
      const code = `async () => { await new Promise(r => setTimeout(r, 30000)); console.log("slept"); return { slept: 30 }; }`;
      // The plain call and the task run side by side: 30 seconds, once.
      const [plain, task] = await Promise.all([codemode(client, code), streamTask(client, code)]);
      t.diagnostic(`task created after ${task.createdAfter.toFixed(1)} ms`);
      assert.ok(task.createdAfter < 100, `the task came after ${task.createdAfter} ms`);
      assert.equal(task.task.status, "working");
      assert.equal(task.error, undefined, String(task.error));
      assert.equal(task.statuses[0], "working");
      assert.equal(task.statuses.at(-1), "completed");
      assert.deepEqual(withoutID(task.result.structuredContent), withoutID(plain.outcome));
      assert.equal(task.result.structuredContent.executionId, task.task.taskId);
      assert.equal(task.result._meta["io.modelcontextprotocol/related-task"].taskId, task.task.taskId);
      const listed = await client.experimental.tasks.listTasks();
      assert.deepEqual(listed.tasks.map((x) => [x.taskId, x.status]), [[task.task.taskId, "completed"]]);
    } finally {
      await client.close();
    }
  });

  test("a program that needs approval is input_required; approving it through the CLI completes the task, with its side effect once", async () => {
    const dir = tempDir();
    const { cfg, effects } = taskConfig(dir);
    const client = await connectStdio(cfg);
    try {
      let approved;
      const code = `async () => { const r = await reads.counter({ name: "read" }); const w = await writes.counter({ name: "write" }); return { r, w }; }`;
      // When the task needs input the SDK calls tasks/result, which waits
      // until the task ends: the CLI approves it as the stream sees the
      // pause.
      const task = await streamTask(client, code, async (polled) => {
        if (polled.status !== "input_required" || approved) return;
        assert.match(polled.statusMessage, /call 2 awaits approval: writes\.counter\(\{"name":"write"\}\)/);
        assert.deepEqual(countEffects(effects), { read: 1 }, "nothing written before the approval");
        approved = cli(["approvals", "approve", polled.taskId, "--config", cfg]);
      });
      assert.ok(approved, `the stream never saw input_required: ${task.statuses.join()}`);
      assert.equal(approved.code, 0, approved.stderr);
      assert.equal(task.error, undefined, String(task.error));
      assert.deepEqual(task.result.structuredContent.result, { r: 1, w: 1 });
      assert.equal((await client.experimental.tasks.getTask(task.task.taskId)).status, "completed");
      assert.deepEqual(countEffects(effects), { read: 1, write: 1 });
    } finally {
      await client.close();
    }
  });

  test("tasks/cancel ends a working task cancelled, and no call starts afterwards", async () => {
    const dir = tempDir();
    const { cfg, effects } = taskConfig(dir);
    const client = await connectStdio(cfg);
    try {
      const code = `async () => { for (;;) { await reads.counter({ name: "loop" }); await new Promise(r => setTimeout(r, 100)); } }`;
      const stream = client.experimental.tasks.callToolStream({ name: "codemode", arguments: { code } }, CallToolResultSchema, { task: {} });
      const first = await stream.next();
      assert.equal(first.value.type, "taskCreated");
      const id = first.value.task.taskId;
      while (!(countEffects(effects).loop >= 2)) await new Promise((r) => setTimeout(r, 50)); // it runs
      const cancelled = await client.experimental.tasks.cancelTask(id);
      assert.equal(cancelled.status, "cancelled");
      const calls = countEffects(effects).loop;
      await new Promise((r) => setTimeout(r, 1000)); // ten of its loop's turns
      assert.equal(countEffects(effects).loop, calls, "a call started after the cancellation");
      assert.equal((await client.experimental.tasks.getTask(id)).status, "cancelled");
      await assert.rejects(client.experimental.tasks.cancelTask(id), /terminal status 'cancelled'/);
      await stream.return();
      const shown = cli(["executions", "show", id, "--config", cfg]);
      assert.equal(JSON.parse(shown.stdout).status, "cancelled", shown.stdout);
    } finally {
      await client.close();
    }
  });

  test("over streamable HTTP the SDK's elicitation answers an input_required task", async () => {
    const dir = tempDir();
    const { cfg, effects } = taskConfig(dir, { elicitation: true });
    const srv = await startHTTP(cfg);
    const client = await connectHTTP(srv.url, "http", { elicitation: {} });
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return { action: "accept", content: {} };
    });
    try {
      const task = await streamTask(client, `async () => (await writes.counter({ name: "write" }))`);
      assert.equal(task.error, undefined, String(task.error));
      assert.ok(task.statuses.includes("input_required"), task.statuses.join());
      assert.equal(task.result.structuredContent.status, "completed");
      assert.equal(asked.length, 1);
      assert.match(asked[0].message, new RegExp(`Approve writes\\.counter \\(execution ${task.task.taskId}, call 1\\)\\?`));
      assert.equal(asked[0]._meta["io.modelcontextprotocol/related-task"].taskId, task.task.taskId);
      assert.deepEqual(countEffects(effects), { write: 1 });
    } finally {
      await client.close();
      await srv.stop();
    }
  });
});
