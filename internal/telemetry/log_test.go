package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// A JSON line logged with a context that carries a span has its trace and
// span ids, with or without attributes and groups added before; a line
// without a span has none.
func TestTraceHandlerAddsIDs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(TraceHandler(slog.NewJSONHandler(&buf, nil))).With("component", "runtime")
	traceID, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	spanID, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID}))

	log.InfoContext(ctx, "in a run", "execution", "exec_1")
	log.InfoContext(context.Background(), "outside")
	log.Info("no context")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i, err, line)
		}
		if rec["component"] != "runtime" {
			t.Errorf("line %d lost the logger's attributes: %s", i, line)
		}
		_, hasTrace := rec[KeyTraceID]
		_, hasSpan := rec[KeySpanID]
		switch {
		case i == 0 && (rec[KeyTraceID] != traceID.String() || rec[KeySpanID] != spanID.String()):
			t.Errorf("the line in a span: %s", line)
		case i > 0 && (hasTrace || hasSpan):
			t.Errorf("a line outside any span has ids: %s", line)
		}
	}
}
