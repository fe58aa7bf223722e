package runtime_test

import (
	"context"
	"fmt"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry"
	"github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
)

// BenchmarkLoggedCall measures one connector call through the engine and
// its durable log (executing, then applied) with a connector that does
// nothing: "calls" makes b.N read-only calls in one program, so the per-op
// time is the engine + log + host call cost; "sideeffects" the same with a
// call not known to be read-only (written ahead to the journal); "execute" is one Execute per op with one
// call, so it adds program setup (normalisation, a fresh VM) and the
// execution record. The _metrics variants measure the same with metrics
// on (package telemetry, served as Prometheus text): what the runtime
// records per call and per run; off, the runtime holds a nil Metrics.
func BenchmarkLoggedCall(b *testing.B) {
	for _, c := range []struct {
		name    string
		writes  bool
		metrics bool
	}{{"calls", false, false}, {"calls_metrics", false, true}, {"sideeffects", true, false}, {"sideeffects_metrics", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			k := newKV("kv")
			k.noopWrites = c.writes
			var m runtime.Metrics
			if c.metrics {
				tm, err := telemetry.NewMetrics(context.Background(), telemetry.MetricsOptions{Prometheus: true})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { tm.Shutdown(context.Background()) })
				m = tm
			}
			e := newEnv(b, setup{kv: k, limits: sandbox.Limits{MaxCalls: b.N + 10}, metrics: m})
			code := fmt.Sprintf(`async () => { for (let i = 0; i < %d; i++) await kv.noop({}); return "ok" }`, b.N)
			b.ResetTimer()
			o := e.run(code, nil)
			b.StopTimer()
			mustStatus(b, o, codemode.StatusCompleted)
		})
	}
	b.Run("execute", func(b *testing.B) {
		e := newEnv(b, setup{})
		b.ResetTimer()
		for range b.N {
			o := e.run(`async () => kv.noop({})`, nil)
			if o.Status != codemode.StatusCompleted {
				b.Fatalf("status %s: %s", o.Status, o.Error)
			}
		}
	})
}

// BenchmarkResume1000 approves a run whose log holds 1,000 calls: the
// program replays them from the log, then executes the approved call.
func BenchmarkResume1000(b *testing.B) {
	e := newEnv(b, setup{})
	const code = `async () => {
		for (let i = 0; i < 1000; i++) await kv.noop({ i });
		await kv.put({ key: "k", value: "v" });
		return "done";
	}`
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		o := e.run(code, nil)
		mustStatus(b, o, codemode.StatusPaused)
		b.StartTimer()
		a := e.approve(o.ExecutionID, nil)
		if a.Status != codemode.StatusCompleted {
			b.Fatalf("status %s: %s", a.Status, a.Error)
		}
	}
}

// BenchmarkCheckBeforeRunning is the cost of the check before a program
// runs: one Execute of a typical program (four calls with object-literal
// arguments, one of them needing approval, so the run pauses there)
// whose calls the check sees (check), and of the same program making its
// calls through local names, which leaves the check nothing to look at
// (nocheck). Its normalisation is cached after the first run in both
// cases; sandbox's BenchmarkCollectStatic adds what finding the static
// calls costs a program seen for the first time.
func BenchmarkCheckBeforeRunning(b *testing.B) {
	const body = `
		const got = await kv.get({ key: "greeting" });
		await kv.add({ key: "seen", value: String(got.value) });
		const sum = await fx.get_sum({ a: 20, b: 22 });
		await kv.put({ key: "answer", value: String(sum) });
		return sum;
	}`
	for _, tc := range []struct{ name, code string }{
		{"check", "async () => {" + body},
		{"nocheck", "async () => {\n\t\tconst [kv, fx] = [globalThis.kv, globalThis.fx];" + body},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if n, err := source.Normalize(tc.code, source.ProgramFile); err != nil || (tc.name == "nocheck") != (len(n.StaticCalls()) == 0) {
				b.Fatalf("the check sees other calls (%v) in %s", err, tc.name)
			}
			e := newEnv(b, setup{mcp: true})
			mustStatus(b, e.run(tc.code, nil), codemode.StatusPaused)
			b.ResetTimer()
			for range b.N {
				if o := e.run(tc.code, nil); o.Status != codemode.StatusPaused {
					b.Fatalf("status %s: %s", o.Status, o.Error)
				}
			}
		})
	}
}
