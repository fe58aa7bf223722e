// Issue 26's acceptance, with codemode-mcp as the client: a streamable-HTTP
// MCP server (the Go fixture) protected by a real authorization server
// nobody here wrote (Ory Hydra v2.3.0, e2e/lib/hydra.mjs) is a `url:`
// connector with nothing configured but its URL.
//
// - A program's first call pauses the run for a sign-in; the approval
//   console's "Sign in" leads headless Chromium through Hydra's login and
//   consent; the run resumes by itself and the call happens once.
// - The access token expires and is refreshed without a pause.
// - Revoking the grant at Hydra makes the next run pause for a sign-in.
// - Two replicas on one PostgreSQL, signed in once (`login`, with Chromium
//   as $BROWSER), refresh a rotating refresh token exactly once between
//   them: Hydra, which revokes a whole grant when a refresh token is used
//   twice, keeps answering.
// - No token or code appears in tools/list, an outcome, the server's log,
//   `executions show`, the console or the store's files.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { bin, tempDir, writeConfig, startHTTP, connectHTTP, codemode, callTool, cli, countEffects } from "../lib/helpers.mjs";
import { launchBrowser, skipBrowser } from "../lib/browser.mjs";
import { startHydra, startProtectedServer, signIn, skipHydra, hydraBrowser } from "../lib/hydra.mjs";
import { startPostgres, skipPostgres } from "../lib/postgres.mjs";

// Access tokens live this long: short, so that the test sees them expire.
const accessTokenTTL = 4000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// cliAsync is cli() without blocking this process: {code, stdout, stderr}.
function cliAsync(args, opts) {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 120000, ...opts }, (err, stdout, stderr) => resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr }));
  });
}

// Hydra's tokens and codes carry these prefixes: none may appear anywhere
// but in Hydra and the sealed store.
const tokenShapes = /ory_(at|rt|ac)_[A-Za-z0-9_.-]{10,}/;

// until polls check (an async predicate) every 100 ms for at most ms.
async function until(what, check, ms = 60000) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}

// statusOf reads a run's status through the MCP tools.
async function statusOf(client, id) {
  const { outcome } = await callTool(client, "codemode_executions", { limit: 50 });
  return outcome.executions.find((e) => e.executionId === id)?.status;
}

function mustAwaitSignIn(outcome) {
  assert.equal(outcome.status, "paused", JSON.stringify(outcome));
  assert.equal(outcome.pending.length, 1, JSON.stringify(outcome));
  assert.equal(outcome.pending[0].awaits, "sign_in", JSON.stringify(outcome));
  assert.equal(outcome.pending[0].connector, "remote");
}

describe("codemode-mcp signs in to a server Ory Hydra protects", { skip: skipHydra || skipBrowser || skipPostgres }, () => {
  let as, fixture, browser, dir, effects;
  before(async () => {
    as = await startHydra({ accessTokenTTL: `${accessTokenTTL / 1000}s` });
    dir = tempDir();
    effects = path.join(dir, "effects.txt");
    fixture = await startProtectedServer(as, { scope: ["mcp:tools", "offline_access"], env: { FIXTURE_SIDE_EFFECTS: effects } });
    browser = await launchBrowser();
  });
  // remoteConfig writes a config into dir with its store at store and the
  // protected fixture as connector remote, nothing else configured.
  const remoteConfig = (dir, store) =>
    writeConfig(dir, `
store:
  path: ${JSON.stringify(store)}
approvals:
  elicitation: false
connectors:
  remote:
    url: ${fixture.url}
`);
  after(async () => {
    await browser?.close();
    await fixture?.stop();
    await as?.stop();
  });

  test("a first call pauses for a sign-in in the console; refresh; revocation; no token anywhere", async () => {
    const db = path.join(dir, "codemode.db");
    const cfg = remoteConfig(dir, db);
    const env = { CODEMODE_SECRET_KEY: randomBytes(32).toString("hex") };
    const srv = await startHTTP(cfg, "http", [], { env });
    const client = await connectHTTP(srv.url);
    const seen = []; // every text the client and the console showed
    try {
      const tools = await client.listTools();
      seen.push(JSON.stringify(tools));
      const first = await codemode(client, `async () => (await remote.counter({ name: "first" }))`);
      seen.push(first.text);
      mustAwaitSignIn(first.outcome);
      assert.equal(countEffects(effects).first, undefined, "the call was made before the sign-in");

      // The console: "Sign in to remote", then the link to the sign-in page.
      const consoleURL = new URL("/", srv.url).href;
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(consoleURL);
      seen.push(await page.content());
      await page.getByRole("button", { name: "Sign in to remote" }).click();
      const link = page.locator("a.signin-link");
      await link.waitFor();
      const signInURL = await link.getAttribute("href");
      seen.push(await page.content());
      await context.close();
      assert.match(signInURL, new RegExp(`^${as.publicURL}/`), "the link leads to Hydra");

      // Chromium through Hydra's login and consent; the run goes on by itself.
      const landed = await signIn(browser, signInURL, as);
      assert.match(landed.url, /^http:\/\/127\.0\.0\.1:\d+\//, "Hydra sent the browser back to codemode-mcp's loopback listener");
      assert.doesNotMatch(landed.text, tokenShapes);
      await until("the run resumes after the sign-in", async () => (await statusOf(client, first.outcome.executionId)) === "completed");
      assert.equal(countEffects(effects).first, 1, "the call that waited for the sign-in ran once");
      const logins = as.consentApp.logins;

      // The access token expires: the next call refreshes it, no pause.
      await sleep(accessTokenTTL + 1500);
      const second = await codemode(client, `async () => (await remote.counter({ name: "second" }))`);
      seen.push(second.text);
      assert.equal(second.outcome.status, "completed", second.text);
      assert.equal(countEffects(effects).second, 1);
      assert.equal(as.consentApp.logins, logins, "the refresh needed no sign-in");

      // The grant revoked at Hydra: the next run pauses for a sign-in.
      await as.revokeConsent();
      const third = await codemode(client, `async () => (await remote.counter({ name: "third" }))`);
      seen.push(third.text);
      mustAwaitSignIn(third.outcome);
      assert.equal(countEffects(effects).third, undefined);

      // No token anywhere: outcomes, the console, executions show, the
      // server's log, the store's files.
      for (const id of [first.outcome.executionId, second.outcome.executionId, third.outcome.executionId]) {
        const shown = cli(["executions", "show", id, "--config", cfg], { env: { ...process.env, ...env } });
        assert.equal(shown.code, 0, shown.stderr);
        seen.push(shown.stdout, shown.stderr);
        const res = await fetch(new URL(`/runs/${id}`, srv.url));
        seen.push(await res.text());
      }
      seen.push(await (await fetch(new URL("/runs", srv.url))).text());
      seen.push(srv.stderr());
      for (const f of [db, `${db}-wal`]) {
        if (existsSync(f)) seen.push(readFileSync(f).toString("latin1"));
      }
      for (const text of seen) assert.doesNotMatch(text, tokenShapes);
    } finally {
      await client.close();
      await srv.stop();
    }
  });

  test("two replicas on one PostgreSQL refresh a rotating refresh token once between them", async () => {
    const pg = await startPostgres();
    const rdir = tempDir();
    const cfg = remoteConfig(rdir, pg.url);
    const env = { CODEMODE_SECRET_KEY: randomBytes(32).toString("hex") };
    const replicas = [];
    const clients = [];
    try {
      // Signed in once, with `login` and Chromium as $BROWSER (not through
      // cli(), which would block this process, and with it Hydra's
      // login-and-consent app that runs in it).
      const login = await cliAsync(["login", "remote", "--config", cfg], { env: { ...process.env, ...env, ...as.browserEnv(), BROWSER: hydraBrowser } });
      assert.equal(login.code, 0, `${login.stdout}\n${login.stderr}`);
      assert.match(login.stdout, /Signed in to remote/);
      assert.doesNotMatch(login.stdout + login.stderr, tokenShapes);
      const logins = as.consentApp.logins;

      for (let i = 0; i < 2; i++) {
        const srv = await startHTTP(cfg, "http", [], { env });
        replicas.push(srv);
        clients.push(await connectHTTP(srv.url));
      }
      // Twice: every access token expired, then both replicas call at once.
      for (const round of [1, 2]) {
        await sleep(accessTokenTTL + 1500);
        const runs = [];
        for (const [r, client] of clients.entries()) {
          for (let k = 0; k < 3; k++) {
            runs.push(codemode(client, `async () => (await remote.counter({ name: "r${round}-${r}-${k}" }))`));
          }
        }
        for (const { outcome, text } of await Promise.all(runs)) {
          assert.equal(outcome.status, "completed", `round ${round}: ${text}`);
        }
      }
      assert.equal(as.consentApp.logins, logins, "no replica needed a new sign-in");
      // Hydra revokes the grant when a refresh token comes back twice.
      assert.doesNotMatch(as.log(), /already been used|token reuse/i);
      const counted = countEffects(effects);
      for (const round of [1, 2]) for (const r of [0, 1]) for (let k = 0; k < 3; k++) assert.equal(counted[`r${round}-${r}-${k}`], 1);
      for (const srv of replicas) assert.doesNotMatch(srv.stderr(), tokenShapes);
    } finally {
      for (const c of clients) await c.close();
      for (const srv of replicas) await srv.stop();
      await pg.stop();
    }
  });
});
