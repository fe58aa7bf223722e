// A browser for the conformance suite's authorization servers, which
// approve at once: it fetches the authorization URL codemode-mcp opens
// (through $BROWSER, as xdg-open would) and follows the redirects, the last
// of which lands on codemode-mcp's loopback listener and completes the
// sign-in. It prints the page it ends on.
const url = process.argv[2];
if (!url) {
  console.error("usage: browser.mjs URL");
  process.exit(2);
}
const res = await fetch(url, { redirect: "follow" });
const text = await res.text();
console.error(`browser: ${res.status} ${text.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim()}`);
process.exit(res.ok ? 0 : 1);
