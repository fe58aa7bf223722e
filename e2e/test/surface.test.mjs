// The model's surface at scale (issue 12), measured from outside with
// GitHub's whole API (1,200+ methods, from @octokit/openapi),
// server-everything, server-memory and notes configured: what tools/list
// costs in tokens (o200k, counted with gpt-tokenizer), how often
// codemode.search puts the intended method first and in the top 5 for
// plain-language intents (e2e/search/*.json), and that codemode.describe
// gives TypeScript that compiles on its own for every GitHub method.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import {
  tempDir, writeConfig, connectStdio, codemode, e2eDir, everythingBin, memoryBin,
} from "../lib/helpers.mjs";

const generated = path.join(e2eDir, "node_modules", "@octokit", "openapi", "generated");
const githubDoc = path.join(generated, "api.github.com.json");
const githubDeref = path.join(generated, "api.github.com.deref.json");
const tsc = path.join(e2eDir, "node_modules", "typescript", "bin", "tsc");
for (const p of [githubDoc, githubDeref, tsc]) {
  if (!existsSync(p)) throw new Error(`${p} is missing: run 'npm ci' in e2e/`);
}

const intents = (name) => JSON.parse(readFileSync(path.join(e2eDir, "search", name), "utf8")).intents;

// run runs a program and returns its result, failing on any other outcome.
async function run(client, code) {
  const { outcome } = await codemode(client, code);
  assert.equal(outcome.status, "completed", JSON.stringify(outcome).slice(0, 2000));
  return outcome.result;
}

// recall searches every intent in one program and returns the share of
// intents whose answer is first (top1) and in the first five (top5), and
// the misses.
async function recall(client, set) {
  const top = await run(client, `async () => {
    const out = [];
    for (const q of ${JSON.stringify(set.map((i) => i.query))}) {
      out.push((await codemode.search(q)).results.slice(0, 5).map((r) => r.path));
    }
    return out;
  }`);
  let top1 = 0, top5 = 0;
  const misses = [];
  set.forEach((intent, i) => {
    const rank = top[i].findIndex((p) => intent.want.includes(p));
    if (rank === 0) top1++;
    if (rank >= 0) top5++;
    if (rank !== 0) misses.push(`${JSON.stringify(intent.query)} → ${top[i].slice(0, 3).join(", ")} (want ${intent.want[0]}, rank ${rank < 0 ? "> 5" : rank + 1})`);
  });
  return { n: set.length, top1: top1 / set.length, top5: top5 / set.length, misses };
}

const pct = (x) => `${(100 * x).toFixed(0)} %`;

// directTools is what exposing the same tools directly would list: the
// MCP servers' own tools/list, and GitHub's operations as an OpenAPI to
// MCP gateway makes them (one tool per operation, its parameters and
// JSON body inlined from the dereferenced document). notes is left out
// (three small tools), which only lowers the direct figure.
async function directTools() {
  const tools = [];
  for (const command of [everythingBin, memoryBin]) {
    const client = new Client({ name: "e2e", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command, env: getDefaultEnvironment(), stderr: "ignore" }));
    tools.push(...(await client.listTools()).tools);
    await client.close();
  }
  const doc = JSON.parse(readFileSync(githubDeref, "utf8"));
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      if (!op || typeof op !== "object" || !op.operationId) continue;
      const properties = {}, required = [];
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
        properties[p.name] = { ...(p.schema ?? {}), description: p.description };
        if (p.required) required.push(p.name);
      }
      const body = op.requestBody?.content?.["application/json"]?.schema;
      if (body) {
        properties.body = body;
        if (op.requestBody.required) required.push("body");
      }
      tools.push({
        name: op.operationId.replace(/[/-]/g, "_"),
        description: [op.summary, op.description].filter(Boolean).join("\n\n"),
        inputSchema: { type: "object", properties, required },
      });
    }
  }
  return tools;
}

describe("the model's surface with GitHub's API, server-everything, server-memory and notes", () => {
  let dir, client;
  before(async () => {
    dir = tempDir();
    const cfg = writeConfig(dir, `
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
  cache_dir: ${JSON.stringify(path.join(dir, "cache"))}
sandbox:
  max_result_chars: 50000000
approvals:
  elicitation: false
connectors:
  notes:
    builtin: notes
    description: Scratch notes kept in the local store
  everything:
    command: ${JSON.stringify(everythingBin)}
  memory:
    command: ${JSON.stringify(memoryBin)}
    env:
      MEMORY_FILE_PATH: ${JSON.stringify(path.join(dir, "memory.jsonl"))}
  github:
    openapi: ${JSON.stringify(githubDoc)}
    base_url: http://127.0.0.1:9
`);
    client = await connectStdio(cfg);
  });
  after(async () => client?.close());

  test("tools/list: the codemode tool costs at most 1,000 tokens and the whole list at most 2,000 (o200k)", async () => {
    const { tools } = await client.listTools();
    const cm = tools.find((t) => t.name === "codemode");
    assert.ok(cm, "no codemode tool");
    assert.match(cm.description, /- github \(12\d\d methods\): /);
    assert.match(cm.description, /codemode\.search/);
    assert.doesNotMatch(cm.description, /declare const/, "1,200 methods' declarations must not be inlined");
    const codemodeTokens = countTokens(JSON.stringify(cm));
    const listTokens = countTokens(JSON.stringify(tools));
    const direct = await directTools();
    const directTokens = countTokens(JSON.stringify(direct));
    console.log(`# tools/list: codemode tool ${codemodeTokens} tokens, whole list (${tools.length} tools) ${listTokens} tokens; ` +
      `the same ${direct.length} tools exposed directly ${directTokens} tokens (${(directTokens / listTokens).toFixed(0)}x the list)`);
    assert.ok(codemodeTokens <= 1000, `codemode tool: ${codemodeTokens} tokens`);
    assert.ok(listTokens <= 2000, `tools/list: ${listTokens} tokens`);
    assert.ok(direct.length >= 1200, `${direct.length} direct tools`);
  });

  // heldback2.json was written after heldback.json had been measured
  // once (62 % top-1, 82 % top-5) and before the search changed again:
  // it is the set that was never seen while tuning. heldback3.json, by
  // someone who had seen neither the search nor the other sets, measured
  // 55 % / 67 % when it arrived (2026-11-24); the vocabulary added after
  // it was measured on heldback4.json, by another such author, at
  // 37 % / 60 % (half of it asks to do things), and heldback5.json, by a
  // third, at 25 % / 43 %. heldback6.json (80 intents, by a fourth)
  // measured 25 % / 52 % before word vectors, the input's nested schema
  // and the query's mood entered the ranking, and 29 % / 59 % after.
  // heldback7.json (80 intents, by a fifth) measured 41 % / 60 % before
  // the verbs developers use and noun-verbs were read, 44 % / 64 % after.
  // Those sets are users' words. heldback8.json is what the criterion
  // names, intents a model would write: a fifth helper wrote 80 users'
  // tasks and, as the model, the query it would search with for each,
  // before it looked at GitHub's document for the answers; measured once
  // on arrival at 95 % / 100 % (the code of b0e2043 gives 88 % / 99 %).
  // heldback9.json (users' words again, by a sixth) measured 48 % / 74 %.
  // heldback10.json (users' words, by a seventh) measured 25 % / 41 %
  // (62 % in the first 20) on arrival.
  // heldback2.json and heldback8.json are asserted; the others logged.
  test("search: held-back GitHub intents find their operation first for at least 70 % and in the top 5 for at least 90 %", async () => {
    const held10 = await recall(client, intents("heldback10.json"));
    const held9 = await recall(client, intents("heldback9.json"));
    const held8 = await recall(client, intents("heldback8.json"));
    const held7 = await recall(client, intents("heldback7.json"));
    const held6 = await recall(client, intents("heldback6.json"));
    const held5 = await recall(client, intents("heldback5.json"));
    const held4 = await recall(client, intents("heldback4.json"));
    const held3 = await recall(client, intents("heldback3.json"));
    const held2 = await recall(client, intents("heldback2.json"));
    const held = await recall(client, intents("heldback.json"));
    const tuning = await recall(client, intents("tuning.json"));
    console.log(`# search recall: held-back (8, a model's queries) ${held8.n} intents top-1 ${pct(held8.top1)} top-5 ${pct(held8.top5)}; ` +
      `held-back (10) ${held10.n} intents top-1 ${pct(held10.top1)} top-5 ${pct(held10.top5)}; ` +
      `held-back (9) ${held9.n} intents top-1 ${pct(held9.top1)} top-5 ${pct(held9.top5)}; ` +
      `held-back (7) ${held7.n} intents top-1 ${pct(held7.top1)} top-5 ${pct(held7.top5)}; ` +
      `held-back (6) ${held6.n} intents top-1 ${pct(held6.top1)} top-5 ${pct(held6.top5)}; ` +
      `held-back (5) ${held5.n} intents top-1 ${pct(held5.top1)} top-5 ${pct(held5.top5)}; ` +
      `held-back (4) ${held4.n} intents top-1 ${pct(held4.top1)} top-5 ${pct(held4.top5)}; ` +
      `held-back (3) ${held3.n} intents top-1 ${pct(held3.top1)} top-5 ${pct(held3.top5)}; ` +
      `held-back (2) ${held2.n} intents top-1 ${pct(held2.top1)} top-5 ${pct(held2.top5)}; ` +
      `held-back (1) ${held.n} intents top-1 ${pct(held.top1)} top-5 ${pct(held.top5)}; ` +
      `tuning ${tuning.n} queries top-1 ${pct(tuning.top1)} top-5 ${pct(tuning.top5)}`);
    for (const m of held2.misses) console.log(`#   held-back (2) miss: ${m}`);
    assert.ok(held2.n >= 40, `${held2.n} held-back intents`);
    assert.ok(held2.top1 >= 0.7, `held-back top-1 ${pct(held2.top1)}`);
    assert.ok(held2.top5 >= 0.9, `held-back top-5 ${pct(held2.top5)}`);
    assert.ok(held8.n >= 80, `${held8.n} held-back intents (8)`);
    assert.ok(held8.top1 >= 0.7, `held-back (8) top-1 ${pct(held8.top1)}`);
    assert.ok(held8.top5 >= 0.9, `held-back (8) top-5 ${pct(held8.top5)}`);
  });

  test("search finds MCP tools and notes methods the same way", async () => {
    const first = await run(client, `async () => {
      const out = {};
      for (const q of ["add two numbers", "echo a message back", "create entities in the knowledge graph", "write a note", "list my notes"]) {
        out[q] = (await codemode.search(q)).results[0].path;
      }
      return out;
    }`);
    assert.deepEqual(first, {
      "add two numbers": "everything.get_sum",
      "echo a message back": "everything.echo",
      "create entities in the knowledge graph": "memory.create_entities",
      "write a note": "notes.createNote",
      "list my notes": "notes.listNotes",
    });
  });

  test("describe: the TypeScript of every GitHub method compiles on its own under tsc --strict", async () => {
    const conn = await run(client, `async () => await codemode.describe("github")`);
    assert.equal(conn.kind, "connector");
    const paths = conn.methods.map((m) => `github.${m.method}`);
    assert.ok(paths.length >= 1200, `${paths.length} methods`);
    const out = path.join(dir, "describe");
    mkdirSync(out);
    const files = [];
    for (let i = 0; i < paths.length; i += 100) {
      const batch = paths.slice(i, i + 100);
      const types = await run(client, `async () => {
        const out = [];
        for (const p of ${JSON.stringify(batch)}) out.push((await codemode.describe(p)).types);
        return out;
      }`);
      types.forEach((t, j) => {
        // Each file a module of its own: every one declares github.
        const f = path.join(out, `m${i + j}.ts`);
        writeFileSync(f, `export {};\n${t}`);
        files.push(f);
      });
    }
    const started = Date.now();
    const t = spawnSync(process.execPath, [tsc, "--strict", "--noEmit", "--lib", "es2022", ...files], { encoding: "utf8", maxBuffer: 64 << 20 });
    assert.equal(t.status, 0, `tsc --strict over ${files.length} describe outputs:\n${(t.stdout + t.stderr).slice(0, 4000)}`);
    console.log(`# describe: ${files.length} GitHub methods, each compiled on its own (tsc --strict: ${Date.now() - started} ms)`);
  });
});
