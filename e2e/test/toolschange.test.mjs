// A downstream server whose tool list changes while codemode-mcp runs: the
// new tool is callable from the next program, the codemode tool's
// description lists it, and the client is told (notifications/tools/list_changed).
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { tempDir, writeConfig, connectStdio, codemode, fixtureBin } from "../lib/helpers.mjs";

test("a downstream's new tool reaches programs, the description and the client", async () => {
  const dir = tempDir();
  // The budget is set so that the fixture's declarations are inlined
  // whatever tools it gains.
  const cfg = writeConfig(dir, `
server:
  description_budget: 4000
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
approvals:
  elicitation: false
connectors:
  fx:
    command: ${JSON.stringify(fixtureBin)}
`);
  const client = await connectStdio(cfg);
  try {
    let announced = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => { announced++; });
    const describe = async () => (await client.listTools()).tools.find((t) => t.name === "codemode").description;
    assert.doesNotMatch(await describe(), /brand_new/);

    const before = await codemode(client, `async () => await fx.brand_new({})`);
    assert.equal(before.outcome.status, "error");
    assert.match(before.outcome.error, /fx\.brand_new is not a method of fx/);

    const add = await codemode(client, `async () => await fx.add_tool({ name: "brand_new" })`);
    assert.equal(add.outcome.status, "completed", JSON.stringify(add.outcome));

    // The refresh is asynchronous (the downstream's announcement is handled
    // on codemode-mcp's own goroutine): wait for the client's notice.
    const deadline = Date.now() + 10000;
    while (announced === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(announced > 0, `no notifications/tools/list_changed; stderr:\n${client.stderrText()}`);
    assert.match(await describe(), /brand_new/);

    const after = await codemode(client, `async () => await fx.brand_new({})`);
    assert.equal(after.outcome.status, "completed", JSON.stringify(after.outcome));
    assert.equal(after.outcome.result, "I am brand_new");
  } finally {
    await client.close();
  }
});

test("forward_unknown: a tool the server registers mid-program is called by name, approval-gated unless no_approve", async () => {
  const dir = tempDir();
  const cfg = writeConfig(dir, `
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
approvals:
  elicitation: false
connectors:
  fx:
    command: ${JSON.stringify(fixtureBin)}
    forward_unknown: true
    no_approve: ["quick_*"]
`);
  const client = await connectStdio(cfg);
  try {
    // Registered and called in the same program: the catalog it began
    // with does not list it.
    const quick = await codemode(client, `async () => { await fx.add_tool({ name: "quick_one" }); return await fx.quick_one({}); }`);
    assert.equal(quick.outcome.status, "completed", JSON.stringify(quick.outcome));
    assert.equal(quick.outcome.result, "I am quick_one");
    const gated = await codemode(client, `async () => { await fx.add_tool({ name: "gated" }); return await fx.gated({ n: 1 }); }`);
    assert.equal(gated.outcome.status, "paused", JSON.stringify(gated.outcome));
    assert.deepEqual(gated.outcome.pending.map((p) => `${p.connector}.${p.method}`), ["fx.gated"]);
  } finally {
    await client.close();
  }
});
