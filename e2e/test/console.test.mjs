// Issue 16 acceptance, in a real browser as a new user would: the approval
// console served beside the MCP endpoint (and by `codemode-mcp console`
// for a stdio deployment), logged into with the token; Approve, Reject and
// Roll back with their side effects counted outside the server; nothing
// without the token; no cross-site form post.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { spawn } from "node:child_process";
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  tempDir, writeConfig, startHTTP, connectStdio, codemode, callTool, bin, fixtureBin,
} from "../lib/helpers.mjs";
import { launchBrowser, screenshot, skipBrowser } from "../lib/browser.mjs";

const token = "console-e2e-token-51c0d9";

// config: the fixture server as fx, whose counter needs approval and is
// reverted by uncount; both count into effects (outside the server).
function config(dir, { auth = true } = {}) {
  const effects = path.join(dir, "effects.txt");
  const cfg = writeConfig(dir, `
server:
  auth_token: "${auth ? token : ""}"
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
sandbox:
  timeout: 20s
approvals:
  elicitation: false
  tools: false
connectors:
  fx:
    command: ${JSON.stringify(fixtureBin)}
    env: { FIXTURE_SIDE_EFFECTS: ${JSON.stringify(effects)} }
    approve: ["counter"]
    revert:
      counter: "(args) => fx.uncount({ name: args.name })"
`);
  return { cfg, effects };
}

// count returns how many times name was written to the effects file.
function count(effects, name) {
  if (!existsSync(effects)) return 0;
  return readFileSync(effects, "utf8").split("\n").filter((l) => l.trim() === name).length;
}

// pause runs a program that counts name (a call needing approval) and
// returns its execution id.
async function pause(client, name) {
  const { outcome } = await codemode(client, `async () => {
  const counted = await fx.counter({ name: ${JSON.stringify(name)} });
  return { name: ${JSON.stringify(name)}, counted };
}`);
  assert.equal(outcome.status, "paused", JSON.stringify(outcome));
  assert.deepEqual(outcome.pending.map((p) => [p.connector, p.method]), [["fx", "counter"]]);
  return outcome.executionId;
}

// login fills the login form the console shows.
async function login(page, tok) {
  await page.getByLabel("Token").fill(tok);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")), page.getByRole("button", { name: "Log in" }).click()]);
}

// decideButton is the button of a decision (Approve, Reject) in the card
// of run id; it names the run.
function decideButton(page, id, button) {
  return page.locator(`#run-${id}`).getByRole("button", { name: new RegExp(`^${button} .*run ${id}$`) });
}

// decide clicks a button in the card of run id and waits for the run's
// page.
async function decide(page, id, button) {
  await Promise.all([page.waitForURL(`**/runs/${id}`), decideButton(page, id, button).click()]);
}

// serveAttacker serves a page on another origin that posts a form to
// the console as soon as it loads.
async function serveAttacker(action, fields) {
  const inputs = Object.entries(fields).map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`).join("");
  const srv = http.createServer((req, res) => {
    res.setHeader("Content-Type", "text/html");
    res.end(`<!doctype html><title>cute cats</title><form id="f" method="post" action="${action}">${inputs}</form><script>document.getElementById("f").submit()</script>`);
  });
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${srv.address().port}/`, close: () => new Promise((r) => srv.close(r)) };
}

describe("the approval console beside streamable HTTP", { skip: skipBrowser }, () => {
  let dir, cfg, effects, server, base, client, browser, page;
  before(async () => {
    dir = tempDir();
    ({ cfg, effects } = config(dir));
    server = await startHTTP(cfg, "http");
    base = `http://${server.url.host}`;
    client = new Client({ name: "e2e", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(server.url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await client?.close();
    await server?.stop();
  });

  test("the model cannot approve: approval tools are withheld", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const withheld of ["codemode_approve", "codemode_reject", "codemode_rollback"]) {
      assert.ok(!names.includes(withheld), `${withheld} is offered: ${names}`);
    }
  });

  test("without the token every console URL answers the login page or 401", async () => {
    const id = await pause(client, "unseen");
    const urls = ["/", "/runs", `/runs/${id}`, "/runs?status=paused", "/snippets", "/api/version", "/anything/else", `/runs/${id}/approve`];
    for (const u of urls) {
      const res = await fetch(base + u, { redirect: "manual" });
      const body = await res.text();
      assert.equal(res.status, 401, `GET ${u}: ${res.status}`);
      assert.ok(body.includes('name="token"') || u.startsWith("/api/"), `GET ${u} is neither the login page nor a bare 401:\n${body}`);
      assert.ok(!body.replace(/name="next" value="[^"]*"/, "").includes(id) && !body.includes("unseen"), `GET ${u} shows the run`);
    }
    for (const action of ["approve", "reject", "rollback"]) {
      const res = await fetch(`${base}/runs/${id}/${action}`, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "csrf=x&digest=y", redirect: "manual" });
      assert.equal(res.status, 401, `POST ${action}: ${res.status}`);
    }
    // The MCP endpoint's bearer token does not open the console.
    const bearer = await fetch(base + "/", { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(bearer.status, 401);

    // In the browser: the login form, and nothing of the run.
    const res = await page.goto(base + "/");
    assert.equal(res.status(), 401);
    assert.ok(await page.getByLabel("Token").isVisible());
    assert.ok(!(await page.content()).includes("unseen"));
    await page.getByLabel("Token").fill("not-the-token");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByText("That is not the token").waitFor();
    assert.equal(count(effects, "unseen"), 0);
  });

  test("log in, see the paused run, Approve: the run completes, the side effect happens once, the page shows the result", async () => {
    const id = await pause(client, "approve-me");
    await page.goto(base + "/");
    await login(page, token);
    const card = page.locator(`#run-${id}`);
    await card.waitFor();
    const text = await card.innerText();
    for (const want of [id, "fx.counter", `"name": "approve-me"`, "Needs approval: the configuration's approve list for fx matches counter"]) {
      assert.ok(text.includes(want), `the run's card lacks ${want}:\n${text}`);
    }
    assert.ok(await card.locator(".code .marked").count() >= 1, "the calling line is not marked");
    await screenshot(page, "console-pending.png");
    assert.equal(count(effects, "approve-me"), 0, "the call ran before approval");

    await decide(page, id, "Approve");
    await page.getByRole("heading", { name: "Approved: the run completed." }).waitFor();
    const outcome = await page.locator(".outcome").innerText();
    assert.ok(outcome.includes(`"name": "approve-me"`) && outcome.includes(`"counted": 1`), outcome);
    await screenshot(page, "console-approved.png");
    assert.equal(count(effects, "approve-me"), 1, "the approved call did not run exactly once");

    // Back on the list, the run is gone from what awaits approval; a
    // replayed form is refused and runs nothing again.
    await page.goto(base + "/");
    assert.equal(await page.locator(`#run-${id}`).count(), 0);
    assert.equal(count(effects, "approve-me"), 1);
  });

  test("Reject with a reason: the run ends rejected and the call never runs", async () => {
    const id = await pause(client, "reject-me");
    await page.goto(base + "/");
    await page.locator(`#run-${id}`).getByLabel("Reason for rejecting (optional)").fill("not this one");
    await decide(page, id, "Reject");
    await page.getByRole("heading", { name: "Rejected: the run was rejected." }).waitFor();
    assert.ok((await page.locator(".outcome").innerText()).includes("not this one"));
    const { outcome } = await callTool(client, "codemode_executions", { status: "rejected" });
    assert.ok(JSON.stringify(outcome).includes(id), JSON.stringify(outcome));
    assert.equal(count(effects, "reject-me"), 0);
  });

  test("Roll back: the applied call is reverted through its revert function", async () => {
    const id = await pause(client, "rollback-me");
    await page.goto(base + "/");
    await decide(page, id, "Approve");
    await page.getByRole("heading", { name: "Approved: the run completed." }).waitFor();
    assert.equal(count(effects, "rollback-me"), 1);

    page.once("dialog", (d) => d.accept()); // "Roll back run …?"
    await Promise.all([page.waitForURL(`**/runs/${id}`), page.getByRole("button", { name: "Roll back" }).click()]);
    await page.getByRole("heading", { name: "Rolled back: the run was rolled back." }).waitFor();
    assert.ok((await page.locator(".outcome").innerText()).includes("Reverted calls: 1."));
    assert.equal(count(effects, "-rollback-me"), 1, "the revert did not run once");
    assert.equal(await page.getByRole("button", { name: "Roll back" }).count(), 0, "Roll back is still offered");

    // The audit trail shows the calls with their states, filtered.
    await page.goto(base + "/runs?status=rolled_back");
    const row = page.locator(`#r-${id}`);
    await row.locator("summary").first().click();
    const trail = await row.innerText();
    assert.ok(trail.includes("fx.counter") && trail.includes("reverted") && trail.includes("fx.uncount") && trail.includes("reverts call 1"), trail);
  });

  test("a new pause never moves what is under the pointer: the click approves the run it was aimed at", async () => {
    const aimed = await pause(client, "aimed-at");
    await page.goto(base + "/");
    const button = decideButton(page, aimed, "Approve");
    assert.equal((await button.innerText()).replace(/\s+/g, " ").trim(), `Approve fx.counter of run ${aimed}`);
    await button.hover();
    const before = await button.boundingBox();

    // Another run pauses while the pointer rests on the button; the page
    // notices within its polling interval.
    const other = await pause(client, "not-aimed-at");
    await page.waitForFunction((id) => {
      const n = document.getElementById("notice");
      return (n && !n.hidden) || document.getElementById(`run-${id}`) !== null;
    }, other, { timeout: 20000 });
    assert.deepEqual(await button.boundingBox(), before, "the button under the pointer moved");
    assert.match(await page.locator("#notice").innerText(), /changed\. It updates when the pointer leaves the list/);
    await screenshot(page, "console-change-waits.png");

    // A click where the pointer is approves the run it was aimed at.
    await Promise.all([page.waitForURL("**/runs/**"), page.mouse.down().then(() => page.mouse.up())]);
    assert.ok(page.url().endsWith(`/runs/${aimed}`), `the click went to ${page.url()}, not run ${aimed}`);
    await page.getByRole("heading", { name: "Approved: the run completed." }).waitFor();
    assert.equal(count(effects, "aimed-at"), 1);
    assert.equal(count(effects, "not-aimed-at"), 0, "the other run was approved");

    // The new pause is listed below those that were there before it.
    await page.goto(base + "/");
    const ids = await page.locator("article.run").evaluateAll((cards) => cards.map((c) => c.id));
    assert.equal(ids.at(-1), `run-${other}`, `the new pause is not last: ${ids}`);
  });

  test("a form posted from a page of another origin is refused, and nothing runs", async () => {
    const id = await pause(client, "csrf-me");
    // The attacker may know everything but the session's CSRF token.
    await page.goto(`${base}/runs/${id}`);
    const digest = await page.locator(`input[name="digest"]`).first().getAttribute("value");
    // From another port of the same host (same site: the browser sends the
    // session cookie), then from another host name (another site).
    for (const host of ["127.0.0.1", "localhost"]) {
      const attacker = await serveAttacker(`${base}/runs/${id}/approve`, { csrf: "guessed", digest });
      try {
        const target = attacker.url.replace("127.0.0.1", host);
        const answer = page.waitForResponse((r) => r.url().endsWith(`/runs/${id}/approve`));
        await page.goto(target);
        const res = await answer;
        assert.equal(res.status(), 403, `from ${target}: ${res.status()}`);
        await page.getByText("came from another site or origin").waitFor();
      } finally {
        await attacker.close();
      }
    }
    const { outcome } = await callTool(client, "codemode_pending", { executionId: id });
    assert.deepEqual(outcome.pending.map((p) => p.args), [{ name: "csrf-me" }], JSON.stringify(outcome));
    assert.equal(count(effects, "csrf-me"), 0, "a cross-site post made the call");
  });
});

describe("codemode-mcp console for a stdio deployment", { skip: skipBrowser }, () => {
  let dir, cfg, effects, client, consoleProc, base, consoleToken, browser, page;
  before(async () => {
    dir = tempDir();
    ({ cfg, effects } = config(dir, { auth: false }));
    client = await connectStdio(cfg);
    consoleProc = spawn(bin, ["console", "--config", cfg, "--addr", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    [base, consoleToken] = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`console did not start:\n${err}`)), 60000);
      consoleProc.stderr.on("data", (d) => {
        err += d;
        const m = err.match(/open (http:\/\/127\.0\.0\.1:\d+)\/ and log in with the token ([0-9a-f]+) /);
        if (m) {
          clearTimeout(timer);
          resolve([m[1], m[2]]);
        }
      });
      consoleProc.on("exit", (code) => reject(new Error(`console exited ${code}:\n${err}`)));
    });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await client?.close();
    if (consoleProc && consoleProc.exitCode === null) {
      const exited = new Promise((r) => consoleProc.on("exit", r));
      consoleProc.kill("SIGTERM");
      await exited;
    }
  });

  test("serves the stdio server's store while it runs: a new pause appears, Approve makes the call once", async () => {
    await page.goto(base + "/");
    assert.ok(await page.getByLabel("Token").isVisible(), "no login form");
    await login(page, consoleToken);
    await page.getByText("Nothing awaits approval").waitFor();

    // The stdio server pauses a run; the open page shows it without a reload.
    const id = await pause(client, "stdio-me");
    await page.locator(`#run-${id}`).waitFor({ timeout: 20000 });
    assert.ok((await page.locator(`#run-${id}`).innerText()).includes(`"name": "stdio-me"`));

    await decide(page, id, "Approve");
    await page.getByRole("heading", { name: "Approved: the run completed." }).waitFor();
    assert.ok((await page.locator(".outcome").innerText()).includes(`"counted": 1`));
    assert.equal(count(effects, "stdio-me"), 1);

    // The stdio server goes on serving, and sees the run completed.
    const { outcome } = await codemode(client, "1 + 1");
    assert.equal(outcome.result, 2);
    const pending = await callTool(client, "codemode_pending", {});
    assert.ok(!JSON.stringify(pending.outcome).includes(id), JSON.stringify(pending.outcome));
  });
});
