// Package propagate carries W3C trace context (traceparent, tracestate)
// in and out of the process: from a client's tools/call (_meta) or HTTP
// request into the context a run is served with, and from a call's
// context to a downstream MCP server (_meta) or HTTP API (headers).
//
// It links the OpenTelemetry API only, never the SDK. With tracing off
// nothing puts a span in a context, so Outgoing finds none and returns at
// once: a call pays a context lookup and allocates nothing.
package propagate

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The keys of W3C trace context, as HTTP headers and as MCP _meta keys
// (the 2026-07-28 revision documents _meta.traceparent and tracestate).
const (
	Traceparent = "traceparent"
	Tracestate  = "tracestate"
)

var tc propagation.TraceContext

// Outgoing returns the traceparent (and tracestate, maybe empty) of the
// span in ctx, for a request that continues its trace; ok is false when
// ctx carries no valid span context.
func Outgoing(ctx context.Context) (traceparent, tracestate string, ok bool) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return "", "", false
	}
	var c pair
	tc.Inject(ctx, &c)
	return c.parent, c.state, c.parent != ""
}

// SetHeader sets the traceparent and tracestate headers of an outgoing
// HTTP request from the span in ctx; without one it does nothing.
func SetHeader(ctx context.Context, h http.Header) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	tc.Inject(ctx, propagation.HeaderCarrier(h))
}

// Incoming returns ctx continuing the caller's trace named by traceparent
// and tracestate (a remote parent for the spans made under it); ctx as it
// is when traceparent is empty or not a valid W3C traceparent.
func Incoming(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return tc.Extract(ctx, &pair{parent: traceparent, state: tracestate})
}

// FromHeader is Incoming with the traceparent and tracestate headers of
// an HTTP request, read as W3C Trace Context says: a request with more
// than one traceparent continues none (which would be the caller's?), and
// a tracestate sent as several header lines is their list joined, in
// their order.
func FromHeader(ctx context.Context, h http.Header) context.Context {
	parents := h.Values(Traceparent)
	if len(parents) != 1 {
		return ctx
	}
	return Incoming(ctx, parents[0], strings.Join(h.Values(Tracestate), ","))
}

// FromMeta is Incoming with the traceparent and tracestate of a request's
// _meta object (values that are not strings are ignored). A _meta
// traceparent wins over one the HTTP request carried: it is the caller's
// own, where a header may be a proxy's.
func FromMeta(ctx context.Context, meta map[string]any) context.Context {
	parent, _ := meta[Traceparent].(string)
	state, _ := meta[Tracestate].(string)
	return Incoming(ctx, parent, state)
}

// Link returns the span context a traceparent names (as Outgoing made
// it), or an invalid one.
func Link(traceparent string) trace.SpanContext {
	return trace.SpanContextFromContext(Incoming(context.Background(), traceparent, ""))
}

// pair is a TextMapCarrier of the two keys, without a map.
type pair struct{ parent, state string }

func (p *pair) Get(key string) string {
	switch key {
	case Traceparent:
		return p.parent
	case Tracestate:
		return p.state
	}
	return ""
}

func (p *pair) Set(key, value string) {
	switch key {
	case Traceparent:
		p.parent = value
	case Tracestate:
		p.state = value
	}
}

func (p *pair) Keys() []string { return []string{Traceparent, Tracestate} }
