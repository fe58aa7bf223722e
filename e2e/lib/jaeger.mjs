// A real trace store for the end-to-end suite: Jaeger v2 (built on the
// OpenTelemetry collector), built by scripts/jaeger.sh (which prints the
// binary's path; scripts/test.sh passes it as $JAEGER_BIN), run on
// loopback with in-memory storage.
//
//   const jaeger = await startJaeger();
//   ... codemode-mcp exports to jaeger.otlpHTTP (…/v1/traces) ...
//   const trace = await jaeger.trace(traceId, (t) => t.spans.length >= 9);
//   await jaeger.stop();
//
// Jaeger is started as `jaeger --config <file>` with the otlp receiver
// (gRPC and HTTP), memory storage and jaeger_query (the UI and its HTTP
// API), each on a free loopback port; the collector's own metrics are
// off, so nothing listens beyond those.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { builtTool, tempDir, freePorts, watchProcess } from "./helpers.mjs";

export const jaegerVersion = "v1.76.0";

// jaegerBin is $JAEGER_BIN, else where scripts/jaeger.sh caches its build;
// jaegerMissing is why the tests that need Jaeger cannot run here, or "".
// In CI (CI=true) a missing Jaeger is a failure, not a reason to skip:
// startJaeger throws.
export const { bin: jaegerBin, missing: jaegerMissing, skip: skipJaeger } = builtTool({
  name: "jaeger", title: "Jaeger", version: jaegerVersion, envVar: "JAEGER_BIN", script: "scripts/jaeger.sh",
});

// How long startJaeger waits for Jaeger to answer, and jaeger.trace for a
// trace to be complete.
const startTimeoutMs = 60000;
const traceTimeoutMs = 30000;

// Jaeger's log is kept for error messages, at most this many bytes.
const logLimit = 64 * 1024;

// startJaeger starts Jaeger and resolves once its query API answers:
// { otlpHTTP, otlpGRPC, queryURL, trace(id, done), traces(service), stop(), log() }.
export async function startJaeger() {
  if (jaegerMissing) throw new Error(jaegerMissing);
  const [grpcPort, httpPort, queryPort, queryGRPCPort] = await freePorts(4);
  const dir = tempDir();
  const config = path.join(dir, "jaeger.yaml");
  writeFileSync(config, `
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${queryPort}
    grpc:
      endpoint: 127.0.0.1:${queryGRPCPort}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${grpcPort}
      http:
        endpoint: 127.0.0.1:${httpPort}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`);
  const proc = spawn(jaegerBin, ["--config", config], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const { log, exited, stop } = watchProcess(proc, logLimit);
  const queryURL = `http://127.0.0.1:${queryPort}`;
  const get = async (p) => {
    const res = await fetch(queryURL + p);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  let gone = null;
  exited.then((e) => (gone = e));
  try {
    const deadline = Date.now() + startTimeoutMs;
    for (;;) {
      if (gone) throw new Error(`Jaeger exited (${gone.code ?? gone.signal}) before it answered:\n${log()}`);
      try {
        if ((await get("/api/services")).status === 200) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`Jaeger did not answer within ${startTimeoutMs} ms:\n${log()}`);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 50))]);
    }
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    otlpHTTP: `http://127.0.0.1:${httpPort}`,
    otlpGRPC: `http://127.0.0.1:${grpcPort}`,
    queryURL,
    proc,
    log,
    stop,
    // traces lists the traces of a service (Jaeger's /api/traces).
    traces: async (service) => (await get(`/api/traces?service=${encodeURIComponent(service)}&limit=100`)).body?.data ?? [],
    // trace polls /api/traces/<id> until done(trace) holds (spans arrive
    // in batches, from several processes), for at most traceTimeoutMs,
    // and returns the trace; it throws with what it last saw otherwise.
    trace: async (id, done) => {
      const deadline = Date.now() + traceTimeoutMs;
      let last;
      for (;;) {
        const r = await get(`/api/traces/${id}`);
        last = r.body?.data?.[0];
        if (r.status === 200 && last && done(last)) return last;
        if (Date.now() > deadline) {
          throw new Error(`trace ${id} was not complete within ${traceTimeoutMs} ms; last seen:\n${JSON.stringify(last?.spans?.map((s) => s.operationName))}\n${log()}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}
