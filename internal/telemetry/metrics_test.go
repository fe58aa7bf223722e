package telemetry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// Metrics off is a nil *Metrics: every method is safe on it and the call
// path allocates nothing.
func TestMetricsOffIsNilAndFree(t *testing.T) {
	m, err := NewMetrics(context.Background(), MetricsOptions{})
	if err != nil || m != nil {
		t.Fatalf("NewMetrics with no exporter = %v, %v; want nil, nil", m, err)
	}
	if m.Handler() != nil {
		t.Error("a Handler with metrics off")
	}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		m.CallDone(ctx, "fx", "echo", OutcomeOK, time.Millisecond)
		m.RunEnded(ctx, "completed", time.Second)
		m.ApprovalDecided(ctx, "approved", time.Second)
		m.StoreWrite(ctx, "write_entries", time.Millisecond, nil)
		m.DownstreamRestarted("fx")
		m.SignInEnded("fx", nil)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per call with metrics off, want 0", allocs)
	}
	stop, err := m.ObservePending(func(context.Context) (int64, error) { return 0, nil })
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if err := m.Shutdown(ctx); err != nil {
		t.Error(err)
	}
}

// newPrometheus returns metrics served as Prometheus text, shut down at
// the end of the test.
func newPrometheus(t *testing.T, methodNames bool) *Metrics {
	t.Helper()
	m, err := NewMetrics(context.Background(), MetricsOptions{Prometheus: true, MethodNames: methodNames, ServiceName: "codemode-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	return m
}

// text is what Handler serves.
func text(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// Every instrument is served under its Prometheus name with its labels;
// the method is a label only with MethodNames; a recorded call reuses its
// attribute set without allocating.
func TestPrometheusNamesAndLabels(t *testing.T) {
	ctx := context.Background()
	for _, methodNames := range []bool{false, true} {
		m := newPrometheus(t, methodNames)
		m.RunEnded(ctx, "completed", 2*time.Second)
		m.CallDone(ctx, "fx", "echo", OutcomeOK, 3*time.Millisecond)
		m.CallDone(ctx, "fx", "echo", OutcomeError, 3*time.Millisecond)
		m.ApprovalDecided(ctx, "approved", time.Minute)
		m.StoreWrite(ctx, "write_entries", time.Millisecond, nil)
		m.StoreWrite(ctx, "write_entries", time.Millisecond, errors.New("disk full"))
		m.DownstreamRestarted("fx")
		m.SignInEnded("remote", nil)
		stopW, err := m.ObserveWorkers(func() WorkerStats { return WorkerStats{Idle: 2, Busy: 1, Restarts: 4} })
		if err != nil {
			t.Fatal(err)
		}
		stopP, err := m.ObservePending(func(context.Context) (int64, error) { return 3, nil })
		if err != nil {
			t.Fatal(err)
		}
		got := text(t, m)
		stopW()
		stopP()
		want := []string{
			`codemode_runs_total{status="completed"} 1`,
			`codemode_run_duration_seconds_count{status="completed"} 1`,
			`codemode_approval_wait_seconds_count{decision="approved"} 1`,
			`codemode_store_write_duration_seconds_count{op="write_entries",outcome="error"} 1`,
			`codemode_store_write_duration_seconds_count{op="write_entries",outcome="ok"} 1`,
			`codemode_downstream_restarts_total{connector="fx"} 1`,
			`codemode_downstream_sign_ins_total{connector="remote",outcome="ok"} 1`,
			`codemode_sandbox_workers{state="busy"} 1`,
			`codemode_sandbox_workers{state="idle"} 2`,
			`codemode_sandbox_worker_restarts_total 4`,
			`codemode_approvals_pending 3`,
			`service_name="codemode-test"`,
			`go_goroutines `,
		}
		if methodNames {
			want = append(want, `codemode_call_duration_seconds_count{connector="fx",method="echo",outcome="ok"} 1`)
		} else {
			want = append(want, `codemode_call_duration_seconds_count{connector="fx",outcome="ok"} 1`,
				`codemode_call_duration_seconds_count{connector="fx",outcome="error"} 1`)
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("method_names %v: no %s in\n%s", methodNames, w, got)
			}
		}
		if !methodNames && strings.Contains(got, `method="echo"`) {
			t.Errorf("a method label without MethodNames:\n%s", got)
		}
		if allocs := testing.AllocsPerRun(100, func() { m.CallDone(ctx, "fx", "echo", OutcomeOK, time.Millisecond) }); allocs != 0 {
			t.Errorf("method_names %v: %v allocations per recorded call, want 0", methodNames, allocs)
		}
	}
}

// A paused-run count that fails is an error of that collection, not of the
// others: the rest is still served.
func TestPendingFailureKeepsTheRest(t *testing.T) {
	m := newPrometheus(t, false)
	m.RunEnded(context.Background(), "completed", time.Second)
	stop, err := m.ObservePending(func(context.Context) (int64, error) { return 0, errors.New("store unreachable") })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if got := text(t, m); !strings.Contains(got, `codemode_runs_total{status="completed"} 1`) {
		t.Errorf("the runs are missing:\n%s", got)
	}
}

// The method names a program chooses are bounded: past maxCached distinct
// attribute sets nothing more is kept.
func TestCallSetsAreBounded(t *testing.T) {
	m := newPrometheus(t, true)
	for i := range maxCached + 50 {
		m.CallDone(context.Background(), "fx", strings.Repeat("m", 1+i%7)+string(rune('a'+i%26))+strings.Repeat("x", i/182), OutcomeOK, time.Millisecond)
	}
	if n := m.cached.Load(); n > maxCached {
		t.Errorf("%d attribute sets kept, want at most %d", n, maxCached)
	}
	long := strings.Repeat("é", 1000)
	m.CallDone(context.Background(), "fx", long, OutcomeOK, time.Millisecond)
	got := text(t, m)
	if strings.Contains(got, strings.Repeat("é", maxMethodLabel/2+1)) || !strings.Contains(got, `method="`+strings.Repeat("é", maxMethodLabel/2)+`"`) {
		t.Errorf("a method name of %d bytes is not cut to %d in its label", len(long), maxMethodLabel)
	}
}

// OTLP pushes the metrics, over HTTP by default, to where
// OTEL_EXPORTER_OTLP_ENDPOINT says; Shutdown sends what is left.
func TestOTLPPushesOnShutdown(t *testing.T) {
	var mu sync.Mutex
	var got []*colmetrics.ExportMetricsServiceRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/metrics" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("OTLP request %s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		req := &colmetrics.ExportMetricsServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil {
			t.Errorf("OTLP body: %v", err)
		}
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&colmetrics.ExportMetricsServiceResponse{})
		w.Write(b)
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "3600000") // only Shutdown pushes
	m, err := NewMetrics(context.Background(), MetricsOptions{OTLP: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Handler() != nil {
		t.Error("Prometheus text without Prometheus")
	}
	m.RunEnded(context.Background(), "completed", time.Second)
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var names []string
	for _, req := range got {
		for _, rm := range req.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, metric := range sm.GetMetrics() {
					names = append(names, metric.GetName())
				}
			}
		}
	}
	if !strings.Contains(strings.Join(names, " "), "codemode.runs") {
		t.Errorf("OTLP received %v, want codemode.runs among them", names)
	}
}

// An OTLP protocol that is not supported is refused, naming it.
func TestOTLPUnknownProtocol(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	_, err := NewMetrics(context.Background(), MetricsOptions{OTLP: true})
	if err == nil || !strings.Contains(err.Error(), `"http/json"`) {
		t.Errorf("NewMetrics with protocol http/json: %v", err)
	}
}

// Benchmark of the per-call cost of metrics: off (a nil *Metrics), and
// on with and without method names (BENCHMARKS.md).
func BenchmarkCallDone(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		m    func(b *testing.B) *Metrics
	}{
		{"off", func(*testing.B) *Metrics { return nil }},
		{"on", func(b *testing.B) *Metrics { return benchMetrics(b, false) }},
		{"on_method_names", func(b *testing.B) *Metrics { return benchMetrics(b, true) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := bc.m(b)
			b.ReportAllocs()
			for b.Loop() {
				m.CallDone(ctx, "fx", "echo", OutcomeOK, time.Millisecond)
			}
		})
	}
}

func benchMetrics(b *testing.B, methodNames bool) *Metrics {
	m, err := NewMetrics(context.Background(), MetricsOptions{Prometheus: true, MethodNames: methodNames})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Shutdown(context.Background()) })
	return m
}
