// Issue 30, item 1: codemode-mcp as an OAuth 2.1 resource server for a
// team's issuer. Ory Hydra v2.3.0 (scripts/hydra.sh) is the issuer; two
// codemode-mcp replicas share one PostgreSQL database, each with
// server.auth naming Hydra. The official TypeScript SDK's client, given
// nothing but a replica's URL, gets 401 with the resource metadata,
// discovers Hydra, registers itself dynamically, signs in (authorization
// code with PKCE; headless Chromium presses Hydra's login and consent
// buttons, which the test's consent app accepts through Hydra's admin
// API) and runs programs on both replicas with the one token. Tokens for
// another audience, expired, or signed by another key are refused with
// 401 and the metadata pointer; an opaque token (another client's) is
// introspected at Hydra's admin endpoint. Issue 30, items 2, 3 and 6:
// alice (runs) and bob (the configured approver) sign in as two Hydra
// subjects; bob sees alice's run only as a pending approval, approves it
// once on the other replica, approvals.separation refuses alice's own
// approval, and `codemode-mcp audit` lists both people. Issue 30, item
// 4: bob signs in to a replica's approval console through Hydra in
// headless Chromium (server.auth.console: a confidential client of
// Hydra's, OpenID Connect's code flow with PKCE), sees alice's pending
// action with her name and not her program, and approves it; the audit
// names bob with source console.
//
// Hydra issues JWT access tokens here (STRATEGIES_ACCESS_TOKEN=jwt) but
// for the client made with access_token_strategy "opaque". It does not
// take RFC 8707's resource parameter (tokens name no audience from it);
// it takes its own audience parameter for audiences the client was
// registered with. So the replicas share one server.auth.audience, the
// clients register it, and each authorization request names it: which is
// also what lets one token serve every replica.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";
import { existsSync, readFileSync } from "node:fs";
import { generateKeyPairSync, createSign, randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { tempDir, writeConfig, startHTTP, callTool, cli } from "../lib/helpers.mjs";
import { launchBrowser, screenshot, skipBrowser } from "../lib/browser.mjs";
import { startHydra, startProtectedServer, signIn, skipHydra } from "../lib/hydra.mjs";
import { startPostgres, skipPostgres } from "../lib/postgres.mjs";

// The audience every replica accepts and the clients ask Hydra for.
const audience = "https://codemode.team.invalid/mcp";
const scopes = "codemode:run codemode:approve codemode:admin";

// provider is an OAuthClientProvider kept in memory (as in
// oauth.test.mjs; its client_uri and contacts keep Hydra's registration
// answer within the SDK's schema). Its metadata registers the audience
// and scopes; authorizeParams are added to each authorization URL.
function provider(redirectURL, { clientInformation, authorizeParams = { audience } } = {}) {
  const saved = { client: clientInformation, tokens: undefined, verifier: undefined, authorizations: [] };
  return {
    saved,
    get redirectUrl() {
      return redirectURL;
    },
    get clientMetadata() {
      return {
        client_name: "e2e team client",
        redirect_uris: [redirectURL],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        client_uri: "https://codemode-mcp.invalid/e2e",
        contacts: ["e2e@codemode-mcp.invalid"],
        scope: scopes,
        audience: [audience],
      };
    },
    state: () => crypto.randomUUID(),
    clientInformation: () => saved.client,
    saveClientInformation: (info) => {
      saved.client = info;
    },
    tokens: () => saved.tokens,
    saveTokens: (tokens) => {
      saved.tokens = tokens;
    },
    redirectToAuthorization: (url) => {
      for (const [k, v] of Object.entries(authorizeParams)) url.searchParams.set(k, v);
      saved.authorizations.push(url);
    },
    saveCodeVerifier: (v) => {
      saved.verifier = v;
    },
    codeVerifier: () => saved.verifier,
    invalidateCredentials: (scope) => {
      if (scope === "all" || scope === "tokens") saved.tokens = undefined;
      if (scope === "all" || scope === "client") saved.client = undefined;
      if (scope === "all" || scope === "verifier") saved.verifier = undefined;
    },
  };
}

// startReceiver serves the clients' loopback redirect URI.
async function startReceiver() {
  const srv = http.createServer((req, res) => {
    if (new URL(req.url, "http://127.0.0.1").pathname !== "/callback") return res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end("<!doctype html><title>Signed in</title><p>Signed in.</p>");
  });
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${srv.address().port}/callback`,
    close: () => new Promise((resolve) => (srv.closeAllConnections(), srv.close(resolve))),
  };
}

// connect connects an SDK client to url with p, resolving with it, or
// with the UnauthorizedError the SDK throws when a person must sign in.
async function connect(url, p) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: p });
  const client = new Client({ name: "e2e-team", version: "1.0.0" });
  try {
    await client.connect(transport);
    return { client, transport };
  } catch (err) {
    await client.close().catch(() => {});
    if (err instanceof UnauthorizedError) return { unauthorized: err, transport };
    throw err;
  }
}

// signInWith signs the provider's last authorization URL in through the
// browser and hands the code to the SDK.
async function signInWith(browser, as, p, transport) {
  const authURL = p.saved.authorizations.at(-1);
  const { url } = await signIn(browser, authURL.href, as);
  const q = new URL(url).searchParams;
  assert.ok(q.get("code"), `no code in the redirect: ${url}`);
  await transport.finishAuth(q.get("code"));
}

// tokenFor signs a pre-registered client in (through the SDK, which is
// told the client and sends authorizeParams) and returns its access token.
async function tokenFor(browser, as, receiverURL, replicaURL, clientID, authorizeParams) {
  const p = provider(receiverURL, { clientInformation: { client_id: clientID }, authorizeParams });
  const { unauthorized, transport } = await connect(replicaURL, p);
  assert.ok(unauthorized, "connected without signing in");
  await signInWith(browser, as, p, transport);
  return p.saved.tokens.access_token;
}

async function run(client, code) {
  const res = await client.callTool({ name: "codemode", arguments: { code } }, undefined, { timeout: 60000 });
  return { outcome: res.structuredContent ?? JSON.parse(res.content.find((c) => c.type === "text").text), isError: !!res.isError };
}

// post sends an initialize request with token and returns the status and
// WWW-Authenticate.
async function post(url, token) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
  });
  const body = await res.text();
  return { status: res.status, challenge: res.headers.get("www-authenticate") ?? "", body };
}

const b64url = (b) => Buffer.from(b).toString("base64url");
const decode = (part) => JSON.parse(Buffer.from(part, "base64url").toString());

// forge re-signs a JWT's header and claims with a key Hydra never had
// (RS256, the same kid): a token "signed by another key".
function forge(jwt) {
  const [h, c] = jwt.split(".");
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const input = `${b64url(JSON.stringify(decode(h)))}.${b64url(JSON.stringify(decode(c)))}`;
  const sig = createSign("RSA-SHA256").update(input).sign(privateKey);
  return `${input}.${b64url(sig)}`;
}

// The console's client at Hydra: confidential, allowed the scopes the
// console asks for by default and the replicas' audience.
const consoleSecret = "console-e2e-secret-6b1f0c2d9e";
const consoleScopes = "openid profile email codemode:run codemode:approve codemode:admin";

describe("codemode-mcp as a resource server of Ory Hydra, on two replicas", { skip: skipHydra || skipBrowser || skipPostgres }, () => {
  let as, pg, browser, receiver, dir, cfg, consoleClient;
  const replicas = [];
  before(async () => {
    as = await startHydra({ scopes: scopes.split(" "), env: { STRATEGIES_ACCESS_TOKEN: "jwt" } });
    pg = await startPostgres();
    browser = await launchBrowser();
    receiver = await startReceiver();
    dir = tempDir();
    // Its redirect URIs are the replicas' /auth/callback, known once they
    // listen (below).
    consoleClient = await as.createClient({
      client_name: "codemode console",
      client_secret: consoleSecret,
      redirect_uris: ["http://127.0.0.1/auth/callback"],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      scope: consoleScopes,
      audience: [audience],
    });
    cfg = writeConfig(dir, `
server:
  auth:
    issuer: ${JSON.stringify(as.issuer)}
    audience: ${JSON.stringify(audience)}
    introspection:
      endpoint: ${JSON.stringify(`${as.adminURL}/admin/oauth2/introspect`)}
    console:
      client_id: ${JSON.stringify(consoleClient.client_id)}
      client_secret: ${JSON.stringify(consoleSecret)}
store:
  path: ${JSON.stringify(pg.url)}
approvals:
  elicitation: false
  separation: true
  approvers: {subjects: [bob]}
connectors:
  notes:
    builtin: notes
`);
    for (let i = 0; i < 2; i++) replicas.push(await startHTTP(cfg));
    await as.admin("PATCH", `/admin/clients/${consoleClient.client_id}`, [
      { op: "replace", path: "/redirect_uris", value: replicas.map((r) => `${r.url.origin}/auth/callback`) },
    ]);
  });
  after(async () => {
    for (const r of replicas) await r.stop();
    await browser?.close();
    await receiver?.close();
    await as?.stop();
    await pg?.stop();
  });

  test("a request without a token gets 401 and the metadata, which names Hydra and the scopes", async () => {
    for (const r of replicas) {
      const metadataURL = `${r.url.origin}/.well-known/oauth-protected-resource/mcp`;
      const { status, challenge } = await post(r.url.href);
      assert.equal(status, 401);
      assert.equal(challenge, `Bearer resource_metadata="${metadataURL}"`);
      const prm = await (await fetch(metadataURL)).json();
      assert.deepEqual(prm, {
        resource: r.url.href,
        authorization_servers: [as.issuer],
        scopes_supported: scopes.split(" "),
        bearer_methods_supported: ["header"],
        resource_name: "codemode",
      });
    }
  });

  let signedIn; // the SDK's provider once signed in
  test("the TypeScript SDK signs in by itself and runs programs on both replicas with one token", async () => {
    const p = provider(receiver.url);
    const first = await connect(replicas[0].url, p);
    assert.ok(first.unauthorized, "the SDK connected without signing in");
    const registered = await as.admin("GET", `/admin/clients/${p.saved.client.client_id}`);
    assert.equal(registered.client_name, "e2e team client", "the SDK did not register itself");
    const authURL = p.saved.authorizations[0];
    assert.equal(authURL.searchParams.get("code_challenge_method"), "S256");
    assert.equal(authURL.searchParams.get("resource"), replicas[0].url.href);
    assert.equal(authURL.searchParams.get("scope"), scopes);
    await signInWith(browser, as, p, first.transport);

    const token = p.saved.tokens.access_token;
    assert.equal(token.split(".").length, 3, "Hydra's access token is not a JWT");
    const claims = decode(token.split(".")[1]);
    assert.deepEqual([claims.sub, claims.aud], [as.subject, [audience]]);

    const ids = [];
    for (const [i, r] of replicas.entries()) {
      const { client } = await connect(r.url, p);
      try {
        const { outcome, isError } = await run(client, `return "replica ${i}: " + (6 * 7)`);
        assert.ok(!isError, JSON.stringify(outcome));
        assert.deepEqual([outcome.status, outcome.result], ["completed", `replica ${i}: 42`]);
        ids.push(outcome.executionId);
        // The runs are in the one database: each replica lists both so far.
        const res = await client.callTool({ name: "codemode_executions", arguments: {} });
        const listed = JSON.parse(res.content.find((c) => c.type === "text").text);
        for (const id of ids) assert.ok(JSON.stringify(listed).includes(id), `replica ${i} does not list ${id}`);
      } finally {
        await client.close();
      }
    }
    assert.equal(p.saved.authorizations.length, 1, "a replica asked for another sign-in");
    assert.equal(as.consentApp.logins, 1);
    signedIn = p;
  });

  test("tokens for another audience, expired, or signed by another key get 401 and the metadata pointer", async () => {
    assert.ok(signedIn, "the sign-in test did not pass");
    const other = "https://elsewhere.invalid/mcp";
    const r = replicas[1];
    const metadata = `resource_metadata="${r.url.origin}/.well-known/oauth-protected-resource/mcp"`;
    const client = await as.createClient({
      client_name: "pre-registered",
      redirect_uris: [receiver.url],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: scopes,
      audience: [audience, other],
    });
    // Its tokens live a second: this one is expired by the time it is checked.
    await as.admin("PUT", `/admin/clients/${client.client_id}/lifespans`, { authorization_code_grant_access_token_lifespan: "1s" });
    const expired = await tokenFor(browser, as, receiver.url, r.url, client.client_id, { audience });
    const forOther = await tokenFor(browser, as, receiver.url, r.url, client.client_id, { audience: other });
    const forged = forge(signedIn.saved.tokens.access_token);
    assert.equal(decode(forOther.split(".")[1]).aud[0], other);

    for (const [name, token, why] of [
      ["another audience", forOther, "another resource"],
      ["signed by another key", forged, "does not verify"],
    ]) {
      const res = await post(r.url.href, token);
      assert.equal(res.status, 401, name);
      assert.match(res.challenge, new RegExp(`^Bearer error="invalid_token", error_description="[^"]*${why}[^"]*", ${metadata.replace(/[.?*+^$()[\]{}|\\/]/g, "\\$&")}$`), name);
      assert.ok(!res.body.includes(token) && !res.challenge.includes(token), `${name}: the answer echoes the token`);
    }
    // exp passed, and the replica's clock skew (30 s) after it.
    const exp = decode(expired.split(".")[1]).exp * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp + 31000 - Date.now())));
    const res = await post(r.url.href, expired);
    assert.equal(res.status, 401);
    assert.match(res.challenge, /error="invalid_token", error_description="the token has expired"/);
    assert.ok(res.challenge.endsWith(metadata));
  });

  test("an opaque token is introspected at Hydra: good while active, refused once revoked", async () => {
    const client = await as.createClient({
      client_name: "opaque",
      redirect_uris: [receiver.url],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: scopes,
      audience: [audience],
      access_token_strategy: "opaque",
    });
    const token = await tokenFor(browser, as, receiver.url, replicas[0].url, client.client_id, { audience });
    assert.notEqual(token.split(".").length, 3, "Hydra's token for this client is a JWT");
    for (const r of replicas) assert.equal((await post(r.url.href, token)).status, 200);
    await as.revokeConsent();
    // The replicas cache an active answer for at most 10 s.
    let res;
    for (const deadline = Date.now() + 30000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
      res = await post(replicas[0].url.href, token);
      if (res.status === 401) break;
    }
    assert.equal(res.status, 401);
    assert.match(res.challenge, /error="invalid_token", error_description="the token is not active/);
  });

  test("alice runs, bob approves: bob sees alice's run only as a pending approval, separation refuses alice, the audit names both", async () => {
    const team = await as.createClient({
      client_name: "team",
      redirect_uris: [receiver.url],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: scopes,
      audience: [audience],
    });
    const tokens = {};
    for (const who of ["alice", "bob"]) {
      as.signInAs(who);
      tokens[who] = await tokenFor(browser, as, receiver.url, replicas[0].url, team.client_id, { audience });
      assert.equal(decode(tokens[who].split(".")[1]).sub, who);
    }
    as.signInAs("e2e-user");
    // alice on one replica, bob on the other.
    const person = async (who, r) => {
      const client = new Client({ name: `e2e-${who}`, version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(r.url, { requestInit: { headers: { Authorization: `Bearer ${tokens[who]}` } } }));
      return client;
    };
    const alice = await person("alice", replicas[0]);
    const bob = await person("bob", replicas[1]);
    try {
      const { outcome: paused } = await callTool(alice, "codemode", { code: `async () => notes.createNote({ text: "alice's plan" })` });
      assert.equal(paused.status, "paused", JSON.stringify(paused));
      const id = paused.executionId;

      const { outcome: bobsRuns } = await callTool(bob, "codemode_executions", {});
      assert.ok(!JSON.stringify(bobsRuns).includes(id), `bob lists alice's run: ${JSON.stringify(bobsRuns)}`);
      const { outcome: pending } = await callTool(bob, "codemode_pending", {});
      assert.deepEqual(
        pending.pending.map((a) => [a.executionId, a.connector, a.method, a.startedBy.subject]),
        [[id, "notes", "createNote", "alice"]],
      );
      const { outcome: rollback, isError: rollbackRefused } = await callTool(bob, "codemode_rollback", { executionId: id });
      assert.ok(rollbackRefused);
      assert.equal(rollback.status, "error");
      assert.match(rollback.error, /^unknown execution/);

      const { outcome: own, isError: ownRefused } = await callTool(alice, "codemode_approve", { executionId: id });
      assert.ok(ownRefused);
      assert.equal(own.status, "paused");
      assert.match(own.error, /alice started this run; approvals\.separation forbids approving one's own run/);

      const { outcome: approved, isError } = await callTool(bob, "codemode_approve", { executionId: id });
      assert.ok(!isError, JSON.stringify(approved));
      assert.equal(approved.status, "completed");
      const { isError: again } = await callTool(bob, "codemode_approve", { executionId: id });
      assert.ok(again, "bob approved alice's run twice");

      const { outcome: alicesRuns } = await callTool(alice, "codemode_executions", {});
      const run = alicesRuns.executions.find((e) => e.executionId === id);
      assert.equal(run.startedBy.subject, "alice");
      assert.equal(run.calls[0].decidedBy.subject, "bob");

      const audit = cli(["audit", "--config", cfg, "--run", id]);
      assert.equal(audit.code, 0, audit.stderr);
      const records = audit.stdout.trim().split("\n").map((l) => JSON.parse(l));
      assert.deepEqual(
        records.map((r) => [r.person.subject, r.action, r.outcome.split(":")[0]]),
        [
          ["alice", "run", "ok"],
          ["bob", "rollback", "refused"],
          ["alice", "approve", "refused"],
          ["bob", "approve", "ok"],
          ["bob", "approve", "refused"],
        ],
      );
      assert.ok(!audit.stdout.includes("alice's plan"), "the audit holds the call's arguments");
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  test("the console signs bob in through Hydra in Chromium: he sees alice's pending action, not her program, and approves it; the audit says console", async () => {
    const team = await as.createClient({
      client_name: "team console test",
      redirect_uris: [receiver.url],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: scopes,
      audience: [audience],
    });
    as.signInAs("alice");
    const aliceToken = await tokenFor(browser, as, receiver.url, replicas[0].url, team.client_id, { audience });
    const alice = new Client({ name: "e2e-alice", version: "1.0.0" });
    await alice.connect(new StreamableHTTPClientTransport(replicas[0].url, { requestInit: { headers: { Authorization: `Bearer ${aliceToken}` } } }));
    let id;
    try {
      const { outcome: paused } = await callTool(alice, "codemode", { code: `async () => {\n  // alice's program\n  return notes.createNote({ text: "alice's console plan" });\n}` });
      assert.equal(paused.status, "paused", JSON.stringify(paused));
      id = paused.executionId;
    } finally {
      await alice.close();
    }

    // Bob opens the other replica's console, which offers the sign-in.
    const consoleURL = replicas[1].url.origin;
    as.signInAs("bob");
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const first = await page.goto(`${consoleURL}/`);
      assert.equal(first.status(), 401);
      const link = page.getByRole("link", { name: "Sign in with your team's account" });
      const href = await link.getAttribute("href");
      const { page: back } = await signIn(browser, new URL(href, consoleURL).href, as, { context });
      // The console's page after the sign-in sends the browser on to /.
      await back.waitForURL(`${consoleURL}/`);
      const run = back.locator(`#run-${id}`);
      await run.waitFor();
      const text = await back.locator("main").innerText();
      assert.match(await back.locator(".who").innerText(), /Signed in as bob/);
      assert.match(await run.innerText(), /started by alice/);
      assert.match(await run.innerText(), /alice's console plan/);
      assert.ok(!text.includes("alice's program"), `bob sees alice's program:\n${text}`);
      await screenshot(back, "console-signed-in-pending.png");
      await run.getByRole("button", { name: new RegExp(`^Approve notes\\.createNote of run ${id}$`) }).click();
      await back.waitForURL(`${consoleURL}/`);
      assert.match(await back.locator("main").innerText(), new RegExp(`You approved run ${id}: it is now completed`));
      await screenshot(back, "console-signed-in-approved.png");
      // Alice's run page is hers: bob is told there is no such run.
      const other = await back.goto(`${consoleURL}/runs/${id}`);
      assert.equal(other.status(), 404);
    } finally {
      await context.close();
      as.signInAs("e2e-user");
    }

    const audit = cli(["audit", "--config", cfg, "--run", id]);
    assert.equal(audit.code, 0, audit.stderr);
    const records = audit.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      records.map((r) => [r.person.subject, r.action, r.source ?? "", r.outcome.split(":")[0]]),
      [
        ["alice", "run", "", "ok"],
        ["bob", "approve", "console", "ok"],
        ["bob", "view", "console", "refused"],
      ],
    );
    const logins = cli(["audit", "--config", cfg, "--since", "1h"]).stdout.trim().split("\n").map((l) => JSON.parse(l))
      .filter((r) => r.action === "login");
    assert.deepEqual(logins.map((r) => [r.person.subject, r.source, r.outcome]), [["bob", "console", "ok"]]);
  });
});

// Issue 30, item 5: a downstream MCP server Hydra protects too (the Go
// fixture, checking tokens by Hydra's introspection and recording the
// subject of every call), a connector with credentials: per_user. alice
// and bob sign in to codemode-mcp through Hydra; each one's first call
// to the downstream pauses their own run for their own sign-in, which
// the client asks them for by URL-mode elicitation (Chromium through
// Hydra's login and consent, as that person); the downstream then sees
// alice's calls as alice's and bob's as bob's, also when bob approves
// alice's run: the replay calls with her grant, never his.
describe("credentials: per_user: a downstream Hydra protects sees each person's own calls", { skip: skipHydra || skipBrowser }, () => {
  let as, browser, receiver, downstream, srv, calls;
  before(async () => {
    as = await startHydra({ scopes: scopes.split(" "), env: { STRATEGIES_ACCESS_TOKEN: "jwt" } });
    browser = await launchBrowser();
    receiver = await startReceiver();
    const dir = tempDir();
    calls = path.join(dir, "calls.txt");
    downstream = await startProtectedServer(as, { scope: ["offline_access"], env: { FIXTURE_OAUTH_CALLS: calls } });
    const cfg = writeConfig(dir, `
server:
  auth:
    issuer: ${JSON.stringify(as.issuer)}
    audience: ${JSON.stringify(audience)}
    introspection:
      endpoint: ${JSON.stringify(`${as.adminURL}/admin/oauth2/introspect`)}
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
approvals:
  elicitation: true
  approvers: {subjects: [bob]}
connectors:
  downstream:
    url: ${downstream.url}
    credentials: per_user
`);
    srv = await startHTTP(cfg, "http", [], { env: { CODEMODE_SECRET_KEY: randomBytes(32).toString("hex") } });
  });
  after(async () => {
    await srv?.stop();
    await downstream?.stop();
    await browser?.close();
    await receiver?.close();
    await as?.stop();
  });

  // recorded is whose token each call the downstream let through carried.
  const recorded = () => (existsSync(calls) ? readFileSync(calls, "utf8").trim().split("\n").filter(Boolean) : []);

  test("alice's calls carry alice, bob's carry bob, also when bob approves alice's run", async () => {
    const team = await as.createClient({
      client_name: "team",
      redirect_uris: [receiver.url],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: scopes,
      audience: [audience],
    });
    const tokens = {};
    for (const who of ["alice", "bob"]) {
      as.signInAs(who);
      tokens[who] = await tokenFor(browser, as, receiver.url, srv.url, team.client_id, { audience });
    }
    // A person's client: it opens the sign-in links it is asked to
    // (URL-mode elicitation) in Chromium, signing in at Hydra as them.
    const asked = { alice: 0, bob: 0 };
    const person = async (who) => {
      const client = new Client({ name: `e2e-${who}`, version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });
      client.setRequestHandler(ElicitRequestSchema, async (req) => {
        assert.equal(req.params.mode, "url", JSON.stringify(req.params));
        asked[who]++;
        as.signInAs(who);
        const { url } = await signIn(browser, req.params.url, as);
        assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\//, "Hydra did not send the browser back to codemode-mcp");
        return { action: "accept" };
      });
      await client.connect(new StreamableHTTPClientTransport(srv.url, { requestInit: { headers: { Authorization: `Bearer ${tokens[who]}` } } }));
      return client;
    };
    const alice = await person("alice");
    const bob = await person("bob");
    try {
      const whoami = `async () => (await downstream.whoami({})).sub`;
      for (const who of ["alice", "bob"]) {
        const { outcome, isError } = await callTool(who === "alice" ? alice : bob, "codemode", { code: whoami });
        assert.ok(!isError, JSON.stringify(outcome));
        assert.deepEqual([outcome.status, outcome.result], ["completed", who], JSON.stringify(outcome));
        assert.equal(asked[who], 1, `${who} was not asked to sign in once`);
      }
      assert.deepEqual(recorded(), ["alice whoami", "bob whoami"]);

      // alice's destructive call waits for an approver; bob approves it.
      const { outcome: paused } = await callTool(alice, "codemode", { code: `async () => (await downstream.delete_thing({ id: "alice's" }))` });
      assert.equal(paused.status, "paused", JSON.stringify(paused));
      assert.notEqual(paused.pending[0].awaits, "sign_in", JSON.stringify(paused));
      const { outcome: approved, isError } = await callTool(bob, "codemode_approve", { executionId: paused.executionId });
      assert.ok(!isError, JSON.stringify(approved));
      assert.equal(approved.status, "completed", JSON.stringify(approved));
      assert.deepEqual(recorded(), ["alice whoami", "bob whoami", "alice delete-thing"], "bob's approval lent his credentials to alice's run");
      assert.deepEqual(asked, { alice: 1, bob: 1 }, "a sign-in was asked for again");
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});
