package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// A call made in a traced context carries its W3C trace context in the
// tools/call's _meta, on every transport (the raw stdio path and mcp-go's
// client); a call made in an untraced one carries none.
func TestCallPropagatesTraceContext(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	state, err := trace.ParseTraceState("vendor=opaque")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: state})
	traced := trace.ContextWithSpanContext(context.Background(), sc)
	const want = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 vendor=opaque"
	for _, tr := range []struct {
		name   string
		config func(t *testing.T) Config
	}{
		{"stdio", func(t *testing.T) Config {
			return Config{Name: "fx", Command: fixture.MCPServer(t), Env: map[string]string{"FIXTURE_TRACE": "1"}}
		}},
		{"http", func(t *testing.T) Config {
			return Config{Name: "fx", URL: fixture.StartHTTP(t, false, "FIXTURE_TRACE=1")}
		}},
		{"sse", func(t *testing.T) Config {
			return Config{Name: "fx", URL: fixture.StartHTTP(t, true, "FIXTURE_TRACE=1"), SSE: true}
		}},
	} {
		t.Run(tr.name, func(t *testing.T) {
			c := dial(t, tr.config(t))
			for _, tc := range []struct {
				name string
				ctx  context.Context
				want string
			}{
				{"traced", traced, want},
				{"untraced", context.Background(), ""},
			} {
				res, err := c.Call(tc.ctx, "traceparent", json.RawMessage(`{}`))
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				var got string
				if err := json.Unmarshal(res.Value, &got); err != nil {
					t.Fatalf("%s: result %s: %v", tc.name, res.Value, err)
				}
				if got != tc.want {
					t.Errorf("%s: the server got %q, want %q", tc.name, got, tc.want)
				}
			}
		})
	}
}

// A tools/call sent as a task carries the trace context too: it is a
// tools/call like any other (a task start sent none before).
func TestTaskStartPropagatesTraceContext(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	traced := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t), Args: []string{"-tasks"}, Env: map[string]string{"FIXTURE_TRACE": "1"}})
	st, err := c.StartTask(traced, "traceparent", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if st.Result == nil {
		t.Fatalf("StartTask = %+v, want the result at once", st)
	}
	var got string
	if err := json.Unmarshal(st.Result.Value, &got); err != nil {
		t.Fatalf("result %s: %v", st.Result.Value, err)
	}
	if want := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"; got != want {
		t.Errorf("the server got %q, want %q", got, want)
	}
}
