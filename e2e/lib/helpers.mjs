// Shared helpers for the end-to-end suite: build-independent (the binary
// comes from $CODEMODE_BIN, built by .ci/run), real npm MCP servers from
// this folder's node_modules, a real MCP client from the official SDK.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync, readFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const e2eDir = path.resolve(here, "..");
export const bin = process.env.CODEMODE_BIN
  ? path.resolve(process.env.CODEMODE_BIN)
  : path.resolve(e2eDir, "..", "bin", "codemode-mcp");

if (!existsSync(bin)) {
  throw new Error(`codemode-mcp binary not found at ${bin}: build it with 'go build -o bin/codemode-mcp ./cmd/codemode-mcp' or set CODEMODE_BIN`);
}

// The Go fixture MCP server (internal/fixture/mcpserver), built by
// scripts/test.sh next to the binary: its counter tool appends to
// $FIXTURE_SIDE_EFFECTS so side effects are counted outside the server.
export const fixtureBin = process.env.FIXTURE_BIN
  ? path.resolve(process.env.FIXTURE_BIN)
  : path.join(path.dirname(bin), "mcpfixture");
if (!existsSync(fixtureBin)) {
  throw new Error(`fixture MCP server not found at ${fixtureBin}: build it with 'go build -o bin/mcpfixture ./internal/fixture/mcpserver' or set FIXTURE_BIN`);
}

export const everythingBin = path.join(e2eDir, "node_modules", ".bin", "mcp-server-everything");
export const memoryBin = path.join(e2eDir, "node_modules", ".bin", "mcp-server-memory");
for (const b of [everythingBin, memoryBin]) {
  if (!existsSync(b)) throw new Error(`${b} is missing: run 'npm ci' in e2e/`);
}

export function tempDir() {
  return mkdtempSync(path.join(tmpdir(), "codemode-e2e-"));
}

// writeConfig writes a YAML config into dir and returns its path.
export function writeConfig(dir, yaml, name = "codemode.yaml") {
  const p = path.join(dir, name);
  writeFileSync(p, yaml);
  return p;
}

// standardConfig: notes + everything + memory (approve create_*, revert
// create_entities through delete_entities), a short timeout. extra is more
// YAML for the connectors section, sandbox more settings of the sandbox
// section (indented).
export function standardConfig(dir, extra = "", sandbox = "") {
  return writeConfig(dir, `
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
sandbox:
  timeout: 3s
${sandbox}
approvals:
  elicitation: false
connectors:
  notes:
    builtin: notes
  everything:
    command: ${JSON.stringify(everythingBin)}
  memory:
    command: ${JSON.stringify(memoryBin)}
    env:
      MEMORY_FILE_PATH: ${JSON.stringify(path.join(dir, "memory.jsonl"))}
    approve: ["create_*"]
    revert:
      create_entities: "(args, result) => result && result.entities.length > 0 ? memory.delete_entities({ entityNames: result.entities.map(e => e.name) }) : null"
${extra}`);
}

// fixturePair writes a config in which connectors `reads` and `writes`
// (or the names given) are the Go fixture server, both counting their side
// effects into one file; writes needs approval for counter. extra is more
// YAML for the connectors section.
export function fixturePair(dir, { reads = "reads", writes = "writes", elicitation = false, isolation = "process", extra = "" } = {}) {
  const effects = path.join(dir, "effects.txt");
  const cfg = writeConfig(dir, `
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
sandbox:
  timeout: 10s
  isolation: ${isolation}
approvals:
  elicitation: ${elicitation}
connectors:
  ${reads}:
    command: ${JSON.stringify(fixtureBin)}
    env: { FIXTURE_SIDE_EFFECTS: ${JSON.stringify(effects)} }
  ${writes}:
    command: ${JSON.stringify(fixtureBin)}
    env: { FIXTURE_SIDE_EFFECTS: ${JSON.stringify(effects)} }
    approve: ["counter"]
${extra}`);
  return { cfg, effects };
}

// countEffects returns how many times each name was counted in a
// fixture's effects file.
export function countEffects(effects) {
  const out = {};
  if (!existsSync(effects)) return out;
  for (const line of readFileSync(effects, "utf8").split("\n")) {
    if (line.trim()) out[line.trim()] = (out[line.trim()] ?? 0) + 1;
  }
  return out;
}

// connectStdio starts `codemode-mcp serve` as a child of the SDK's stdio
// transport and returns a connected client. The child gets the SDK's
// default environment plus env.
export async function connectStdio(configPath, { capabilities = {}, args = [], env = {} } = {}) {
  const client = new Client({ name: "e2e", version: "1.0.0" }, { capabilities });
  const transport = new StdioClientTransport({
    command: bin,
    args: ["serve", "--config", configPath, ...args],
    env: { ...getDefaultEnvironment(), ...env },
    stderr: "pipe",
  });
  const stderr = [];
  transport.stderr?.on("data", (d) => stderr.push(d.toString()));
  await client.connect(transport);
  client.stderrText = () => stderr.join("");
  return client;
}

// startHTTP starts `codemode-mcp serve --transport <t>` on a free port and
// resolves with {url, proc, stderr, stop}. configPath null starts it with no
// config file (run it in a cwd without a codemode.yaml). The server gets
// this process's environment without CODEMODE_TOKEN and CODEMODE_CONFIG
// (so that a token in the shell that runs the suite changes nothing), plus
// env.
export async function startHTTP(configPath, transport = "http", extraArgs = [], { env = {}, cwd } = {}) {
  const { CODEMODE_TOKEN, CODEMODE_CONFIG, ...inherited } = process.env;
  const config = configPath === null ? [] : ["--config", configPath];
  const proc = spawn(bin, ["serve", ...config, "--transport", transport, "--addr", "127.0.0.1:0", ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...inherited, ...env },
    cwd,
  });
  let err = "";
  const addr = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${err}`)), 60000);
    proc.stderr.on("data", (d) => {
      err += d.toString();
      const m = err.match(/serving MCP.*addr=(127\.0\.0\.1:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${err}`)));
  });
  const path = transport === "sse" ? "/sse" : "/mcp";
  return {
    url: new URL(`http://${addr}${path}`),
    proc,
    stderr: () => err,
    stop: () =>
      new Promise((resolve) => {
        if (proc.exitCode !== null) return resolve(proc.exitCode);
        proc.on("exit", (code) => resolve(code));
        proc.kill("SIGTERM");
      }),
  };
}

export async function connectHTTP(url, transport = "http", capabilities = {}) {
  const client = new Client({ name: "e2e", version: "1.0.0" }, { capabilities });
  const t = transport === "sse" ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url);
  await client.connect(t);
  return client;
}

// codemode calls the codemode tool and returns {outcome, isError}.
export async function codemode(client, code) {
  return callTool(client, "codemode", { code });
}

export async function callTool(client, name, args) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  const text = res.content?.find((c) => c.type === "text")?.text ?? "";
  const outcome = res.structuredContent ?? JSON.parse(text);
  return { outcome, isError: !!res.isError, text, raw: res };
}

// cli runs the binary with args and returns {code, stdout, stderr}.
export function cli(args, opts = {}) {
  const r = spawnSync(bin, args, { encoding: "utf8", timeout: 120000, ...opts });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// freePorts asks the kernel for n distinct free loopback ports. Another
// process may take one before the server that is given it binds it; the
// callers (startHydra, startJaeger) then see their server exit.
export async function freePorts(n) {
  const servers = [];
  try {
    for (let i = 0; i < n; i++) {
      const srv = net.createServer();
      servers.push(srv);
      await new Promise((resolve, reject) => {
        srv.once("error", reject);
        srv.listen(0, "127.0.0.1", resolve);
      });
    }
    return servers.map((srv) => srv.address().port);
  } finally {
    await Promise.all(servers.map((srv) => new Promise((resolve) => srv.close(resolve))));
  }
}

// watchProcess keeps the end of a server child's output (stdout and
// stderr, at most limit bytes) for error messages, and returns log() (that
// end), exited (resolves with {code, signal}) and stop(): SIGTERM, then
// SIGKILL if the child has not exited within 10 s.
export function watchProcess(proc, limit = 64 * 1024) {
  let log = "";
  const keep = (d) => {
    log = (log + d.toString()).slice(-limit);
  };
  proc.stdout.on("data", keep);
  proc.stderr.on("data", keep);
  const exited = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    const kill = setTimeout(() => proc.kill("SIGKILL"), 10000);
    await exited;
    clearTimeout(kill);
  };
  return { log: () => log, exited, stop };
}

// builtTool locates a server the suite builds with a script of ours and
// caches outside the repository (scripts/hydra.sh, scripts/jaeger.sh):
// bin is $envVar, else <cache>/codemode-mcp/<name>-<version>/<name>;
// missing says why it cannot be used ("" when it can); skip is missing
// outside CI and false in CI (CI=true), where a missing server fails the
// tests that need it instead of skipping them.
export function builtTool({ name, title, version, envVar, script }) {
  const bin = process.env[envVar]
    ? path.resolve(process.env[envVar])
    : path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), ".cache"), "codemode-mcp", `${name}-${version}`, name);
  const missing = existsSync(bin)
    ? ""
    : `${title} is missing at ${bin}: build it with ${script} (it prints the path; set ${envVar} to it), as scripts/test.sh does`;
  return { bin, missing, skip: missing && process.env.CI !== "true" ? missing : false };
}
