// Issue 31 acceptance (traces): a real Jaeger receives, over OTLP, the
// trace of a program making three calls, one of which pauses and is
// approved: the run's span (continuing the client's traceparent), its
// call spans, the replay after the approval (a child of the first pass,
// linked to it), and the spans the downstream fixture server made from
// the traceparent each call gave it in _meta — found through Jaeger's
// query API.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { tempDir, writeConfig, connectStdio, callTool, fixtureBin } from "../lib/helpers.mjs";
import { startJaeger, skipJaeger } from "../lib/jaeger.mjs";

const program = `async () => {
  const a = await reads.counter({ name: "a" });
  const w = await writes.counter({ name: "w" });
  const b = await reads.counter({ name: "b" });
  return { a, w, b };
}`;

// tag returns a span's tag value.
const tag = (span, key) => span.tags.find((t) => t.key === key)?.value;

// parentOf returns the span id a span is the child of, or "".
const parentOf = (span) => span.references[0]?.spanID ?? "";

describe("traces", { skip: skipJaeger }, () => {
  test("a paused and approved run is one trace in Jaeger, with the downstream's spans", async () => {
    const jaeger = await startJaeger();
    try {
      const dir = tempDir();
      const fixture = (approve) => `
    command: ${JSON.stringify(fixtureBin)}
    args: ["-otlp", ${JSON.stringify(jaeger.otlpHTTP + "/v1/traces")}]
    env: { FIXTURE_SIDE_EFFECTS: ${JSON.stringify(path.join(dir, "effects.txt"))} }${approve ? '\n    approve: ["counter"]' : ""}`;
      const cfg = writeConfig(dir, `
store:
  path: ${JSON.stringify(path.join(dir, "codemode.db"))}
sandbox:
  timeout: 10s
approvals:
  elicitation: false
telemetry:
  service_name: codemode-e2e
  traces:
    exporter: otlp
    protocol: http/protobuf
    endpoint: ${jaeger.otlpHTTP}
connectors:
  reads:${fixture(false)}
  writes:${fixture(true)}
`);
      const traceId = randomBytes(16).toString("hex");
      const callerSpan = randomBytes(8).toString("hex");
      const client = await connectStdio(cfg, { env: { OTEL_TRACES_EXPORTER: "none" } }); // the file wins
      let id;
      try {
        const res = await client.callTool(
          { name: "codemode", arguments: { code: program }, _meta: { traceparent: `00-${traceId}-${callerSpan}-01` } },
          undefined,
          { timeout: 120000 },
        );
        const first = res.structuredContent;
        assert.equal(first.status, "paused", JSON.stringify(first));
        id = first.executionId;
        const approved = await callTool(client, "codemode_approve", { executionId: id });
        assert.equal(approved.outcome.status, "completed", JSON.stringify(approved.outcome));
      } finally {
        await client.close(); // the server flushes its spans as it exits
      }

      // 2 passes, 2 sandbox spans, 5 call spans, 3 fixture spans, and
      // the store's writes.
      const trace = await jaeger.trace(traceId, (t) =>
        t.spans.filter((s) => t.processes[s.processID].serviceName === "fixture-mcpserver").length >= 3 &&
        t.spans.some((s) => s.operationName === "codemode.replay"));
      const byId = new Map(trace.spans.map((s) => [s.spanID, s]));
      const service = (s) => trace.processes[s.processID].serviceName;
      const opOf = (spanID) => byId.get(spanID)?.operationName ?? (spanID === callerSpan ? "<client>" : `<${spanID}>`);

      const runs = trace.spans.filter((s) => s.operationName === "codemode.run");
      const replays = trace.spans.filter((s) => s.operationName === "codemode.replay");
      assert.equal(runs.length, 1, "one codemode.run span");
      assert.equal(replays.length, 1, "one codemode.replay span");
      const [run] = runs;
      const [replay] = replays;
      assert.equal(service(run), "codemode-e2e");
      assert.equal(tag(run, "codemode.execution_id"), id);
      assert.equal(tag(run, "codemode.status"), "paused");
      assert.equal(tag(replay, "codemode.status"), "completed");
      assert.equal(parentOf(run), callerSpan, "the run continues the client's traceparent");
      // The replay is the first pass's child and links to it; Jaeger shows
      // a link to the parent as the parent reference, of type FOLLOWS_FROM
      // (the OTLP translator's rule), so one reference names the run.
      assert.deepEqual(replay.references.map((r) => [r.refType, r.spanID]), [["FOLLOWS_FROM", run.spanID]],
        `the replay follows from the first pass: ${JSON.stringify(replay.references)}`);

      const calls = trace.spans
        .filter((s) => s.operationName.startsWith("call "))
        .map((s) => `${opOf(parentOf(s))} > ${s.operationName} ${tag(s, "codemode.call.outcome")}`)
        .sort();
      assert.deepEqual(calls, [
        "codemode.replay > call reads.counter executed",
        "codemode.replay > call reads.counter replayed",
        "codemode.replay > call writes.counter executed",
        "codemode.run > call reads.counter executed",
        "codemode.run > call writes.counter paused",
      ].sort());
      const approvedCall = trace.spans.find((s) => s.operationName === "call writes.counter" && tag(s, "codemode.call.outcome") === "executed");
      assert.equal(tag(approvedCall, "codemode.approval.waited"), true);

      // The downstream's own spans are the children of the executed calls.
      const downstream = trace.spans
        .filter((s) => service(s) === "fixture-mcpserver")
        .map((s) => `${opOf(parentOf(s))} ${tag(byId.get(parentOf(s)), "codemode.call.outcome")} > ${s.operationName}`)
        .sort();
      assert.deepEqual(downstream, [
        "call reads.counter executed > fixture counter",
        "call reads.counter executed > fixture counter",
        "call writes.counter executed > fixture counter",
      ]);
      for (const name of ["codemode.sandbox", "codemode.store.write"]) {
        assert.ok(trace.spans.some((s) => s.operationName === name), `a ${name} span`);
      }

      // And the service's traces list it.
      const listed = await jaeger.traces("codemode-e2e");
      assert.ok(listed.some((t) => t.traceID === traceId), "the trace is listed for the service");
    } finally {
      await jaeger.stop();
    }
  });
});
