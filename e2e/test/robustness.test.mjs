// Issue 4 acceptance from outside: hostile programs and bad arguments end as
// error outcomes, the next run works, and responses stay small.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { tempDir, standardConfig, connectStdio, codemode, writeConfig, fixtureBin } from "../lib/helpers.mjs";

// rssOfTree sums VmRSS (KiB) of pid and all its descendants.
function rssOfTree(pid) {
  const children = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch {}
  }
  let total = 0;
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop();
    try {
      const m = readFileSync(`/proc/${p}/status`, "utf8").match(/VmRSS:\s+(\d+)/);
      if (m) total += Number(m[1]);
    } catch {}
    stack.push(...(children.get(p) ?? []));
  }
  return total;
}

// childrenOf returns the pids of pid's children whose command line
// contains word.
function childrenOf(pid, word) {
  const out = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== pid) continue;
      if (readFileSync(`/proc/${d}/cmdline`, "utf8").includes(word)) out.push(Number(d));
    } catch {}
  }
  return out;
}

// running reports whether pid is a live process (not gone, not a zombie).
function running(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

// dataLimits returns the hard data-size limit ("unlimited" or bytes) of
// each sandbox worker among pid's children.
function dataLimits(pid) {
  const out = [];
  for (const w of childrenOf(pid, "__sandbox-worker")) {
    try {
      out.push(readFileSync(`/proc/${w}/limits`, "utf8").match(/^Max data size\s+\S+\s+(\S+)/m)[1]);
    } catch {}
  }
  return out;
}

// The same suite with each way of holding workers to their memory limit:
// Linux's own (RLIMIT_DATA) and macOS's (the server samples the workers'
// resident memory), which sandbox.memory_limiter selects here.
for (const [mode, limiter] of [["process isolation, the default", "system"], ["process isolation, macOS's sampling limiter", "sampling"]]) {
describe(`robustness (${mode})`, () => {
  let client, pid;
  before(async () => {
    const dir = tempDir();
    client = await connectStdio(standardConfig(dir, "", `  memory_limiter: ${limiter}`));
    pid = client.transport?.pid;
    assert.ok(pid, "the stdio transport exposes the server's pid");
  });
  after(async () => client?.close());

  test("the workers' data-size rlimit is set only by the default limiter", async () => {
    // A worker sets its own rlimit as it starts, so one the pool has only
    // just started may not have it yet: look again until none is starting.
    const sampling = limiter === "sampling";
    let limits = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setImmediate(r))) {
      limits = dataLimits(pid);
      if (limits.length > 0 && limits.every((l) => (l === "unlimited") === sampling)) break;
    }
    assert.ok(limits.length > 0, "no sandbox workers found");
    for (const l of limits) assert.equal(l === "unlimited", sampling, `limits ${limits}`);
  });

  const hostile = [
    ["memory growth", "async () => { const a = []; while (true) a.push('x'.repeat(1e6)); }", /memory limit exceeded/],
    ["one huge allocation", "async () => 'x'.repeat(2 ** 31)", /memory limit exceeded/],
    ["deep recursion", "async () => { const f = (n) => f(n + 1) + 1; return f(0); }", /call stack/i],
    ["never-settling promise", "async () => { await new Promise(() => {}); }", /timed out/],
    ["reaching the host", "async () => ({}).constructor.constructor('return process')().exit(1)", /process is not defined|ReferenceError/],
  ];
  for (const [name, code, want] of hostile) {
    test(`${name} ends as an error and the next run works`, async () => {
      const { outcome, isError } = await codemode(client, code);
      assert.equal(isError, true, JSON.stringify(outcome));
      assert.match(outcome.error, want);
      const next = await codemode(client, "1 + 1");
      assert.equal(next.outcome.result, 2);
      if (pid) assert.ok(rssOfTree(pid) < 1024 * 1024, `RSS ${rssOfTree(pid)} KiB`);
    });
  }

  test("200,000 console lines and a 5 MB result reach the client under 200 KB with markers", async () => {
    const logs = await codemode(client, "async () => { for (let i = 0; i < 200000; i++) console.log('line ' + i); return 'done'; }");
    assert.ok(logs.text.length < 200_000, `${logs.text.length} chars`);
    assert.equal(logs.outcome.result, "done");
    assert.match(logs.outcome.logs.at(-1), /more log lines truncated/);
    const big = await codemode(client, "async () => Array.from({ length: 50000 }, (_, i) => ({ id: i, text: 'x'.repeat(90) }))");
    assert.ok(big.text.length < 200_000, `${big.text.length} chars`);
    assert.match(big.outcome.result.at(-1), /more items/);
    JSON.parse(big.text);
  });

  test("bad arguments fail before any call, naming the field, type and missing property", async () => {
    const { outcome } = await codemode(client, "async () => await everything.get_sum({ a: 'two' })");
    assert.equal(outcome.status, "error");
    assert.match(outcome.error, /\ba\b/);
    assert.match(outcome.error, /number/);
    assert.match(outcome.error, /\bb\b/);
  });

  test("an unknown method suggests the nearest one", async () => {
    const { outcome } = await codemode(client, "async () => await everything.get_summ({ a: 1, b: 2 })");
    assert.equal(outcome.status, "error");
    assert.match(outcome.error, /get_sum/);
  });
});
}

// Issue 27, item 5, from outside: a stdio server that starts and never
// answers (a first npx download, a proxy, a bug) does not hold serve: it
// answers tools/list and runs a program on the working connector within a
// bounded time, names the slow one in its log, and a program naming it is
// told why it is missing. A downstream dies with the server, also when the
// server is killed with SIGKILL.
describe("a silent downstream", () => {
  let dir, client, started;
  before(async () => {
    dir = tempDir();
    const silent = path.join(dir, "silent.mjs");
    writeFileSync(silent, 'process.stdin.on("data", () => {});\n'); // reads, never writes
    const cfg = writeConfig(dir, `
server:
  start_timeout: 2s
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
approvals:
  elicitation: false
connectors:
  fx:
    command: ${JSON.stringify(fixtureBin)}
    args: ["-linger"]
  slow:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(silent)}]
`);
    started = Date.now();
    client = await connectStdio(cfg);
  });
  after(async () => client?.close());

  test("serve answers with the connectors that are ready, and names the slow one", async () => {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === "codemode"));
    const desc = tools.find((t) => t.name === "codemode").description;
    assert.match(desc, /slow: unavailable \(timed out after 2s initialising\)/);
    const { outcome } = await codemode(client, "async () => await fx.get_sum({ a: 2, b: 3 })");
    assert.equal(outcome.result, 5, JSON.stringify(outcome));
    const took = Date.now() - started;
    assert.ok(took < 30_000, `serve took ${took} ms to answer`);
    assert.match(client.stderrText(), /level=WARN msg="the MCP server has not answered in time; going on without it until it does" connector=slow start_timeout=2s during=initialising/);
  });

  test("a program naming the slow connector is told why it is missing", async () => {
    const { outcome, isError } = await codemode(client, "async () => await slow.anything({})");
    assert.equal(isError, true);
    assert.match(outcome.error, /connector slow is unavailable: timed out after 2s initialising/);
  });

  test("SIGKILL of the server leaves no downstream running", async () => {
    const pid = client.transport.pid;
    const fx = childrenOf(pid, "mcpfixture");
    assert.equal(fx.length, 1, `fixture children of ${pid}: ${fx}`);
    process.kill(pid, "SIGKILL");
    // The fixture runs with -linger: the end of its input does not end it,
    // only the parent-death signal does.
    for (const deadline = Date.now() + 10_000; running(fx[0]) && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(running(fx[0]), false, `the fixture server ${fx[0]} outlived the server`);
  });
});
