package openapi

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// A request made in a traced context carries its W3C trace context
// (traceparent, tracestate) through the direct transport; one made in an
// untraced context carries none.
func TestRequestPropagatesTraceContext(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newTestCaller(t, rec.srv.URL)
	if _, ok := c.client.Transport.(*directTransport); !ok {
		t.Fatal("the caller has no direct transport: the test would not cover the fast path")
	}
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	state, _ := trace.ParseTraceState("vendor=opaque")
	traced := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: state}))
	for _, tc := range []struct {
		name         string
		ctx          context.Context
		parent, stat string
	}{
		{"traced", traced, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=opaque"},
		{"untraced", context.Background(), "", ""},
	} {
		res, err := requestOf(tc.ctx, c, json.RawMessage(`{"method":"GET","path":"/items"}`))
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", tc.name, err, res.Message)
		}
		got := rec.last(t).Header
		if got.Get("traceparent") != tc.parent || got.Get("tracestate") != tc.stat {
			t.Errorf("%s: traceparent %q tracestate %q, want %q %q", tc.name, got.Get("traceparent"), got.Get("tracestate"), tc.parent, tc.stat)
		}
	}
}
