// Issue 26's end-to-end stack, proved with a client that exists today:
// the official TypeScript SDK's OAuth client signs in to a streamable-HTTP
// MCP server (the Go fixture, as an OAuth protected resource) whose
// authorization server is Ory Hydra v2.3.0 (scripts/hydra.sh), and
// headless Chromium completes Hydra's login and consent. The SDK gets
// 401, discovers the resource's metadata and Hydra's, registers itself
// dynamically, and then: a tool call runs once; the access token expires
// and is refreshed without a sign-in (the old refresh token is refused
// after); revoking the grant at Hydra makes the next request 401 and ask
// for a new sign-in. The helpers (e2e/lib/hydra.mjs) take any client's
// authorization URL, so codemode-mcp as the client can use them as they
// are.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { tempDir, countEffects } from "../lib/helpers.mjs";
import { launchBrowser, skipBrowser } from "../lib/browser.mjs";
import { startHydra, startProtectedServer, signIn, skipHydra, hydraBrowser } from "../lib/hydra.mjs";

const execFileAsync = promisify(execFile);

// The access token lifetime: short, so that the test sees one expire.
const accessTokenTTL = "3s";

// memoryProvider is an OAuthClientProvider that keeps everything in
// memory and records each authorization URL the SDK sends the user to.
// clientInformation, when given, is a pre-registered client (no dynamic
// registration); authorizeParams are added to every authorization URL.
//
// Its metadata sets client_uri and contacts for a reason: Hydra v2.3.0's
// registration response gives every field the client did not send, and
// so "client_uri": "" and "contacts": null, which the SDK's schema
// refuses ("Invalid URL"; "expected array, received null"), failing the
// registration. A client that reads such answers must take "" and null
// as absent.
function memoryProvider(redirectURL, { clientInformation, authorizeParams = {} } = {}) {
  const saved = { client: clientInformation, tokens: undefined, verifier: undefined, authorizations: [] };
  return {
    saved,
    get redirectUrl() {
      return redirectURL;
    },
    get clientMetadata() {
      return {
        client_name: "e2e TypeScript SDK client",
        redirect_uris: [redirectURL],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        client_uri: "https://codemode-mcp.invalid/e2e",
        contacts: ["e2e@codemode-mcp.invalid"],
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

// startReceiver serves the client's loopback redirect URI and keeps the
// query of each redirect it received (code, state); the browser's other
// requests (its favicon) get 404.
async function startReceiver() {
  const received = [];
  const srv = http.createServer((req, res) => {
    const u = new URL(req.url, "http://127.0.0.1");
    if (u.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    received.push(u.searchParams);
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>Signed in</title><p>Signed in. You can close this window.</p>");
  });
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${srv.address().port}/callback`,
    received,
    close: () =>
      new Promise((resolve) => {
        srv.closeAllConnections();
        srv.close(resolve);
      }),
  };
}

// connect makes an SDK client for url with provider and connects it,
// resolving with it, or with the UnauthorizedError the SDK throws when it
// needs a person to sign in.
async function connect(url, provider) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: "e2e-oauth", version: "1.0.0" });
  try {
    await client.connect(transport);
    return { client, transport };
  } catch (err) {
    await client.close().catch(() => {});
    if (err instanceof UnauthorizedError) return { unauthorized: err, transport };
    throw err;
  }
}

// authorize signs in through the browser at the provider's last
// authorization URL and hands the code to the SDK; it returns the
// redirect's query.
async function authorize(browser, as, provider, transport) {
  const authURL = provider.saved.authorizations.at(-1);
  const { url } = await signIn(browser, authURL.href, as);
  const q = new URL(url).searchParams;
  assert.ok(q.get("code"), `no code in the redirect: ${url}`);
  assert.equal(q.get("state"), authURL.searchParams.get("state"), "the redirect's state is not the request's");
  await transport.finishAuth(q.get("code"));
  return q;
}

async function call(client, name, args = {}) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
  assert.ok(!res.isError, JSON.stringify(res));
  return res.content.find((c) => c.type === "text").text;
}

describe("the TypeScript SDK's OAuth client, Ory Hydra and a protected MCP server", { skip: skipHydra || skipBrowser }, () => {
  let dir, effects, as, server, browser, receiver;
  before(async () => {
    dir = tempDir();
    effects = path.join(dir, "effects.txt");
    as = await startHydra({ accessTokenTTL, scopes: ["mcp:tools"] });
    server = await startProtectedServer(as, {
      scope: ["mcp:tools", "offline_access"],
      require: ["mcp:tools"],
      env: { FIXTURE_SIDE_EFFECTS: effects },
    });
    browser = await launchBrowser();
    receiver = await startReceiver();
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.stop();
    await as?.stop();
  });

  test("the protected server answers 401 with its resource metadata, which names Hydra", async () => {
    const res = await fetch(server.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    await res.arrayBuffer();
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("www-authenticate"), `Bearer resource_metadata="${server.metadataURL}", scope="mcp:tools offline_access"`);
    const prm = await (await fetch(server.metadataURL)).json();
    assert.equal(prm.resource, server.url);
    assert.deepEqual(prm.authorization_servers, [as.issuer]);
    const meta = await (await fetch(`${as.issuer}.well-known/openid-configuration`)).json();
    assert.equal(meta.issuer, as.issuer);
    assert.equal(meta.registration_endpoint, `${as.publicURL}/oauth2/register`);
    assert.ok(meta.code_challenge_methods_supported.includes("S256"));
    assert.ok(meta.scopes_supported.includes("offline_access") && meta.scopes_supported.includes("mcp:tools"));
  });

  test("sign in through Chromium, call once, refresh on expiry without a sign-in, revoke and be asked again", async () => {
    const provider = memoryProvider(receiver.url);

    // 401 → discovery → dynamic registration → an authorization URL.
    const first = await connect(server.url, provider);
    assert.ok(first.unauthorized, "the SDK connected without signing in");
    assert.equal(provider.saved.authorizations.length, 1);
    const authURL = provider.saved.authorizations[0];
    assert.equal(authURL.origin + authURL.pathname, `${as.publicURL}/oauth2/auth`);
    const registered = await as.admin("GET", `/admin/clients/${provider.saved.client.client_id}`);
    assert.equal(registered.client_name, "e2e TypeScript SDK client", "the SDK's client was not registered dynamically");
    assert.equal(registered.token_endpoint_auth_method, "none");
    for (const [k, want] of [["resource", server.url], ["code_challenge_method", "S256"], ["scope", "mcp:tools offline_access"], ["redirect_uri", receiver.url]]) {
      assert.equal(authURL.searchParams.get(k), want, `the authorization URL's ${k}`);
    }

    // Chromium signs in and consents; the SDK exchanges the code.
    await authorize(browser, as, provider, first.transport);
    assert.deepEqual([as.consentApp.logins, as.consentApp.consents], [1, 1]);
    const firstTokens = provider.saved.tokens;
    assert.ok(firstTokens.refresh_token, "no refresh token (offline_access was asked for)");
    // Hydra accepts RFC 8707's resource parameter and ignores it: the
    // token names no audience (the fixture checks aud only when present).
    const seen = await as.introspect(firstTokens.access_token);
    assert.deepEqual([seen.active, seen.sub, seen.client_id, seen.aud], [true, as.subject, provider.saved.client.client_id, []]);

    // The call happens, once, as the signed-in subject.
    const { client } = await connect(server.url, provider);
    try {
      assert.equal(await call(client, "counter", { name: "signed-in" }), "1");
      const who = JSON.parse(await call(client, "whoami"));
      assert.deepEqual([who.sub, who.client_id], [as.subject, provider.saved.client.client_id]);
      assert.deepEqual(countEffects(effects), { "signed-in": 1 });

      // The access token expires; the next call gets 401, the SDK
      // refreshes (Hydra rotates the refresh token) and retries: no sign-in.
      await as.untilInactive(firstTokens.access_token);
      assert.equal(await call(client, "counter", { name: "after-expiry" }), "1");
      const refreshed = provider.saved.tokens;
      assert.notEqual(refreshed.access_token, firstTokens.access_token);
      assert.notEqual(refreshed.refresh_token, firstTokens.refresh_token, "Hydra did not rotate the refresh token");
      assert.equal((await as.introspect(firstTokens.refresh_token)).active, false, "the used refresh token is still active");
      assert.deepEqual([as.consentApp.logins, provider.saved.authorizations.length], [1, 1], "refreshing asked for a sign-in");

      // Revoking the grant at Hydra: the token is refused at once, and
      // the SDK, whose refresh token is revoked too, asks for a sign-in.
      await as.revokeConsent();
      const revoked = await fetch(server.url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${refreshed.access_token}` },
        body: "{}",
      });
      await revoked.arrayBuffer();
      assert.equal(revoked.status, 401);
      assert.match(revoked.headers.get("www-authenticate"), /^Bearer error="invalid_token", /);
      await assert.rejects(client.callTool({ name: "counter", arguments: { name: "after-revoke" } }), UnauthorizedError);
      assert.equal(provider.saved.authorizations.length, 2, "the SDK did not ask for a new sign-in");
      assert.equal(provider.saved.tokens, undefined);
      assert.deepEqual(countEffects(effects), { "signed-in": 1, "after-expiry": 1 }, "a call ran without a grant");
    } finally {
      await client.close();
    }

    // Signing in again works, with the same registration; this time the
    // sign-in URL is opened as `codemode-mcp login` opens one, by running
    // the program $BROWSER names (lib/hydra-browser.mjs).
    const again = await connect(server.url, provider);
    assert.ok(again.unauthorized);
    const url = provider.saved.authorizations.at(-1);
    const opened = await execFileAsync(hydraBrowser, [url.href], { env: { ...process.env, ...as.browserEnv() } });
    assert.match(opened.stderr, /signed in, sent to .*\/callback: Signed in\. You can close this window\./);
    const q = receiver.received.at(-1);
    assert.equal(q.get("state"), url.searchParams.get("state"));
    await again.transport.finishAuth(q.get("code"));
    const { client: back } = await connect(server.url, provider);
    try {
      assert.equal(await call(back, "counter", { name: "after-revoke" }), "1");
    } finally {
      await back.close();
    }
    assert.equal(as.consentApp.logins, 2);
    assert.deepEqual(countEffects(effects), { "signed-in": 1, "after-expiry": 1, "after-revoke": 1 });
  });

  test("a pre-registered client: a token Hydra binds to another resource's audience is refused", async () => {
    const other = "http://127.0.0.1:9/elsewhere";
    const client = await as.createClient({
      client_name: "pre-registered",
      redirect_uris: [receiver.url],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "mcp:tools offline_access",
      audience: [server.url, other],
    });
    for (const [audience, wantStatus] of [[server.url, 200], [other, 401]]) {
      const provider = memoryProvider(receiver.url, {
        clientInformation: { client_id: client.client_id, issuer: as.issuer },
        authorizeParams: { audience },
      });
      const { unauthorized, transport } = await connect(server.url, provider);
      assert.ok(unauthorized);
      await authorize(browser, as, provider, transport);
      const { access_token } = provider.saved.tokens;
      assert.deepEqual((await as.introspect(access_token)).aud, [audience]);
      const res = await fetch(server.url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${access_token}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
      });
      await res.arrayBuffer();
      assert.equal(res.status, wantStatus, `a token for ${audience}`);
      if (wantStatus === 401) {
        assert.match(res.headers.get("www-authenticate"), /error_description="the access token is for another resource/);
      }
    }
  });
});
