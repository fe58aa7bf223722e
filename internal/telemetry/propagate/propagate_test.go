package propagate

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name, parent, state string
		wantOK              bool
	}{
		{"valid", parent, "vendor=opaque", true},
		{"no state", parent, "", true},
		{"empty", "", "", false},
		{"malformed", "00-xyz-00f067aa0ba902b7-01", "", false},
		{"all-zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := FromMeta(context.Background(), map[string]any{Traceparent: tt.parent, Tracestate: tt.state})
			p, s, ok := Outgoing(ctx)
			if ok != tt.wantOK || (ok && (p != tt.parent || s != tt.state)) {
				t.Errorf("Outgoing = %q %q %v, want %q %q %v", p, s, ok, tt.parent, tt.state, tt.wantOK)
			}
			h := http.Header{}
			SetHeader(FromHeader(context.Background(), http.Header{"Traceparent": {tt.parent}, "Tracestate": {tt.state}}), h)
			if got := h.Get(Traceparent); (got != "") != tt.wantOK || (tt.wantOK && got != tt.parent) {
				t.Errorf("header traceparent = %q", got)
			}
			if Link(tt.parent).IsValid() != tt.wantOK {
				t.Errorf("Link(%q).IsValid() = %v", tt.parent, !tt.wantOK)
			}
		})
	}
}

// A client's tracestate goes on to downstreams only as W3C allows it (at
// most 32 members, each key and value bounded and of its alphabet); any
// other is dropped and its traceparent goes on alone.
func TestHostileTracestate(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, state := range []string{
		"vendor=" + strings.Repeat("v", 100_000),
		strings.Repeat("k=v,", 32) + "z=v",
		"vendor=a\nb",
		"Upper=x",
	} {
		p, s, ok := Outgoing(FromMeta(context.Background(), map[string]any{Traceparent: parent, Tracestate: state}))
		if !ok || p != parent || s != "" {
			t.Errorf("tracestate %.40q: Outgoing = %q %.40q %v, want the traceparent alone", state, p, s, ok)
		}
	}
}

// With nothing in the context, Outgoing allocates nothing: the cost of
// propagation on every call when tracing is off.
func TestOutgoingOffAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { _, _, _ = Outgoing(ctx) }); n != 0 {
		t.Errorf("Outgoing allocates %v times per call with no span", n)
	}
	h := http.Header{}
	if n := testing.AllocsPerRun(100, func() { SetHeader(ctx, h) }); n != 0 {
		t.Errorf("SetHeader allocates %v times per call with no span", n)
	}
}

// Hostile or odd traceparents are ignored as W3C Trace Context says (the
// run starts a trace of its own); never a panic, whatever their size.
func TestHostileTraceparent(t *testing.T) {
	const id, span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, tt := range []struct {
		parent string
		ok     bool
	}{
		{"ff-" + id + "-" + span + "-01", false},                              // version ff is invalid
		{"00-" + id + "-0000000000000000-01", false},                          // all-zero parent id
		{"00-" + strings.ToUpper(id) + "-" + span + "-01", false},             // upper-case hex
		{"00-" + id + "-" + span + "-01-extra", false},                        // version 00 has four fields
		{"01-" + id + "-" + span + "-01-later-fields", true},                  // a later version may add fields
		{"00-" + id + "-" + span + "-01" + strings.Repeat("-", 1<<20), false}, // huge
		{strings.Repeat("0", 1<<20), false},
		{"00-" + id + "-" + span, false}, // no flags
		{"\x00\xff-" + id + "-" + span + "-01", false},
	} {
		p, _, ok := Outgoing(FromMeta(context.Background(), map[string]any{Traceparent: tt.parent}))
		if ok != tt.ok || (ok && !strings.Contains(p, id)) {
			t.Errorf("traceparent %.60q: Outgoing = %q, %v; want ok %v", tt.parent, p, ok, tt.ok)
		}
	}
	// _meta values that are not strings are ignored.
	if _, _, ok := Outgoing(FromMeta(context.Background(), map[string]any{Traceparent: 42, Tracestate: []any{"x"}})); ok {
		t.Error("a traceparent that is a number was followed")
	}
}

// HTTP headers as W3C Trace Context reads them: two traceparent headers
// continue neither, and tracestate header lines are one list.
func TestHeaderLines(t *testing.T) {
	const a = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const b = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	if _, _, ok := Outgoing(FromHeader(context.Background(), http.Header{"Traceparent": {a, b}})); ok {
		t.Error("a request with two traceparent headers continues one of them")
	}
	p, s, ok := Outgoing(FromHeader(context.Background(), http.Header{"Traceparent": {a}, "Tracestate": {"x=1,y=2", "z=3"}}))
	if !ok || p != a || s != "x=1,y=2,z=3" {
		t.Errorf("Outgoing = %q %q %v, want %q with the three members", p, s, ok, a)
	}
}
