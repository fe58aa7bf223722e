package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// What the runtime logs during a run it logs with the run's context: with
// JSON logs (the handlers serve chains: scrubbed, then trace ids, then
// JSON), the line carries the trace and span of the request that drove the
// run, and a secret in the logged error is scrubbed as in text logs.
func TestRunLogLinesCarryTheTraceAndNoSecret(t *testing.T) {
	const secret = "sk-live-8d2f0c1b9e"
	var out syncBuffer
	sc := scrub.New(secret)
	log := slog.New(scrub.NewHandler(telemetry.TraceHandler(slog.NewJSONHandler(&out, nil)), sc))
	e := newEnv(t, setup{logger: log, scrubber: sc})

	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled}))
	ap := approverFunc(func(context.Context, codemode.PendingAction) (codemode.Decision, error) {
		return codemode.Accept, errors.New("the client refused with token " + secret)
	})
	o, err := e.rt.Execute(ctx, `async () => await kv.put({ key: "k", value: "v" })`, ap)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusPaused)

	found := false
	for line := range strings.Lines(out.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %v: %s", err, line)
		}
		if rec["msg"] != "approver could not ask; pausing" {
			continue
		}
		found = true
		if rec[telemetry.KeyTraceID] != traceID.String() || rec[telemetry.KeySpanID] != spanID.String() {
			t.Errorf("the line has trace %v span %v, want %s %s: %s", rec[telemetry.KeyTraceID], rec[telemetry.KeySpanID], traceID, spanID, line)
		}
		if !strings.Contains(line, "the client refused with token") {
			t.Errorf("the line lost the error: %s", line)
		}
	}
	if !found {
		t.Fatalf("no line says the approver could not ask:\n%s", out.String())
	}
	if strings.Contains(out.String(), secret) {
		t.Errorf("the log shows the secret:\n%s", out.String())
	}
}

// fakeMetrics records what the runtime tells its Metrics.
type fakeMetrics struct {
	mu        sync.Mutex
	ended     []string // statuses
	calls     []string // connector.method outcome
	decisions []string
}

func (f *fakeMetrics) RunEnded(_ context.Context, status string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = append(f.ended, status)
}

func (f *fakeMetrics) CallDone(_ context.Context, connector, method, outcome string, _ time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, connector+"."+method+" "+outcome)
}

func (f *fakeMetrics) ApprovalDecided(_ context.Context, decision string, _ time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decisions = append(f.decisions, decision)
}

// The runtime reports each run's final status once, each call it makes
// (not those it replays) with its outcome, and each decision on a paused
// run; a pause is no end.
func TestRuntimeReportsRunsCallsAndDecisions(t *testing.T) {
	m := &fakeMetrics{}
	e := newEnv(t, setup{metrics: m})
	var asked []codemode.PendingAction
	code := `async () => { await kv.add({ key: "a", value: "1" }); await kv.put({ key: "k", value: "v" }); return "done" }`
	paused := e.run(code, decide(codemode.NoAnswer, &asked))
	mustStatus(t, paused, codemode.StatusPaused)
	mustStatus(t, e.approve(paused.ExecutionID, decide(codemode.Accept, &asked)), codemode.StatusCompleted)

	rejected := e.run(code, decide(codemode.NoAnswer, &asked))
	if _, err := e.rt.Reject(e.ctx, rejected.ExecutionID, 0); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, e.run(`async () => { throw new Error("no") }`, nil), codemode.StatusError)

	m.mu.Lock()
	defer m.mu.Unlock()
	if got, want := strings.Join(m.ended, " "), "completed rejected error"; got != want {
		t.Errorf("runs ended: %s, want %s", got, want)
	}
	// The approved run's add is replayed, not made again.
	if got, want := strings.Join(m.calls, ", "), "kv.add ok, kv.put ok, kv.add ok"; got != want {
		t.Errorf("calls: %s, want %s", got, want)
	}
	if got, want := strings.Join(m.decisions, " "), "approved rejected"; got != want {
		t.Errorf("decisions: %s, want %s", got, want)
	}
}

// An approval refused once the run was claimed (its pending actions
// changed since they were shown) decides nothing, and a rollback of a
// paused run rejects what was pending: one decision, rejected, as the
// metric's labels say. Before, the refused approval was reported as
// approved and the rollback as a decision named rolling_back.
func TestOnlyDecisionsMadeAreReported(t *testing.T) {
	m := &fakeMetrics{}
	e := newEnv(t, setup{metrics: m})
	paused := e.run(`async () => { await kv.put({ key: "k", value: "v" }) }`, nil)
	mustStatus(t, paused, codemode.StatusPaused)
	if _, err := e.rt.Resume(e.ctx, paused.ExecutionID, codemode.Review{Digest: "not what is pending"}); !errors.Is(err, codemode.ErrNotAsShown) {
		t.Fatalf("Resume with another digest: %v, want ErrNotAsShown", err)
	}
	out, err := e.rt.Rollback(e.ctx, paused.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, out, codemode.StatusRolledBack)
	m.mu.Lock()
	defer m.mu.Unlock()
	if got, want := strings.Join(m.decisions, " "), "rejected"; got != want {
		t.Errorf("decisions: %s, want %s", got, want)
	}
}
