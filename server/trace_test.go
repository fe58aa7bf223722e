package server_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	rt "github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/server"
)

const (
	metaParent   = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	headerParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
)

// tracedServer is a server whose runtime records its spans in rec, with
// Options.TraceContext as given.
func tracedServer(t *testing.T, traceContext bool) (*server.Server, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return newServerOf(t, server.Options{TraceContext: traceContext}, 0, rt.Options{Tracer: tp}), rec
}

// runParent returns the traceparent-like "trace id-parent span id" of
// the one codemode.run span rec holds.
func runParent(t *testing.T, rec *tracetest.SpanRecorder) string {
	t.Helper()
	var runs []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "codemode.run" {
			runs = append(runs, s)
		}
	}
	if len(runs) != 1 {
		t.Fatalf("%d codemode.run spans, want 1", len(runs))
	}
	return runs[0].SpanContext().TraceID().String() + "-" + runs[0].Parent().SpanID().String()
}

// A tools/call's _meta.traceparent makes the run a span of the caller's
// trace; with TraceContext off it is not read and the run is a trace of
// its own.
func TestCallContinuesTheClientsTrace(t *testing.T) {
	for _, tc := range []struct {
		name         string
		traceContext bool
		want         string
	}{
		{"on", true, "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"},
		{"off", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, rec := tracedServer(t, tc.traceContext)
			c := connect(t, s, nil)
			req := mcp.CallToolRequest{}
			req.Params.Name = "codemode"
			req.Params.Arguments = map[string]any{"code": "1 + 1"}
			req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": metaParent}}
			if _, err := c.CallTool(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			got := runParent(t, rec)
			if tc.want == "" {
				if got[:32] == metaParent[3:35] || got[33:] != "0000000000000000" {
					t.Errorf("run span %s: want a root span of a new trace", got)
				}
				return
			}
			if got != tc.want {
				t.Errorf("run span's trace-parent = %s, want %s", got, tc.want)
			}
		})
	}
}

// Over streamable HTTP the traceparent header continues the caller's
// trace, and a _meta.traceparent wins over it.
func TestHTTPTraceparentHeader(t *testing.T) {
	for _, tc := range []struct {
		name, params, want string
	}{
		{"header", `{"name":"codemode","arguments":{"code":"1"}}`, "0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331"},
		{"meta wins", `{"name":"codemode","arguments":{"code":"1"},"_meta":{"traceparent":"` + metaParent + `"}}`, "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, rec := tracedServer(t, true)
			base := serve(t, s, server.TransportHTTP)
			id := initialize(t, base)
			body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":` + tc.params + `}`
			resp := req{method: "POST", path: server.PathMCP, body: body, header: jsonHeaders(
				"Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-11-25", "traceparent", headerParent)}.do(t, nil, base)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("tools/call: %d %s", resp.StatusCode, b)
			}
			if got := runParent(t, rec); got != tc.want {
				t.Errorf("run span's trace-parent = %s, want %s", got, tc.want)
			}
		})
	}
}

// ended is a span processor that hands the spans that end to a channel
// (as many as it holds): how a test waits for a span made in the
// background.
type ended chan sdktrace.ReadOnlySpan

func (e ended) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (e ended) OnEnd(s sdktrace.ReadOnlySpan) {
	select {
	case e <- s:
	default: // full: the test has what it waits for, or fails
	}
}
func (e ended) Shutdown(context.Context) error   { return nil }
func (e ended) ForceFlush(context.Context) error { return nil }

// A task-augmented tools/call (answered in front of mcp-go) continues the
// trace of its _meta.traceparent too.
func TestTaskCallContinuesTheClientsTrace(t *testing.T) {
	spans := make(ended, 64)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s := newServerOf(t, server.Options{TraceContext: true}, 0, rt.Options{Tracer: tp})
	c := stdioClient(t, s, mcp.ClientCapabilities{})
	createTask(t, c, "1 + 1", map[string]any{"_meta": map[string]any{"traceparent": metaParent}})
	for sp := range spans { // the run's pass ends in the background
		if sp.Name() != "codemode.run" {
			continue
		}
		if got, want := sp.Parent().TraceID().String()+"-"+sp.Parent().SpanID().String(), "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"; got != want {
			t.Errorf("run span's parent = %s, want %s", got, want)
		}
		return
	}
}
