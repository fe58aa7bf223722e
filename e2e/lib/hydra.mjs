// A real OAuth 2.1 / OpenID Connect authorization server for the
// end-to-end suite: Ory Hydra v2.3.0, built by scripts/hydra.sh (which
// prints the binary's path; scripts/test.sh passes it as $HYDRA_BIN), run
// on loopback with an in-memory database, with a login-and-consent app
// that signs every request in as one fixed subject.
//
//   const as = await startHydra({ accessTokenTTL: "3s" });
//   ... a client discovers as.issuer from a protected resource ...
//   const { url } = await signIn(browser, authorizationURL, as);
//   await as.revokeConsent();          // the subject's grants and tokens
//   await as.introspect(accessToken);  // { active, sub, aud, exp, ... }
//   await as.stop();
//
// startProtectedServer runs the Go fixture MCP server as a resource that
// this Hydra protects (internal/fixture/mcpserver, -oauth-issuer).
//
// Hydra is started as `hydra serve all --dev` (plain HTTP; --dev also
// allows http:// redirect URIs) with the configuration in environment
// variables, so no file is written: random free ports, the issuer
// http://127.0.0.1:PORT/, SECRETS_SYSTEM, DSN=memory, PKCE enforced,
// dynamic client registration on (POST /oauth2/register, advertised as
// registration_endpoint in the discovery document), access tokens opaque
// and valid for accessTokenTTL; refresh tokens rotate on use with no grace
// period (Hydra's default), so an old refresh token is refused.
import { spawn } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";
import { builtTool, fixtureBin, freePorts, watchProcess } from "./helpers.mjs";

export const hydraVersion = "v2.3.0";

// hydraBin is $HYDRA_BIN, else where scripts/hydra.sh caches its build;
// hydraMissing is why the tests that need Hydra cannot run here, or "".
// In CI (CI=true) a missing Hydra is a failure, not a reason to skip:
// startHydra throws.
export const { bin: hydraBin, missing: hydraMissing, skip: skipHydra } = builtTool({
  name: "hydra", title: "Ory Hydra", version: hydraVersion, envVar: "HYDRA_BIN", script: "scripts/hydra.sh",
});

// hydraBrowser is the path of a $BROWSER stand-in that signs in through
// Chromium (lib/hydra-browser.mjs; give it startHydra's browserEnv()).
export const hydraBrowser = fileURLToPath(new URL("./hydra-browser.mjs", import.meta.url));

// How long startHydra waits for Hydra to answer its health check.
const startTimeoutMs = 60000;

// Hydra's log is kept for error messages, at most this many bytes (the
// end of it).
const logLimit = 64 * 1024;

// startHydra starts Hydra and its login-and-consent app and resolves once
// Hydra is healthy. Options:
//   subject          who every sign-in is for ("e2e-user"), until
//                    signInAs changes it
//   accessTokenTTL   access token lifetime, as Hydra reads durations ("1h")
//   refreshTokenTTL  refresh token lifetime ("720h")
//   scopes           scopes the discovery document advertises besides
//                    Hydra's own (offline_access, offline, openid)
//   env              more Hydra configuration as environment variables
//
// The result:
//   issuer, publicURL, adminURL   Hydra's URLs (issuer ends in "/")
//   consentApp                    { url, logins, consents }: counts of the
//                                 sign-ins and consents it accepted
//   admin(method, path, body)     a call to Hydra's admin API (JSON)
//   createClient(metadata)        a client made through the admin API
//                                 (a pre-registered client)
//   introspect(token)             the admin API's introspection of token
//   subject                       who the next sign-in is for
//   signInAs(subject)             makes the next sign-ins subject's (two
//                                 people of one team, one after the other)
//   revokeConsent(subject?)       revokes the subject's consent sessions
//                                 for every client, and with them their
//                                 access and refresh tokens
//   browserEnv()                  the environment lib/hydra-browser.mjs,
//                                 a $BROWSER stand-in, needs
//   untilInactive(token)          resolves once introspection says token
//                                 is no longer active (it expired)
//   log()                         the end of Hydra's log
//   stop()                        stops Hydra and the app, and waits
export async function startHydra({ subject = "e2e-user", accessTokenTTL = "1h", refreshTokenTTL = "720h", scopes = [], env = {} } = {}) {
  if (hydraMissing) throw new Error(hydraMissing);
  const app = await startConsentApp(subject);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const hydra = await launch({ app, accessTokenTTL, refreshTokenTTL, scopes, env });
        app.adminURL = hydra.adminURL;
        return {
          ...hydra,
          get subject() {
            return app.subject;
          },
          signInAs: (who) => {
            app.subject = who;
          },
          consentApp: app.state,
          browserEnv: () => ({ HYDRA_SIGNIN_PUBLIC_URL: hydra.publicURL, HYDRA_SIGNIN_CONSENT_URL: app.state.url }),
          untilInactive: (token) => untilInactive(hydra, token),
          revokeConsent: (who = app.subject) => hydra.admin("DELETE", `/admin/oauth2/auth/sessions/consent?${new URLSearchParams({ subject: who, all: "true" })}`),
          stop: async () => {
            await hydra.stop();
            await app.close();
          },
        };
      } catch (err) {
        // A port taken between freePort and Hydra's bind: try new ones.
        if (attempt >= 3 || !/address already in use/.test(err.message)) throw err;
      }
    }
  } catch (err) {
    await app.close();
    throw err;
  }
}

// launch starts one Hydra process on fresh ports.
async function launch({ app, accessTokenTTL, refreshTokenTTL, scopes, env }) {
  const [publicPort, adminPort] = await freePorts(2);
  const publicURL = `http://127.0.0.1:${publicPort}`;
  const adminURL = `http://127.0.0.1:${adminPort}`;
  const issuer = `${publicURL}/`;
  const config = {
    DSN: "memory",
    SECRETS_SYSTEM: randomBytes(24).toString("hex"),
    SERVE_PUBLIC_HOST: "127.0.0.1",
    SERVE_PUBLIC_PORT: String(publicPort),
    SERVE_ADMIN_HOST: "127.0.0.1",
    SERVE_ADMIN_PORT: String(adminPort),
    URLS_SELF_ISSUER: issuer,
    URLS_SELF_PUBLIC: issuer,
    URLS_LOGIN: `${app.url}/login`,
    URLS_CONSENT: `${app.url}/consent`,
    TTL_ACCESS_TOKEN: accessTokenTTL,
    TTL_REFRESH_TOKEN: refreshTokenTTL,
    OAUTH2_PKCE_ENFORCED: "true",
    OIDC_DYNAMIC_CLIENT_REGISTRATION_ENABLED: "true",
    // Hydra serves registration but does not advertise it unless told.
    WEBFINGER_OIDC_DISCOVERY_CLIENT_REGISTRATION_URL: `${publicURL}/oauth2/register`,
    ...(scopes.length ? { WEBFINGER_OIDC_DISCOVERY_SUPPORTED_SCOPE: scopes.join(",") } : {}),
    LOG_LEVEL: "info",
    LOG_FORMAT: "text",
    ...env,
  };
  // Only PATH and HOME from this process: a DSN or SECRETS_* in the
  // environment of whoever runs the tests must not reach Hydra.
  const proc = spawn(hydraBin, ["serve", "all", "--dev"], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...config },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Hydra shuts down on SIGTERM; SIGKILL if it has not within 10 s.
  const { log, exited, stop } = watchProcess(proc, logLimit);

  const admin = async (method, p, body) => {
    const res = await fetch(adminURL + p, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`Hydra admin ${method} ${p}: ${res.status} ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : undefined;
  };

  try {
    await waitHealthy(adminURL, exited, log);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    issuer,
    publicURL,
    adminURL,
    proc,
    log,
    stop,
    admin,
    createClient: (metadata) => admin("POST", "/admin/clients", metadata),
    introspect: async (token) => {
      const res = await fetch(`${adminURL}/admin/oauth2/introspect`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token }),
      });
      if (!res.ok) throw new Error(`Hydra introspection: ${res.status} ${(await res.text()).slice(0, 500)}`);
      return res.json();
    },
  };
}

// waitHealthy polls Hydra's readiness endpoint (it is up once both its
// listeners serve and its migrations ran) until it answers 200, Hydra
// exits, or startTimeoutMs passes.
async function waitHealthy(adminURL, exited, log) {
  let gone = null;
  exited.then((e) => (gone = e));
  const deadline = Date.now() + startTimeoutMs;
  while (Date.now() < deadline) {
    if (gone) throw new Error(`Hydra exited (${gone.code ?? gone.signal}) before it was healthy:\n${log()}`);
    try {
      const res = await fetch(`${adminURL}/health/ready`);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 50))]);
  }
  throw new Error(`Hydra was not healthy within ${startTimeoutMs} ms:\n${log()}`);
}

// untilInactive polls the introspection of token (every 100 ms, for at
// most two minutes) until Hydra says it is not active: how a test waits
// for an access token to expire without guessing how long that takes.
async function untilInactive(hydra, token) {
  const deadline = Date.now() + 120000;
  while ((await hydra.introspect(token)).active) {
    if (Date.now() > deadline) throw new Error("the token is still active after two minutes");
    await new Promise((r) => setTimeout(r, 100));
  }
}

const htmlEscapes = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHTML = (s) => String(s).replace(/[&<>"']/g, (c) => htmlEscapes[c]);

function page(title, body) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHTML(title)}</title></head><body><h1>${escapeHTML(title)}</h1>${body}</body></html>`;
}

// startConsentApp serves Hydra's login and consent pages on a free
// loopback port. Each is a page with one button, as a person would see:
// "Sign in" (as app.subject) and "Allow" (every requested scope and
// audience). Pressing it accepts the request through Hydra's admin API
// (app.adminURL, set once Hydra runs) and redirects the browser where
// Hydra says. Neither the login nor the consent is remembered, so every
// authorization request shows both pages. Hydra's challenges are opaque
// strings it round-trips through this app; they are passed on as given.
async function startConsentApp(subject) {
  // What the test sees: the app's URL and how many sign-ins and consents
  // it accepted.
  const state = { url: "", logins: 0, consents: 0 };
  const app = { adminURL: "", state, subject };

  const accept = async (kind, challenge, body) => {
    const res = await fetch(`${app.adminURL}/admin/oauth2/auth/requests/${kind}/accept?${new URLSearchParams({ [`${kind}_challenge`]: challenge })}`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`accept ${kind}: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text).redirect_to;
  };
  const get = async (kind, challenge) => {
    const res = await fetch(`${app.adminURL}/admin/oauth2/auth/requests/${kind}?${new URLSearchParams({ [`${kind}_challenge`]: challenge })}`);
    const text = await res.text();
    if (!res.ok) throw new Error(`get ${kind} request: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text);
  };

  const handle = async (req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const kind = url.pathname.slice(1);
    if (kind !== "login" && kind !== "consent") {
      res.writeHead(404).end();
      return;
    }
    if (req.method === "GET") {
      const challenge = url.searchParams.get(`${kind}_challenge`) ?? "";
      const r = await get(kind, challenge);
      const client = r.client?.client_name || r.client?.client_id || "";
      const detail =
        kind === "login"
          ? `<p>${escapeHTML(client)} asks you to sign in. You are <b>${escapeHTML(app.subject)}</b>.</p>`
          : `<p>${escapeHTML(client)} asks for: <span id="scopes">${escapeHTML((r.requested_scope ?? []).join(" "))}</span>` +
            `${r.requested_access_token_audience?.length ? `, for <span id="audience">${escapeHTML(r.requested_access_token_audience.join(" "))}</span>` : ""}.</p>`;
      const button = kind === "login" ? "Sign in" : "Allow";
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
      res.end(
        page(kind === "login" ? "Sign in" : "Allow access?", `${detail}<form method="post" action="/${kind}"><input type="hidden" name="challenge" value="${escapeHTML(challenge)}"><button type="submit">${button}</button></form>`),
      );
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405, { Allow: "GET, POST" }).end();
      return;
    }
    let body = "";
    for await (const chunk of req) {
      body += chunk;
      if (body.length > 16384) throw new Error("form too large");
    }
    const challenge = new URLSearchParams(body).get("challenge") ?? "";
    let to;
    if (kind === "login") {
      to = await accept("login", challenge, { subject: app.subject, remember: false });
      state.logins++;
    } else {
      const r = await get("consent", challenge);
      to = await accept("consent", challenge, {
        grant_scope: r.requested_scope ?? [],
        grant_access_token_audience: r.requested_access_token_audience ?? [],
        remember: false,
      });
      state.consents++;
    }
    res.writeHead(303, { Location: to }).end();
  };

  const srv = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
      res.end(`consent app: ${err.message}`);
    });
  });
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  app.url = state.url = `http://127.0.0.1:${srv.address().port}`;
  app.close = () =>
    new Promise((resolve) => {
      srv.closeAllConnections();
      srv.close(resolve);
    });
  return app;
}

// signIn drives a browser through an authorization request as a person
// would: it opens startURL (an authorization URL, or any page that leads
// to one) in a fresh browser context, presses "Sign in" and "Allow" on
// the consent app's pages, and resolves once the browser has left the
// authorization server for the client's redirect URI, with that URL (its
// code and state, or error) and the page's text. as is startHydra's
// result. With { context }, it signs in within that browser context (a
// page that keeps its cookies, as a console's session) and leaves it
// open, resolving with the page too.
export async function signIn(browser, startURL, as, { context: given } = {}) {
  const authOrigins = new Set([new URL(as.publicURL).origin, new URL(as.consentApp.url).origin]);
  const onAuth = (u) => authOrigins.has(u.origin);
  const context = given ?? (await browser.newContext());
  // Done once the browser has been to the authorization server and left
  // it. Requests count, not only pages shown: Hydra may redirect an
  // error to the client without showing anything.
  let visited = false;
  context.on("request", (r) => {
    if (r.isNavigationRequest() && onAuth(new URL(r.url()))) visited = true;
  });
  const done = (u) => visited && !onAuth(u);
  try {
    const page = await context.newPage();
    const fail = (err) => {
      throw new Error(`signing in, at ${page.url()}: ${err.message}`);
    };
    // Hydra shows an error it cannot send to the client (an unknown
    // client, a redirect URI not registered) on its own error page.
    const hydraError = (u) => onAuth(u) && u.pathname === "/oauth2/fallbacks/error";
    await page.goto(startURL, { waitUntil: "commit" });
    for (const name of ["Sign in", "Allow"]) {
      const button = page.getByRole("button", { name, exact: true });
      const next = await Promise.race([
        button.waitFor().then(() => "button"),
        page.waitForURL(done, { waitUntil: "commit" }).then(() => "left"),
        page.waitForURL(hydraError, { waitUntil: "commit" }).then(() => "error"),
      ]).catch(fail);
      if (next === "error") {
        const q = new URL(page.url()).searchParams;
        throw new Error(`signing in: Hydra refused the request: ${q.get("error")}: ${q.get("error_description")}`);
      }
      if (next === "left") break;
      await button.click();
    }
    await page.waitForURL(done, { waitUntil: "commit" }).catch(fail);
    await page.waitForLoadState("domcontentloaded").catch(() => {});
    return { url: page.url(), text: await page.locator("body").innerText().catch(() => ""), page: given ? page : undefined };
  } finally {
    if (!given) await context.close();
  }
}

// startProtectedServer starts the Go fixture MCP server on a free
// loopback port as a resource protected by as (startHydra's result): its
// tokens are checked by Hydra's introspection endpoint. Options: scope
// (the scopes its challenges and metadata name), require (those a token
// must carry), env (for the server: FIXTURE_SIDE_EFFECTS, say;
// FIXTURE_OAUTH_CALLS, a file to which each tools/call appends
// "SUBJECT TOOL": whose token it carried). Resolves
// with { url, metadataURL, stderr(), stop() }; url
// (http://127.0.0.1:PORT/mcp) is also its resource identifier.
export async function startProtectedServer(as, { scope = [], require = [], env = {} } = {}) {
  const args = ["-http", "127.0.0.1:0", "-oauth-issuer", as.issuer, "-oauth-introspect", `${as.adminURL}/admin/oauth2/introspect`,
    "-oauth-scope", scope.join(" "), "-oauth-require", require.join(" ")];
  const proc = spawn(fixtureBin, args, { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  const exited = new Promise((resolve) => proc.on("exit", resolve));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    await exited;
  };
  try {
    const addr = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the protected fixture did not start:\n${err}`)), 30000);
      proc.stderr.on("data", (d) => {
        err = (err + d.toString()).slice(-logLimit);
        const m = err.match(/listening on (127\.0\.0\.1:\d+)/);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`the protected fixture exited (${code}):\n${err}`));
      });
    });
    return {
      url: `http://${addr}/mcp`,
      metadataURL: `http://${addr}/.well-known/oauth-protected-resource/mcp`,
      stderr: () => err,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
