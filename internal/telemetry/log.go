package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Attribute keys TraceHandler adds.
const (
	KeyTraceID = "trace_id"
	KeySpanID  = "span_id"
)

// TraceHandler returns a slog.Handler that adds the trace and span ids of
// the span a record's context carries (trace.SpanContextFromContext:
// whoever started the span) to the record, as KeyTraceID and KeySpanID,
// before h sees it; a record logged without a context, or with one that
// carries no valid span, passes as it is.
func TraceHandler(h slog.Handler) slog.Handler { return traceHandler{h} }

type traceHandler struct{ h slog.Handler }

func (t traceHandler) Enabled(ctx context.Context, l slog.Level) bool { return t.h.Enabled(ctx, l) }

func (t traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String(KeyTraceID, sc.TraceID().String()), slog.String(KeySpanID, sc.SpanID().String()))
	}
	return t.h.Handle(ctx, r)
}

func (t traceHandler) WithAttrs(as []slog.Attr) slog.Handler { return traceHandler{t.h.WithAttrs(as)} }

func (t traceHandler) WithGroup(name string) slog.Handler { return traceHandler{t.h.WithGroup(name)} }
