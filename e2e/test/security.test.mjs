// Issue 13 acceptance, tried from outside as an attacker would: no web page
// can drive the server, secrets stay with their owner, inputs are bounded,
// and approvals can be kept away from the model.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, readdirSync, statSync, existsSync } from "node:fs";
import path from "node:path";
import {
  tempDir, writeConfig, standardConfig, connectStdio, startHTTP, connectHTTP,
  codemode, callTool, cli, bin, fixtureBin, everythingBin, e2eDir,
} from "../lib/helpers.mjs";

// request sends one raw HTTP request (node:http, so that Host and Origin
// are whatever a page's browser would send) and resolves with
// {status, headers, body}; the body is read up to a few KiB (an SSE stream
// is not waited for).
function request(addr, { method = "GET", path: p = "/mcp", headers = {}, body } = {}) {
  const [host, port] = addr.split(":");
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port: Number(port), method, path: p, headers }, (res) => {
      let data = "";
      res.setEncoding("utf8");
      res.on("data", (d) => {
        data += d;
        if (data.length > 4096 || (res.headers["content-type"] ?? "").includes("text/event-stream")) {
          res.destroy();
          resolve({ status: res.statusCode, headers: res.headers, body: data });
        }
      });
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
      res.on("error", () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const evil = "http://evil.example";
const callBody = JSON.stringify({
  jsonrpc: "2.0", id: 7, method: "tools/call",
  params: { name: "codemode", arguments: { code: "await notes.createNote({ text: 'pwned' })" } },
});
const initBody = JSON.stringify({
  jsonrpc: "2.0", id: 1, method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "page", version: "1" } },
});

// executions lists the runs stored in a database (through the CLI).
function executions(configPath) {
  const r = cli(["executions", "--config", configPath, "--limit", "100"]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split("\n").filter((l) => /exec_[0-9a-f]+/.test(l));
}

// vmKiB reads a field (VmRSS, VmHWM) of a process's status, in KiB.
function vmKiB(pid, field) {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`${field}:\\s+(\\d+)`));
  return Number(m[1]);
}

function dbBytes(dir) {
  return readdirSync(dir).filter((f) => f.startsWith("codemode.db")).reduce((n, f) => n + statSync(path.join(dir, f)).size, 0);
}

for (const token of ["", "e2e-token-4f9a1c"]) {
  for (const transport of ["http", "sse"]) {
    describe(`a page-like client against ${transport} ${token ? "with" : "without"} a token`, () => {
      let dir, cfg, server, addr;
      before(async () => {
        dir = tempDir();
        cfg = writeConfig(dir, `
server:
  auth_token: "${token}"
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
approvals:
  elicitation: false
connectors:
  notes:
    builtin: notes
`);
        server = await startHTTP(cfg, transport);
        addr = server.url.host;
      });
      after(async () => server?.stop());

      test("cannot open a stream, send a request or rebind a name, and nothing runs", async () => {
        const post = transport === "sse" ? "/message?sessionId=anything" : "/mcp";
        const attempts = [
          // Reading the SSE stream (and its session id) from a page.
          { method: "GET", path: transport === "sse" ? "/sse" : "/mcp", headers: { Origin: evil, Accept: "text/event-stream" } },
          // A simple POST needs no preflight: text/plain from the page.
          { method: "POST", path: post, headers: { Origin: evil, "Content-Type": "text/plain" }, body: callBody },
          { method: "POST", path: post, headers: { "Content-Type": "text/plain;charset=UTF-8" }, body: callBody },
          { method: "POST", path: post, headers: { Origin: evil, "Content-Type": "application/x-www-form-urlencoded" }, body: callBody },
          // A page that rebinds its own name to 127.0.0.1 sends its own Host.
          { method: "POST", path: post, headers: { Host: `evil.example:${addr.split(":")[1]}`, Origin: evil, "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, body: initBody },
          { method: "POST", path: post, headers: { Host: "evil.example", "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, body: initBody },
          // A preflight from the page is refused too.
          { method: "OPTIONS", path: post, headers: { Origin: evil, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" } },
        ];
        for (const a of attempts) {
          const r = await request(addr, a);
          assert.ok(r.status === 403 || r.status === 415 || r.status === 401, `${a.method} ${a.path} ${JSON.stringify(a.headers)}: ${r.status} ${r.body}`);
          assert.equal(r.headers["access-control-allow-origin"], undefined, `${a.method} ${a.path}: Access-Control-Allow-Origin ${r.headers["access-control-allow-origin"]}`);
        }
        // Even with a session a real client opened, a page gets nowhere.
        const auth = token ? { Authorization: `Bearer ${token}` } : {};
        if (transport === "sse") {
          const stream = await request(addr, { path: "/sse", headers: { Accept: "text/event-stream", ...auth } });
          assert.equal(stream.status, 200);
          assert.equal(stream.headers["access-control-allow-origin"], undefined);
          const session = stream.body.match(/sessionId=([\w-]+)/)?.[1];
          assert.ok(session, stream.body);
          for (const headers of [{ "Content-Type": "text/plain" }, { Origin: evil, "Content-Type": "application/json" }]) {
            const r = await request(addr, { method: "POST", path: `/message?sessionId=${session}`, headers, body: callBody });
            assert.ok([401, 403, 415].includes(r.status), `${JSON.stringify(headers)}: ${r.status}`);
          }
        } else {
          const init = await request(addr, { method: "POST", path: "/mcp", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...auth }, body: initBody });
          assert.equal(init.status, 200, init.body);
          const session = init.headers["mcp-session-id"];
          for (const headers of [{ "Content-Type": "text/plain" }, { Origin: evil, "Content-Type": "application/json", Accept: "application/json, text/event-stream" }]) {
            const r = await request(addr, { method: "POST", path: "/mcp", headers: { ...headers, "Mcp-Session-Id": session }, body: callBody });
            assert.ok([401, 403, 415].includes(r.status), `${JSON.stringify(headers)}: ${r.status}`);
          }
          // A made-up session, and none at all, are refused as the specification says.
          const made = await request(addr, { method: "POST", path: "/mcp", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Session-Id": "mcp-session-0123456789abcdef0123456789abcdef", ...auth }, body: callBody });
          assert.equal(made.status, 404, made.body);
          const none = await request(addr, { method: "POST", path: "/mcp", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...auth }, body: callBody });
          assert.equal(none.status, 400, none.body);
        }
        assert.deepEqual(executions(cfg), [], "a page made the server run a program");
      });

      test("a real client on the same server still works", async () => {
        const opts = token ? { requestInit: { headers: { Authorization: `bearer ${token}` } } } : {};
        const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
        const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
        const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
        const client = new Client({ name: "e2e", version: "1.0.0" });
        const t = transport === "sse" ? new SSEClientTransport(server.url, opts) : new StreamableHTTPClientTransport(server.url, opts);
        await client.connect(t);
        try {
          const { outcome } = await codemode(client, "1 + 1");
          assert.equal(outcome.result, 2, JSON.stringify(outcome));
        } finally {
          await client.close();
        }
      });
    });
  }
}

describe("secrets stay with their owner", () => {
  let dir, cfg, client, fixture, fixtureAddr;
  const qsSecret = "qs-secret-93f1b2c4";
  const envSecret = "env-secret-77aa01";
  before(async () => {
    dir = tempDir();
    // A streamable-HTTP downstream whose URL carries a secret in its query
    // string, and one at a dead address whose error would quote it.
    fixture = spawn(fixtureBin, ["-http", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
    fixtureAddr = await new Promise((resolve, reject) => {
      let err = "";
      fixture.stderr.on("data", (d) => {
        err += d;
        const m = err.match(/listening on (\S+)/);
        if (m) resolve(m[1]);
      });
      fixture.on("exit", (c) => reject(new Error(`fixture exited ${c}: ${err}`)));
    });
    cfg = writeConfig(dir, `
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
approvals:
  elicitation: false
connectors:
  everything:
    command: ${JSON.stringify(everythingBin)}
    env:
      EVERYTHING_API_KEY: "${envSecret}"
  remote:
    url: "http://${fixtureAddr}/mcp?api_key=${qsSecret}"
  dead:
    url: "http://127.0.0.1:1/mcp?api_key=${qsSecret}"
`);
    client = await connectStdio(cfg, { env: { CODEMODE_TOKEN: "codemode-token-5e5e", UNRELATED_SECRET: "unrelated-9d9d" } });
  });
  after(async () => {
    await client?.close();
    fixture?.kill();
  });

  test("a program cannot read CODEMODE_TOKEN or variables the connector was not given", async () => {
    const { outcome, isError } = await codemode(client, "async () => await everything.get_env({})");
    assert.equal(isError, false, JSON.stringify(outcome));
    const env = typeof outcome.result === "string" ? JSON.parse(outcome.result) : outcome.result;
    assert.equal(env.CODEMODE_TOKEN, undefined, "CODEMODE_TOKEN reached the downstream");
    assert.equal(env.UNRELATED_SECRET, undefined, "an unrelated variable reached the downstream");
    assert.ok(env.PATH, "PATH is passed");
    assert.equal(env.EVERYTHING_API_KEY, "[redacted]", "the connector's own secret is scrubbed from what the program sees");
  });

  test("a query-string secret appears nowhere in tools/list, outcomes or the SQLite file", async () => {
    const { tools } = await client.listTools();
    assert.ok(!JSON.stringify(tools).includes(qsSecret), "tools/list holds the secret");
    assert.match(tools.find((t) => t.name === "codemode").description, /dead/);
    const ok = await codemode(client, "async () => await remote.echo({ message: 'hi' })");
    assert.equal(ok.outcome.status, "completed", JSON.stringify(ok.outcome));
    const dead = await codemode(client, "async () => await dead.anything({})");
    assert.equal(dead.isError, true);
    assert.match(dead.outcome.error, /unavailable/);
    for (const o of [ok, dead]) assert.ok(!o.text.includes(qsSecret), o.text);
    const stored = readdirSync(dir).filter((f) => f.startsWith("codemode.db"));
    assert.ok(stored.length > 0);
    for (const f of stored) assert.ok(!readFileSync(path.join(dir, f)).includes(qsSecret), `${f} holds the secret`);
    assert.ok(!client.stderrText().includes(qsSecret), "the server's log holds the secret");
    assert.ok(!client.stderrText().includes(envSecret), "the server's log holds the env secret");
  });
});

describe("bounded inputs", () => {
  let dir, cfg, server;
  before(async () => {
    dir = tempDir();
    cfg = standardConfig(dir);
    server = await startHTTP(cfg, "http");
  });
  after(async () => server?.stop());

  test("a 50 MB POST is refused with 413 and the server stays small", async (t) => {
    const big = Buffer.alloc(50 * 1024 * 1024, "a");
    for (const headers of [{ "Content-Length": String(big.length) }, { "Transfer-Encoding": "chunked" }]) {
      const r = await request(server.url.host, { method: "POST", path: "/mcp", headers: { "Content-Type": "application/json", ...headers }, body: big });
      assert.equal(r.status, 413, r.body);
    }
    const peak = vmKiB(server.proc.pid, "VmHWM");
    t.diagnostic(`server peak RSS after two 50 MB POSTs: ${peak} KiB`);
    assert.ok(peak < 100 * 1024, `server peak RSS ${peak} KiB`);
  });

  test("a program over the code limit leaves no row", async () => {
    const client = await connectHTTP(server.url);
    try {
      const before = executions(cfg).length;
      const { outcome, isError } = await codemode(client, "async () => 1 //" + "x".repeat(1.5 * 1024 * 1024));
      assert.equal(isError, true);
      assert.match(outcome.error, /code is too large/);
      assert.equal(executions(cfg).length, before);
    } finally {
      await client.close();
    }
  });

  test("4 runs busy-waiting on Date.now() keep the server small and the database under 10 MB", async (t) => {
    const client = await connectHTTP(server.url);
    try {
      const busy = "async () => { const end = Date.now() + 2500; let n = 0; while (Date.now() < end) n++; return n }";
      const runs = await Promise.all([1, 2, 3, 4].map(() => codemode(client, busy)));
      for (const { outcome } of runs) {
        // Either done within the cap, or stopped with the clear message.
        if (outcome.status !== "completed") assert.match(outcome.error, /too many clock readings.*codemode\.step/s);
      }
      const peak = vmKiB(server.proc.pid, "VmHWM");
      t.diagnostic(`outcomes: ${runs.map((r) => r.outcome.status).join(", ")}; server peak RSS ${peak} KiB; database ${dbBytes(dir)} bytes`);
      assert.ok(peak < 200 * 1024, `server peak RSS ${peak} KiB`);
      assert.ok(dbBytes(dir) < 10 * 1024 * 1024, `database ${dbBytes(dir)} bytes`);
    } finally {
      await client.close();
    }
  });
});

describe("approvals.tools: false", () => {
  test("tools/list has no approve/reject/rollback, and approval through the CLI works", async () => {
    const dir = tempDir();
    const cfg = writeConfig(dir, `
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
approvals:
  elicitation: false
  tools: false
connectors:
  notes:
    builtin: notes
`);
    const client = await connectStdio(cfg);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      for (const n of ["codemode_approve", "codemode_reject", "codemode_rollback"]) assert.ok(!names.includes(n), `${n} offered: ${names}`);
      assert.ok(names.includes("codemode") && names.includes("codemode_pending"));
      await assert.rejects(callTool(client, "codemode_approve", { executionId: "exec_0" }));
      const { outcome } = await codemode(client, "async () => (await notes.createNote({ text: 'by the CLI' })).text");
      assert.equal(outcome.status, "paused", JSON.stringify(outcome));
      const r = cli(["approvals", "approve", outcome.executionId, "--config", cfg]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).status, "completed", r.stdout);
      assert.equal(JSON.parse(r.stdout).result, "by the CLI");
    } finally {
      await client.close();
    }
  });
});

describe("serve beyond loopback", () => {
  test("refuses to start without a token", () => {
    const dir = tempDir();
    const cfg = writeConfig(dir, `store:\n  path: ${JSON.stringify(path.join(dir, "codemode.db"))}\nconnectors:\n  notes:\n    builtin: notes\n`);
    const r = cli(["serve", "--config", cfg, "--transport", "http", "--addr", "0.0.0.0:0"], { env: { ...process.env, CODEMODE_TOKEN: "" } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /without server\.auth_token/);
    assert.match(r.stderr, /--insecure-no-auth/);
    assert.ok(!existsSync(path.join(dir, "codemode.db")), "it started something before refusing");
  });
});

describe("CODEMODE_TOKEN, as the README's quick start sets it", () => {
  const token = "readme-token-6b2e91d0";
  for (const withConfig of [false, true]) {
    test(`is required ${withConfig ? "with a config file that sets no auth_token" : "without a config file"}`, async () => {
      const dir = tempDir();
      // No codemode.yaml in dir, which is the server's working directory.
      const cfg = withConfig ? writeConfig(dir, "approvals:\n  elicitation: false\nconnectors:\n  notes:\n    builtin: notes\n", "other.yaml") : null;
      const server = await startHTTP(cfg, "http", ["--db", path.join(dir, "codemode.db")], { env: { CODEMODE_TOKEN: token }, cwd: dir });
      try {
        const addr = server.url.host;
        assert.match(server.stderr(), /msg="serving MCP".* auth="bearer token from CODEMODE_TOKEN"/);
        const none = await request(addr, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, body: initBody });
        assert.equal(none.status, 401, none.body);
        assert.match(none.headers["www-authenticate"], /^Bearer .*error_description="this server requires a bearer token/);
        const page = await request(addr, { path: "/" });
        assert.equal(page.status, 401, "the console opens without logging in");
        assert.match(page.body, /name="token"/);
        const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
        const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
        const client = new Client({ name: "e2e", version: "1.0.0" });
        await client.connect(new StreamableHTTPClientTransport(server.url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
        try {
          const { outcome } = await codemode(client, "1 + 1");
          assert.equal(outcome.result, 2, JSON.stringify(outcome));
        } finally {
          await client.close();
        }
      } finally {
        await server.stop();
      }
      assert.ok(!server.stderr().includes(token), "the log shows the token");
    });
  }
});

// claude runs Claude Code's own CLI from npm (it health-checks servers
// with no model and no key) in a home of its own, so that nothing of the
// machine's Claude configuration is read or written.
const claudeBin = path.join(e2eDir, "node_modules", ".bin", "claude");
function claude(home, args) {
  if (!existsSync(claudeBin)) throw new Error(`${claudeBin} is missing: run 'npm ci' in e2e/`);
  const r = spawnSync(claudeBin, args, {
    cwd: home,
    encoding: "utf8",
    timeout: 120000,
    env: {
      PATH: process.env.PATH, HOME: home, CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1", DISABLE_ERROR_REPORTING: "1",
    },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}`, error: r.error };
}

describe("Claude Code against the HTTP transport", () => {
  test("without the header it says a bearer token is required; with it, Connected", async () => {
    const token = "claude-token-0d7c44e1";
    const dir = tempDir();
    const server = await startHTTP(null, "http", ["--db", path.join(dir, "codemode.db")], { env: { CODEMODE_TOKEN: token }, cwd: dir });
    try {
      const home = tempDir();
      const add = claude(home, ["mcp", "add", "--transport", "http", "codemode", server.url.href]);
      assert.equal(add.code, 0, add.out);
      const without = claude(home, ["mcp", "list"]);
      assert.equal(without.error, undefined, without.out);
      assert.match(without.out, /codemode: .*bearer token in the Authorization header/, without.out);
      assert.doesNotMatch(without.out, /<!doctype|<html|Log in/i, without.out);
      assert.doesNotMatch(without.out, /Connected/, without.out);

      assert.equal(claude(home, ["mcp", "remove", "codemode"]).code, 0);
      const addWith = claude(home, ["mcp", "add", "--transport", "http", "codemode", server.url.href, "--header", `Authorization: Bearer ${token}`]);
      assert.equal(addWith.code, 0, addWith.out);
      const withToken = claude(home, ["mcp", "list"]);
      assert.match(withToken.out, /codemode: .*Connected/, withToken.out);
    } finally {
      await server.stop();
    }
  });
});

// The README's other Claude Code set-ups, as a newcomer types them: a
// stdio server added after `--` (its own flags follow), and the legacy
// SSE transport with the bearer token in a header.
describe("Claude Code with the README's stdio and SSE set-ups", () => {
  test("claude mcp add -- codemode-mcp serve --config F: Connected", () => {
    const dir = tempDir();
    const cfg = writeConfig(dir, `store:\n  path: ${JSON.stringify(path.join(dir, "codemode.db"))}\nconnectors:\n  notes:\n    builtin: notes\n`);
    const home = tempDir();
    const add = claude(home, ["mcp", "add", "codemode", "--", bin, "serve", "--config", cfg]);
    assert.equal(add.code, 0, add.out);
    const list = claude(home, ["mcp", "list"]);
    assert.match(list.out, /codemode: .*serve --config .* - ✔ Connected/, list.out);
  });

  test("claude mcp add --transport sse URL --header: Connected; without the header, told a token is required", async () => {
    const token = "claude-sse-token-5a17c3e9";
    const dir = tempDir();
    const server = await startHTTP(null, "sse", ["--db", path.join(dir, "codemode.db")], { env: { CODEMODE_TOKEN: token }, cwd: dir });
    try {
      assert.equal(server.url.pathname, "/sse");
      const home = tempDir();
      assert.equal(claude(home, ["mcp", "add", "--transport", "sse", "without", server.url.href]).code, 0);
      const add = claude(home, ["mcp", "add", "--transport", "sse", "codemode", server.url.href, "--header", `Authorization: Bearer ${token}`]);
      assert.equal(add.code, 0, add.out);
      const list = claude(home, ["mcp", "list"]);
      assert.match(list.out, /codemode: .*\(SSE\) - ✔ Connected/, list.out);
      assert.match(list.out, /without: .*bearer token in the Authorization header/, list.out);
    } finally {
      await server.stop();
    }
    assert.ok(!server.stderr().includes(token), "the log shows the token");
  });
});
