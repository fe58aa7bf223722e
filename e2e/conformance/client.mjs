// The conformance suite's client side (`conformance client --command "node
// client.mjs"`): it runs `codemode-mcp check --url URL`, the documented way
// to check a remote MCP server without a config file, with the flags each
// scenario's data calls for. The suite gives the server's URL as the last
// argument, the scenario's name in MCP_CONFORMANCE_SCENARIO and its data
// (client credentials, keys) in MCP_CONFORMANCE_CONTEXT; sign-ins go
// through $BROWSER, which browser.mjs plays.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = process.env.CODEMODE_BIN || path.resolve(here, "..", "..", "bin", "codemode-mcp");
const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO || "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const work = mkdtempSync(path.join(tmpdir(), "codemode-conformance-"));

const args = ["check", "--url", url];
if (scenario.startsWith("auth/")) {
  // Every auth scenario's server has test-tool; calling it is what makes
  // a server that wants more scopes for calls say so (scope step-up).
  args.push("--call", "test-tool");
  // An operator who publishes a client ID metadata document configures
  // its URL; servers that do not accept one get a registration instead.
  args.push("--oauth-client-metadata-url", "https://conformance-test.local/client-metadata.json");
}
// The other client scenarios call their server's one tool; the elicitation
// scenario's tool asks for input, which the check answers with the form's
// defaults (SEP-1034).
if (scenario === "tools_call") args.push("--call", "add_numbers", "--args", JSON.stringify({ a: 2, b: 40 }));
if (scenario === "sse-retry") args.push("--call", "test_reconnection");
if (scenario === "elicitation-sep1034-client-defaults") {
  args.push("--call", "test_client_elicitation_defaults", "--elicitation", "defaults");
}
if (context.client_id) args.push("--oauth-client-id", context.client_id);
if (context.client_secret) {
  const f = path.join(work, "client-secret");
  writeFileSync(f, context.client_secret, { mode: 0o600 });
  args.push("--oauth-client-secret-file", f);
}
if (context.private_key_pem) {
  const f = path.join(work, "client-key.pem");
  writeFileSync(f, context.private_key_pem, { mode: 0o600 });
  args.push("--oauth-private-key", f);
}
if (scenario.startsWith("auth/client-credentials")) args.push("--oauth-grant", "client_credentials");

const browser = `${process.execPath} ${path.join(here, "browser.mjs")}`;
const r = spawnSync(bin, args, { stdio: "inherit", env: { ...process.env, BROWSER: browser } });
rmSync(work, { recursive: true, force: true });
process.exit(r.status ?? 1);
