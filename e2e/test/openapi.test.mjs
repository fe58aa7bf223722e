// OpenAPI connectors, verified from outside as a new user would: real
// documents (every @readme/oas-examples document, GitHub's from
// @octokit/openapi) through `codemode-mcp types` and tsc --strict,
// Petstore against a live local API driven by a real MCP client, and the
// rules an attacker would try: base_url's pin against a server written
// //other-host, request() against approval and exclusion.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import {
  tempDir, writeConfig, connectStdio, codemode, callTool, cli, e2eDir,
} from "../lib/helpers.mjs";

const examplesDir = path.join(e2eDir, "node_modules", "@readme", "oas-examples");
const githubDoc = path.join(e2eDir, "node_modules", "@octokit", "openapi", "generated", "api.github.com.json");
const repoTestdata = path.resolve(e2eDir, "..", "connectors", "openapi", "testdata");
const tsc = path.join(e2eDir, "node_modules", "typescript", "bin", "tsc");
for (const p of [examplesDir, githubDoc, tsc]) {
  if (!existsSync(p)) throw new Error(`${p} is missing: run 'npm ci' in e2e/`);
}

// documents lists the OpenAPI documents under dir (JSON and YAML).
function documents(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...documents(p));
    else if (/\.(json|ya?ml)$/.test(e.name)) out.push(p);
  }
  return out.sort();
}

// compile checks a declarations file with tsc --strict.
function compile(file) {
  const t = spawnSync(process.execPath, [tsc, "--strict", "--noEmit", "--lib", "es2022", file], { encoding: "utf8", maxBuffer: 64 << 20 });
  assert.equal(t.status, 0, `tsc --strict ${file}:\n${(t.stdout + t.stderr).slice(0, 4000)}`);
}

// typesOf runs `codemode-mcp types` on a config and writes the result.
function typesOf(dir, cfg, connector) {
  const r = cli(["types", "--config", cfg, ...(connector ? [connector] : [])], { maxBuffer: 64 << 20 });
  assert.equal(r.code, 0, r.stderr);
  const f = path.join(dir, `${connector ?? "all"}.d.ts`);
  writeFileSync(f, r.stdout);
  return { file: f, text: r.stdout };
}

describe("OpenAPI documents derive and compile", () => {
  test("every @readme/oas-examples document (2.0, 3.0, 3.1; JSON and YAML) and the repository's test documents", () => {
    const docs = [
      ...["2.0", "3.0", "3.1"].flatMap((v) => documents(path.join(examplesDir, v))),
      ...documents(repoTestdata).filter((p) => !p.endsWith(".derived.txt")),
    ];
    assert.ok(docs.length >= 120, `only ${docs.length} documents found`);
    const dir = tempDir();
    // One connector per document, in one file: one `types` and one tsc run
    // check them all (and that type names stay unique across connectors).
    const entries = docs.map((d, i) => `  doc${i}:\n    openapi: ${JSON.stringify(d)}\n`).join("");
    const cfg = writeConfig(dir, `store:\n  path: ${JSON.stringify(path.join(dir, "c.db"))}\n  cache_dir: ${JSON.stringify(path.join(dir, "cache"))}\nconnectors:\n${entries}`);
    const check = cli(["check", "--config", cfg], { maxBuffer: 64 << 20 });
    assert.equal(check.code, 0, check.stdout + check.stderr);
    const derived = check.stdout.split("\n").filter((l) => /^✓ doc\d+: \d+ tools/.test(l));
    assert.equal(derived.length, docs.length, check.stdout);
    const { file, text } = typesOf(dir, cfg);
    for (let i = 0; i < docs.length; i++) assert.match(text, new RegExp(`declare const doc${i}: \\{`), docs[i]);
    compile(file);
  });

  test("GitHub's document: at least 1,100 methods with named output types, valid under tsc --strict", () => {
    const dir = tempDir();
    const cfg = writeConfig(dir, `store:\n  path: ${JSON.stringify(path.join(dir, "c.db"))}\n  cache_dir: ${JSON.stringify(path.join(dir, "cache"))}\nconnectors:\n  github:\n    openapi: ${JSON.stringify(githubDoc)}\n    auth: { bearer: "\${GH_TEST_TOKEN}" }\n`);
    const env = { ...process.env, GH_TEST_TOKEN: "ghp_e2eSecretTokenValue123" };
    const started = Date.now();
    const r = cli(["types", "--config", cfg, "github"], { env, maxBuffer: 64 << 20 });
    const cold = Date.now() - started;
    assert.equal(r.code, 0, r.stderr);
    const decl = r.stdout;
    const body = decl.slice(decl.indexOf("declare const github: {"));
    const methods = body.match(/^ {2}[A-Za-z_$][\w$]*\(input: /gm) ?? [];
    assert.ok(methods.length >= 1100, `${methods.length} methods`);
    assert.match(body, /issues_list_for_repo\(input: GithubIssuesListForRepoInput\): Promise<GithubIssuesListForRepoOutput>;/);
    assert.match(decl, /type GithubIssuesListForRepoOutput = GithubIssue\[\];/);
    assert.match(decl, /type GithubIssue = \{/);
    assert.match(decl, /type GithubSimpleUser = \{/);
    assert.ok(!decl.includes("ghp_e2eSecretTokenValue123"), "the token is in the declarations");
    const f = path.join(dir, "github.d.ts");
    writeFileSync(f, decl);
    compile(f);
    // A second start takes the derived methods from the cache.
    const again = Date.now();
    const r2 = cli(["types", "--config", cfg, "github"], { env, maxBuffer: 64 << 20 });
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal(r2.stdout, decl);
    console.log(`# GitHub types: cold ${cold} ms, from the cache ${Date.now() - again} ms (whole command, types included)`);
  });
});

// petServer is a live Petstore (the @readme/oas-examples 3.0 document's
// API) on 127.0.0.1 that records every request and requires the api_key
// header on every request.
function petServer(key) {
  const requests = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      requests.push({ method: req.method, url: req.url, apiKey: req.headers["api_key"], contentType: req.headers["content-type"], body });
      const send = (status, value) => {
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(JSON.stringify(value));
      };
      if (req.headers["api_key"] !== key) return send(401, { code: 401, type: "error", message: "missing api_key" });
      const u = new URL(req.url, "http://x");
      if (req.method === "GET" && u.pathname === "/v2/pet/findByStatus") {
        return send(200, u.searchParams.getAll("status").map((s, i) => ({ id: i + 1, name: `pet${i + 1}`, status: s, photoUrls: [] })));
      }
      if (req.method === "GET" && u.pathname === "/v2/pet/404") return send(404, { code: 1, type: "error", message: "Pet not found" });
      if (req.method === "GET" && u.pathname.startsWith("/v2/pet/")) {
        return send(200, { id: Number(u.pathname.split("/").pop()), name: "Rex", photoUrls: [], status: "available" });
      }
      if (req.method === "POST" && u.pathname === "/v2/pet") return send(200, { ...JSON.parse(body), id: 77 });
      if (req.method === "GET" && u.pathname === "/v2/store/inventory") return send(200, { available: 3, echoedKey: req.headers["api_key"] });
      send(404, { code: 404, type: "error", message: "no route" });
    });
  });
  return {
    requests,
    listen: () => new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port))),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe("Petstore against a live API, through a real MCP client", () => {
  const key = "petstore-key-7d1e5b";
  const api = petServer(key);
  let client, dir, db;
  before(async () => {
    const port = await api.listen();
    dir = tempDir();
    db = path.join(dir, "codemode.db");
    const cfg = writeConfig(dir, `
store:
  path: ${JSON.stringify(db)}
  cache_dir: ${JSON.stringify(path.join(dir, "cache"))}
approvals:
  elicitation: false
connectors:
  petstore:
    openapi: ${JSON.stringify(path.join(examplesDir, "3.0", "json", "petstore.json"))}
    base_url: http://127.0.0.1:${port}/v2
    auth: { api_key: { in: header, name: api_key, value: "\${PETSTORE_KEY}" } }
`);
    client = await connectStdio(cfg, { env: { PETSTORE_KEY: key } });
  });
  after(async () => {
    await client?.close();
    await api.close();
  });

  const seen = [];
  async function run(code) {
    const r = await codemode(client, code);
    seen.push(r.text);
    return r;
  }

  test("query arrays and path parameters reach the API with the api_key header", async () => {
    const r = await run(`async () => {
      const pets = await petstore.findPetsByStatus({ status: ["available", "pending"] });
      const one = await petstore.getPetById({ petId: 12 });
      return [pets.map(p => p.status), one.id];
    }`);
    assert.equal(r.outcome.status, "completed", r.text);
    assert.deepEqual(r.outcome.result, [["available", "pending"], 12]);
    const urls = api.requests.map((q) => `${q.method} ${q.url}`);
    assert.deepEqual(urls, ["GET /v2/pet/findByStatus?status=available&status=pending", "GET /v2/pet/12"]);
    assert.ok(api.requests.every((q) => q.apiKey === key));
  });

  test("a POST pauses, and after approval sends its JSON body", async () => {
    const r = await run(`async () => (await petstore.addPet({ body: { name: "Kit", photoUrls: ["https://x/kit.png"], status: "available" } })).id`);
    assert.equal(r.outcome.status, "paused", r.text);
    assert.equal(r.outcome.pending[0].method, "addPet");
    assert.ok(!api.requests.some((q) => q.method === "POST"), "the POST was sent before approval");
    const a = await callTool(client, "codemode_approve", { executionId: r.outcome.executionId });
    seen.push(a.text);
    assert.equal(a.outcome.status, "completed", a.text);
    assert.equal(a.outcome.result, 77);
    const post = api.requests.filter((q) => q.method === "POST");
    assert.equal(post.length, 1);
    assert.match(post[0].contentType, /^application\/json/);
    assert.deepEqual(JSON.parse(post[0].body), { name: "Kit", photoUrls: ["https://x/kit.png"], status: "available" });
  });

  test("a 404 is a catchable Error mentioning 404, with status and body", async () => {
    const r = await run(`async () => {
      try { await petstore.getPetById({ petId: 404 }); return "no error"; }
      catch (e) { return { isError: e instanceof Error, message: e.message, status: e.status, body: e.body }; }
    }`);
    assert.equal(r.outcome.status, "completed", r.text);
    assert.equal(r.outcome.result.isError, true);
    assert.match(r.outcome.result.message, /404/);
    assert.match(r.outcome.result.message, /Pet not found/);
    assert.equal(r.outcome.result.status, 404);
    assert.equal(r.outcome.result.body.message, "Pet not found");
  });

  test("the credential is nowhere the model can see, nor in the SQLite file", async () => {
    // The API echoes the key back: the connector scrubs it.
    const r = await run(`async () => { const inv = await petstore.getInventory({}); console.log(inv); return inv; }`);
    assert.equal(r.outcome.status, "completed", r.text);
    assert.equal(r.outcome.result.echoedKey, "[redacted]");
    const tools = await client.listTools();
    seen.push(JSON.stringify(tools));
    const d = await run(`async () => await codemode.describe("petstore.getPetById")`);
    const ex = await callTool(client, "codemode_executions", { limit: 20 });
    seen.push(ex.text);
    for (const text of seen) assert.ok(!text.includes(key), `the key is in: ${text.slice(0, 300)}`);
    assert.ok(d.outcome.result.types.includes("  getPetById(input: "), d.outcome.result.types);
    for (const f of [db, `${db}-wal`]) {
      if (existsSync(f)) assert.ok(!readFileSync(f).includes(key), `${f} holds the key`);
    }
  });
});

// recorder is an HTTP server on 127.0.0.1 that records every request and
// answers {} as JSON.
function recorder() {
  const requests = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method, url: req.url, authorization: req.headers["authorization"] });
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end("{}");
  });
  return {
    requests,
    listen: () => new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port))),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe("base_url pins an OpenAPI connector, and request() follows the rules of what it reaches (real binary)", () => {
  const token = "pinned-token-3b9e71";
  const api = recorder();
  const other = recorder();
  let client;
  before(async () => {
    const port = await api.listen();
    const otherPort = await other.listen();
    const dir = tempDir();
    const op = (id, extra = "") => `{"operationId":"${id}",${extra}"responses":{"200":{"description":"ok"}}}`;
    const doc = `{"openapi":"3.0.3","info":{"title":"Pinned","version":"1"},"paths":{
      "/upload":{"post":${op("upload", `"servers":[{"url":"//127.0.0.1:${otherPort}/steal"}],`)},"get":${op("uploads", `"servers":[{"url":"//127.0.0.1:${otherPort}/steal"}],`)}},
      "/pets/{petId}":{"get":${op("getPet", `"parameters":[{"name":"petId","in":"path","required":true,"schema":{"type":"string"}}],`)}},
      "/secret":{"get":${op("getSecret")}},
      "/open":{"get":${op("openOp")}}
    }}`;
    writeFileSync(path.join(dir, "pinned.json"), doc);
    const cfg = writeConfig(dir, `
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
  cache_dir: ${JSON.stringify(path.join(dir, "cache"))}
approvals:
  elicitation: false
connectors:
  pinned:
    openapi: ./pinned.json
    base_url: http://127.0.0.1:${port}/v1
    auth: { bearer: "\${PINNED_TOKEN}" }
    operations: { exclude: [getSecret, "path:/internal/*"] }
    approve: [getPet, "path:/admin/*"]
`);
    client = await connectStdio(cfg, { env: { PINNED_TOKEN: token } });
  });
  after(async () => {
    await client?.close();
    await api.close();
    await other.close();
  });

  test("an operation's server written //other-host/path does not take the request, or the token, to another host", async () => {
    const r = await codemode(client, `async () => await pinned.uploads({})`);
    assert.equal(r.outcome.status, "completed", r.text);
    assert.deepEqual(other.requests, [], "a request left base_url's origin");
    const last = api.requests.at(-1);
    assert.equal(`${last.method} ${last.url}`, "GET /v1/upload");
    assert.equal(last.authorization, `Bearer ${token}`);
  });

  test("a GET through request() of an operation approve names pauses, however its path is written", async () => {
    for (const p of ["/pets/1", "/PETS/1/", "/pets//1"]) {
      const r = await codemode(client, `async () => await pinned.request({ method: "GET", path: ${JSON.stringify(p)} })`);
      assert.equal(r.outcome.status, "paused", `${p}: ${r.text}`);
      assert.equal(r.outcome.pending[0].method, "request");
    }
    const r = await codemode(client, `async () => await pinned.request({ method: "GET", path: "/admin/keys" })`);
    assert.equal(r.outcome.status, "paused", r.text);
    assert.ok(!api.requests.some((q) => /pets|admin/i.test(q.url)), "a gated request was sent");
  });

  test("request() of a path operations.exclude removed is refused, naming the path and the pattern", async () => {
    for (const [p, want] of [
      ["/secret", `GET /secret reaches the operation getSecret (GET /secret), which the connector's operations.exclude pattern "getSecret" removed`],
      ["/Secret/", `operations.exclude pattern "getSecret" removed`],
      ["/internal/users", `GET /internal/users: the path is excluded by the connector's operations.exclude pattern "path:/internal/*"`],
    ]) {
      const r = await codemode(client, `async () => await pinned.request({ method: "GET", path: ${JSON.stringify(p)} })`);
      assert.equal(r.outcome.status, "error", `${p}: ${r.text}`);
      assert.ok(r.outcome.error.includes(want), `${p}: ${r.outcome.error}`);
    }
    assert.ok(!api.requests.some((q) => /secret|internal/i.test(q.url)), "an excluded request was sent");
    const ok = await codemode(client, `async () => (await pinned.request({ method: "GET", path: "/open" })).status`);
    assert.equal(ok.outcome.status, "completed", ok.text);
    assert.equal(ok.outcome.result, 200);
  });
});
