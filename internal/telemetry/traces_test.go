package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/codemode-mcp/codemode-mcp/config"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestResolveTraces(t *testing.T) {
	half := 0.5
	tests := []struct {
		name string
		cfg  config.Telemetry
		env  map[string]string
		want TraceSettings
		err  string
	}{
		{name: "off by default", want: TraceSettings{}},
		{name: "endpoint alone does not turn it on", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, want: TraceSettings{}},
		{name: "OTEL_TRACES_EXPORTER", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, want: TraceSettings{On: true, Protocol: ProtocolHTTP}},
		{name: "env protocol", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, want: TraceSettings{On: true, Protocol: ProtocolGRPC}},
		{name: "signal protocol wins", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, want: TraceSettings{On: true, Protocol: ProtocolHTTP}},
		{name: "file none wins", cfg: config.Telemetry{Traces: config.Traces{Exporter: "none"}}, env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, want: TraceSettings{}},
		{name: "file keys win", cfg: config.Telemetry{ServiceName: "gw", Traces: config.Traces{Exporter: "otlp", Protocol: "grpc", Endpoint: "http://127.0.0.1:4317", Sample: &half}},
			env:  map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
			want: TraceSettings{On: true, Protocol: ProtocolGRPC, Endpoint: "http://127.0.0.1:4317", Sample: &half, ServiceName: "gw"}},
		{name: "http endpoint without a path", cfg: config.Telemetry{Traces: config.Traces{Exporter: "otlp", Endpoint: "http://127.0.0.1:4318"}},
			want: TraceSettings{On: true, Protocol: ProtocolHTTP, Endpoint: "http://127.0.0.1:4318/v1/traces"}},
		{name: "http endpoint with a path", cfg: config.Telemetry{Traces: config.Traces{Exporter: "otlp", Endpoint: "https://otel.example/ingest/traces"}},
			want: TraceSettings{On: true, Protocol: ProtocolHTTP, Endpoint: "https://otel.example/ingest/traces"}},
		{name: "SDK disabled", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, want: TraceSettings{}},
		{name: "unknown exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER is "zipkin": the traces exporter must be otlp or none`},
		{name: "unknown protocol", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: `OTEL_EXPORTER_OTLP_PROTOCOL is "http/json": the OTLP protocol must be grpc or http/protobuf`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveTraces(tt.cfg, env(tt.env))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
}

// Off, there is no pipeline: no provider, nothing to shut down.
func TestNewTracingOff(t *testing.T) {
	tr, err := NewTracing(context.Background(), config.Telemetry{}, env(nil), nil)
	if err != nil || tr != nil {
		t.Fatalf("NewTracing = %v, %v; want nil, nil", tr, err)
	}
	if tr.TracerProvider() != nil {
		t.Error("a nil Tracing has a provider")
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// export is one export a collector received.
type export struct {
	req    *coltrace.ExportTraceServiceRequest
	header string // the x-api-key the export carried
}

// collector keeps what an OTLP receiver got.
type collector struct {
	mu  sync.Mutex
	got []export
}

func (c *collector) add(e export) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, e)
}

func (c *collector) exports() []export {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]export(nil), c.got...)
}

// grpcCollector serves the OTLP trace service over gRPC on loopback.
type grpcCollector struct {
	coltrace.UnimplementedTraceServiceServer
	*collector
}

func (g grpcCollector) Export(ctx context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	g.add(export{req: req, header: strings.Join(md.Get("x-api-key"), ",")})
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// startCollector starts an OTLP receiver for protocol on loopback and
// returns its endpoint URL.
func startCollector(t *testing.T, protocol string) (string, *collector) {
	c := &collector{}
	if protocol == ProtocolHTTP {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/traces" {
				http.NotFound(w, r)
				return
			}
			b, _ := io.ReadAll(r.Body)
			req := &coltrace.ExportTraceServiceRequest{}
			if err := proto.Unmarshal(b, req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			c.add(export{req: req, header: r.Header.Get("X-Api-Key")})
			w.Header().Set("Content-Type", "application/x-protobuf")
			out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
			_, _ = w.Write(out)
		}))
		t.Cleanup(srv.Close)
		return srv.URL, c
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(gs, grpcCollector{collector: c})
	done := make(chan struct{})
	go func() { defer close(done); _ = gs.Serve(ln) }()
	t.Cleanup(func() { gs.Stop(); <-done })
	return "http://" + ln.Addr().String(), c
}

// Spans go to a real OTLP receiver over each protocol, with the file's
// headers and service name, and Shutdown flushes them.
func TestExportOverOTLP(t *testing.T) {
	for _, protocol := range []string{ProtocolHTTP, ProtocolGRPC} {
		t.Run(protocol, func(t *testing.T) {
			endpoint, col := startCollector(t, protocol)
			cfg := config.Telemetry{ServiceName: "gateway-test", Traces: config.Traces{
				Exporter: "otlp", Protocol: protocol, Endpoint: endpoint,
				Headers: map[string]string{"x-api-key": "k-123"},
			}}
			ctx := context.Background()
			tr, err := NewTracing(ctx, cfg, env(map[string]string{"OTEL_SERVICE_NAME": "not-this"}), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, span := tr.TracerProvider().Tracer("test").Start(ctx, "codemode.run")
			span.End()
			if err := tr.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			got := col.exports()
			if len(got) != 1 {
				t.Fatalf("%d exports, want 1", len(got))
			}
			if got[0].header != "k-123" {
				t.Errorf("x-api-key = %q", got[0].header)
			}
			rs := got[0].req.GetResourceSpans()
			if len(rs) != 1 || len(rs[0].GetScopeSpans()) != 1 || rs[0].GetScopeSpans()[0].GetSpans()[0].GetName() != "codemode.run" {
				t.Fatalf("exported %v", got[0].req)
			}
			service := ""
			for _, a := range rs[0].GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			if service != "gateway-test" {
				t.Errorf("service.name = %q, want the file's", service)
			}
		})
	}
}

// A collector that takes a request and does not answer blocks nothing of
// the process: spans end at once whatever the exporter's queue holds
// (past it they are dropped: here it holds one span, and batches are of
// one), calls record their metrics, and the metrics' Shutdown returns
// when its context ends, not when the collector answers (the traces'
// Shutdown is bounded by its context the same way: App.Close gives it
// a few seconds).
func TestStuckCollectorBlocksNothing(t *testing.T) {
	mctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	var traces atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/metrics" {
			_, _ = io.Copy(io.Discard, r.Body) // (then a client gone ends r's context)
			cancel()                           // the push is in flight: Shutdown is to give up on it
			<-r.Context().Done()
			return
		}
		<-release
		traces.Add(1)
	}))
	defer srv.Close()
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) }) // (after a Fatal)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "3600000") // only Shutdown pushes
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "1")
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "1")

	tr, err := NewTracing(context.Background(), config.Telemetry{Traces: config.Traces{Exporter: "otlp", Endpoint: srv.URL}}, env(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMetrics(context.Background(), MetricsOptions{OTLP: true, MethodNames: true})
	if err != nil {
		t.Fatal(err)
	}
	tracer := tr.TracerProvider().Tracer("test")
	for i := range 1000 {
		_, span := tracer.Start(context.Background(), "call fx.m")
		span.End()
		m.CallDone(context.Background(), "fx", fmt.Sprint("m", i), OutcomeOK, time.Millisecond)
	}
	if err := m.Shutdown(mctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown of the metrics with the collector stuck = %v, want context.Canceled", err)
	}
	releaseOnce.Do(func() { close(release) })
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := traces.Load(); n != 2 {
		t.Errorf("%d exports of spans, want 2: the one in flight, the one queued", n)
	}
}
