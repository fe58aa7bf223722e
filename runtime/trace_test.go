package runtime_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// recorder returns a tracer provider whose ended spans rec holds.
func recorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, rec
}

// attr returns a span's attribute key as text ("" if absent).
func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// spanLine renders a span as "name k=v …" with the attributes a test
// looks at, and its parent's name ("<caller>" for the caller's span).
func spanLine(s sdktrace.ReadOnlySpan, names map[trace.SpanID]string) string {
	parent := names[s.Parent().SpanID()]
	if parent == "" && s.Parent().IsValid() {
		parent = "<remote>"
	}
	kv := []string{s.Name()}
	for _, k := range []string{"codemode.pass", "codemode.status", "codemode.call.outcome", "codemode.approval.waited"} {
		if v := attr(s, k); v != "" {
			kv = append(kv, k[strings.LastIndex(k, ".")+1:]+"="+v)
		}
	}
	return strings.Join(kv, " ") + " <- " + parent
}

// A run that pauses and is approved makes one trace: the first pass
// continues the caller's trace, its calls are its children (executed, or
// paused for approval), and the pass after the approval — made by
// another process, so only what the store kept links them — is the first
// pass's child and links to it, with its calls replayed or executed.
func TestTraceOfAnApprovedRun(t *testing.T) {
	tp, rec := recorder(t)
	e := newEnv(t, setup{kvApprove: []string{"put"}, tracer: tp})

	ctx, caller := tp.Tracer("client").Start(context.Background(), "client")
	code := `async () => { await kv.add({ key: "a", value: "1" }); await kv.put({ key: "k", value: "v" }); await kv.add({ key: "b", value: "2" }); return "done"; }`
	o, err := e.rt.Execute(ctx, code, nil)
	if err != nil {
		t.Fatal(err)
	}
	caller.End()
	mustStatus(t, o, codemode.StatusPaused)

	e.restart(setup{kvApprove: []string{"put"}, tracer: tp}) // the approval comes to another process
	mustStatus(t, e.approve(o.ExecutionID, nil), codemode.StatusCompleted)

	spans := rec.Ended()
	names := map[trace.SpanID]string{}
	var run, replay sdktrace.ReadOnlySpan
	for _, s := range spans {
		names[s.SpanContext().SpanID()] = s.Name()
		switch s.Name() {
		case "codemode.run":
			run = s
		case "codemode.replay":
			replay = s
		}
		if s.SpanContext().TraceID() != caller.SpanContext().TraceID() {
			t.Errorf("span %s is in trace %s, not the caller's %s", s.Name(), s.SpanContext().TraceID(), caller.SpanContext().TraceID())
		}
	}
	if run == nil || replay == nil {
		t.Fatalf("no codemode.run or codemode.replay span among %d", len(spans))
	}
	if got := attr(run, "codemode.execution_id"); got != o.ExecutionID {
		t.Errorf("run span's execution id = %q, want %q", got, o.ExecutionID)
	}
	if run.Parent().SpanID() != caller.SpanContext().SpanID() {
		t.Errorf("the run's parent is %s, want the caller's span", run.Parent().SpanID())
	}
	if links := replay.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != run.SpanContext().SpanID() {
		t.Errorf("the replay's links = %+v, want the run's first span", links)
	}
	if got := attr(run, "codemode.connectors"); got != `["kv"]` {
		t.Errorf("run span's connectors = %s", got)
	}

	var got []string
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), "codemode.store.") {
			continue // counted below
		}
		got = append(got, spanLine(s, names))
	}
	slices.Sort(got)
	want := []string{
		"call kv.add outcome=executed <- codemode.run",
		"call kv.add outcome=executed <- codemode.replay",
		"call kv.add outcome=replayed <- codemode.replay",
		"call kv.put outcome=executed waited=true <- codemode.replay",
		"call kv.put outcome=paused <- codemode.run",
		"client <- ",
		"codemode.replay pass=replay status=completed <- codemode.run",
		"codemode.run pass=run status=paused <- client",
		"codemode.sandbox <- codemode.replay",
		"codemode.sandbox <- codemode.run",
	}
	slices.Sort(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("spans:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	writes := 0
	for _, s := range spans {
		if s.Name() == "codemode.store.write" {
			writes++
		}
	}
	if writes == 0 {
		t.Error("no codemode.store.write span")
	}
}

// A call the approver was asked about (elicitation) says on its span
// that it waited for a person, and what the person decided.
func TestTraceOfAnAskedCall(t *testing.T) {
	tp, rec := recorder(t)
	e := newEnv(t, setup{kvApprove: []string{"put"}, tracer: tp})
	mustStatus(t, e.run(`async () => kv.put({ key: "k", value: "v" })`, decide(codemode.Accept, new([]codemode.PendingAction))), codemode.StatusCompleted)
	var put sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "call kv.put" {
			put = s
		}
	}
	if put == nil {
		t.Fatal("no call kv.put span")
	}
	for k, want := range map[string]string{"codemode.call.outcome": "executed", "codemode.approval.waited": "true", "codemode.approval.decision": "accept"} {
		if got := attr(put, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

// A run that waits for a downstream task is resumed by a pass of its
// own (codemode.resume), in the run's trace and linked to its first pass;
// the call's span carries the traceparent to the downstream too.
func TestTraceOfAResumedRun(t *testing.T) {
	tp, rec := recorder(t)
	e := newEnv(t, setup{mcp: true, fxTasks: true, tracer: tp})
	o := e.start(`const n = await fx.task_counter({ name: "a", ms: 50 }); return { n }`)
	if x := e.await(o.ExecutionID, terminal); x.Status != codemode.StatusCompleted {
		t.Fatalf("run %s: %s", x.Status, x.Error)
	}
	e.shutdown() // waits for the background pass, which ends its span once the run's end is stored
	var run, resume sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.Name() {
		case "codemode.run":
			run = s
		case "codemode.resume":
			resume = s
		}
	}
	if run == nil || resume == nil {
		t.Fatalf("no codemode.run or codemode.resume span among %d", len(rec.Ended()))
	}
	if got := attr(run, "codemode.status"); got != "waiting" {
		t.Errorf("the first pass ended %s, want waiting", got)
	}
	if got := attr(resume, "codemode.status"); got != "completed" {
		t.Errorf("the resumed pass ended %s, want completed", got)
	}
	if resume.Parent().SpanID() != run.SpanContext().SpanID() || resume.SpanContext().TraceID() != run.SpanContext().TraceID() {
		t.Errorf("the resumed pass's parent is %s, want the first pass %s", resume.Parent().SpanID(), run.SpanContext().SpanID())
	}
	if links := resume.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != run.SpanContext().SpanID() {
		t.Errorf("the resumed pass's links = %+v, want the first pass", links)
	}
}

// A rollback is a span of the run's trace, and its reverts' calls are its
// children.
func TestTraceOfARollback(t *testing.T) {
	tp, rec := recorder(t)
	e := newEnv(t, setup{tracer: tp, kvRevert: map[string]string{"noop": `async (args) => { await kv.add({ key: "u1" }) }`}})
	o := e.run(`async () => { await kv.noop({ n: 1 }) }`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if _, err := e.rt.Rollback(e.ctx, o.ExecutionID); err != nil {
		t.Fatal(err)
	}
	names := map[trace.SpanID]string{}
	for _, s := range rec.Ended() {
		names[s.SpanContext().SpanID()] = s.Name()
	}
	var got []string
	for _, s := range rec.Ended() {
		if strings.HasPrefix(s.Name(), "call ") || s.Name() == "codemode.rollback" {
			got = append(got, spanLine(s, names))
		}
	}
	slices.Sort(got)
	want := []string{
		"call kv.add outcome=executed <- codemode.rollback",
		"call kv.noop outcome=executed <- codemode.run",
		"codemode.rollback pass=rollback status=rolled_back <- codemode.run",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("spans:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// With tracing off a run keeps no traceparent and nothing is recorded.
func TestNoTraceWhenOff(t *testing.T) {
	e := newEnv(t, setup{})
	o := e.run(`async () => { await kv.add({ key: "a", value: "1" }); return 1; }`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	x, _, err := e.rt.Execution(context.Background(), o.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if x.Trace != "" {
		t.Errorf("Trace = %q with tracing off", x.Trace)
	}
}

// BenchmarkTracing is BenchmarkLoggedCall with tracing off and on, every
// run sampled, spans batched to the real OTLP/HTTP exporter of
// internal/telemetry posting to a loopback collector that discards them
// (so the batcher's encoding and sending share the machine with the
// calls, as in production). "calls" is the cost of one call in a program
// of b.N calls (its call span and its share of the log-write spans);
// "execute" a run of one call (the run, sandbox and store spans too). The
// issue's bar: a call costs at most 10 µs more with tracing on.
func BenchmarkTracing(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	for _, on := range []bool{false, true} {
		name := "off"
		var tp trace.TracerProvider
		var tr *telemetry.Tracing
		if on {
			name = "on"
			b.Setenv("OTEL_TRACES_SAMPLER", "always_on")
			var err error
			tr, err = telemetry.NewTracing(context.Background(), config.Telemetry{Traces: config.Traces{
				Exporter: "otlp", Protocol: telemetry.ProtocolHTTP, Endpoint: sink.URL}}, os.Getenv, nil)
			if err != nil {
				b.Fatal(err)
			}
			tp = tr.TracerProvider()
		}
		b.Run(name+"/calls", func(b *testing.B) {
			k := newKV("kv")
			e := newEnv(b, setup{kv: k, limits: sandbox.Limits{MaxCalls: b.N + 10}, tracer: tp})
			code := fmt.Sprintf(`async () => { for (let i = 0; i < %d; i++) await kv.noop({}); return "ok" }`, b.N)
			b.ResetTimer()
			o := e.run(code, nil)
			b.StopTimer()
			mustStatus(b, o, codemode.StatusCompleted)
		})
		b.Run(name+"/execute", func(b *testing.B) {
			e := newEnv(b, setup{tracer: tp})
			b.ResetTimer()
			for range b.N {
				if o := e.run(`async () => kv.noop({})`, nil); o.Status != codemode.StatusCompleted {
					b.Fatalf("status %s: %s", o.Status, o.Error)
				}
			}
		})
		if err := tr.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("added/drop", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		benchmarkTracingAdded(b, tp)
	})
	b.Run("added/otlp", func(b *testing.B) {
		tr, err := telemetry.NewTracing(context.Background(), config.Telemetry{Traces: config.Traces{
			Exporter: "otlp", Protocol: telemetry.ProtocolHTTP, Endpoint: sink.URL}}, os.Getenv, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = tr.Shutdown(context.Background()) }()
		benchmarkTracingAdded(b, tr.TracerProvider())
	})
}

// benchmarkTracingAdded measures what tracing adds to a call as the
// median, over b.N pairs, of the difference between a program of 1000
// calls run with tracing on and the same program run just before with
// tracing off (reported as added-ns/call), with tp's spans: pairing the
// two keeps a machine whose load moves from swamping a difference of
// microseconds. "drop" batches the spans to an exporter that drops them;
// "otlp" encodes and posts them to the loopback collector, whose work,
// and the exporter's, run beside the calls on this machine's two cores.
func benchmarkTracingAdded(b *testing.B, tp trace.TracerProvider) {
	const calls = 1000
	code := fmt.Sprintf(`async () => { for (let i = 0; i < %d; i++) await kv.noop({}); return "ok" }`, calls)
	off := newEnv(b, setup{limits: sandbox.Limits{MaxCalls: calls + 10}})
	on := newEnv(b, setup{limits: sandbox.Limits{MaxCalls: calls + 10}, tracer: tp})
	timed := func(e *env) time.Duration {
		start := time.Now()
		mustStatus(b, e.run(code, nil), codemode.StatusCompleted)
		return time.Since(start)
	}
	timed(off) // warm both: the sandbox's caches, the store's pages
	timed(on)
	var diffs, offs []float64
	b.ResetTimer()
	for range b.N {
		d0 := timed(off)
		d1 := timed(on)
		diffs = append(diffs, float64(d1-d0)/calls)
		offs = append(offs, float64(d0)/calls)
	}
	b.StopTimer()
	slices.Sort(diffs)
	slices.Sort(offs)
	b.ReportMetric(diffs[len(diffs)/2], "added-ns/call")
	b.ReportMetric(offs[len(offs)/2], "off-ns/call")
}

// What a span records is bounded, whatever the program or a downstream
// sent: a downstream's error (in the status and the exception event) and
// a method name a program made up (forward_unknown forwards what its
// catalog may refuse) can be any length.
func TestTraceIsBounded(t *testing.T) {
	tp, rec := recorder(t)
	e := newEnv(t, setup{mcp: true, fxForward: true, tracer: tp})
	code := `async () => {
		try { await kv.fail({ reason: "x".repeat(100000) }); } catch (err) {}
		try { await fx["m".repeat(100000)]({}); } catch (err) {}
		return 1;
	}`
	if _, err := e.rt.Execute(context.Background(), code, nil); err != nil {
		t.Fatal(err)
	}
	const most = 1024
	calls := 0
	for _, s := range rec.Ended() {
		if strings.HasPrefix(s.Name(), "call ") {
			calls++
		}
		if n := len(s.Name()); n > most {
			t.Errorf("a span's name has %d bytes (%.40s…), want at most %d", n, s.Name(), most)
		}
		if n := len(s.Status().Description); n > most {
			t.Errorf("span %.40s: its status has %d bytes, want at most %d", s.Name(), n, most)
		}
		for _, kv := range s.Attributes() {
			if n := len(kv.Value.Emit()); n > most {
				t.Errorf("span %.40s: %s has %d bytes, want at most %d", s.Name(), kv.Key, n, most)
			}
		}
		for _, ev := range s.Events() {
			for _, kv := range ev.Attributes {
				if n := len(kv.Value.Emit()); n > most {
					t.Errorf("span %.40s: event %s's %s has %d bytes, want at most %d", s.Name(), ev.Name, kv.Key, n, most)
				}
			}
		}
	}
	if calls != 2 {
		t.Fatalf("%d call spans, want 2", calls)
	}
}

// secretFailStore fails every write of a run's status with err, as a
// database whose error quotes its address (a password in it) does.
type secretFailStore struct {
	codemode.Store
	err error
}

func (s *secretFailStore) CreateExecution(context.Context, *codemode.Execution) error { return s.err }

// An internal failure's message reaches a span's status and exception
// event scrubbed of the configuration's secrets, as it reaches the log:
// the trace collector is a third party as much as a log file is.
func TestTraceOfAnInternalFailureHoldsNoSecret(t *testing.T) {
	const secret = "s3cr3t-db-pa55word"
	tp, rec := recorder(t)
	fail := fmt.Errorf("connect to postgres://app:%s@db.internal/codemode: connection refused", secret)
	e := newEnv(t, setup{tracer: tp, scrubber: scrub.New(secret),
		wrap: func(s codemode.Store) codemode.Store { return &secretFailStore{Store: s, err: fail} }})
	if _, err := e.rt.Execute(context.Background(), `async () => 1`, nil); err == nil {
		t.Fatal("Execute succeeded with a store that fails")
	}
	failed := 0
	for _, s := range rec.Ended() {
		if s.Status().Description != "" {
			failed++
		}
		texts := []string{s.Status().Description}
		for _, ev := range s.Events() {
			for _, kv := range ev.Attributes {
				texts = append(texts, kv.Value.Emit())
			}
		}
		for _, kv := range s.Attributes() {
			texts = append(texts, kv.Value.Emit())
		}
		for _, x := range texts {
			if strings.Contains(x, secret) {
				t.Errorf("span %s holds the secret: %q", s.Name(), x)
			}
		}
	}
	if failed == 0 {
		t.Fatal("no span says the write failed")
	}
}
