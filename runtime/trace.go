package runtime

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry/propagate"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// The spans of a run (Options.Tracer; docs/ARCHITECTURE.md, "Traces"):
//
//	codemode.run | codemode.replay | codemode.resume | codemode.rollback   one per pass
//	├── codemode.sandbox                                                   the program's pass in the sandbox
//	├── call <connector>.<method>                                          one per connector call
//	│   └── (the downstream's own spans, from the traceparent it is sent)
//	└── codemode.store.write | codemode.store.execution                    one per log write batch, per status write

// tracerName is the instrumentation scope of the runtime's spans.
const tracerName = "github.com/codemode-mcp/codemode-mcp/runtime"

// passKind is what a pass's span is named for.
type passKind string

const (
	passRun      passKind = "run"      // a new run's first pass
	passReplay   passKind = "replay"   // a pass after an approval
	passResume   passKind = "resume"   // a pass resumed when its downstream tasks ended
	passRollback passKind = "rollback" // a rollback
)

// Attribute keys of the runtime's spans.
const (
	attrExecution   = attribute.Key("codemode.execution_id")
	attrPass        = attribute.Key("codemode.pass")
	attrStatus      = attribute.Key("codemode.status")
	attrConnectors  = attribute.Key("codemode.connectors")
	attrConnector   = attribute.Key("codemode.connector")
	attrMethod      = attribute.Key("codemode.method")
	attrSeq         = attribute.Key("codemode.seq")
	attrCall        = attribute.Key("codemode.call.outcome")
	attrBytesIn     = attribute.Key("codemode.call.bytes_in")
	attrBytesOut    = attribute.Key("codemode.call.bytes_out")
	attrApproval    = attribute.Key("codemode.approval.waited")
	attrApprovalMs  = attribute.Key("codemode.approval.wait_ms")
	attrDecision    = attribute.Key("codemode.approval.decision")
	attrInserts     = attribute.Key("codemode.store.inserts")
	attrUpdates     = attribute.Key("codemode.store.updates")
	attrOutcome     = attribute.Key("codemode.sandbox.outcome")
	maxStatusDetail = 256 // bytes of an error message a span's status keeps
)

// startPass starts the span of a pass of e (nil when tracing is off). A
// new run's span (passRun) is the one its later passes link to: its
// traceparent is put in e.Trace, for the store to keep. A later pass
// links to it and, when ctx continues no trace of its caller's, is its
// child, so that one trace holds the whole run.
func (r *Runtime) startPass(ctx context.Context, e *codemode.Execution, kind passKind) (context.Context, trace.Span) {
	if r.tracer == nil {
		return ctx, nil
	}
	opts := []trace.SpanStartOption{trace.WithAttributes(attrExecution.String(e.ID), attrPass.String(string(kind)))}
	if kind != passRun {
		if first := propagate.Link(e.Trace); first.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: first, Attributes: []attribute.KeyValue{attrPass.String(string(passRun))}}))
			if !trace.SpanContextFromContext(ctx).IsValid() {
				ctx = trace.ContextWithRemoteSpanContext(ctx, first)
			}
		}
	}
	ctx, span := r.tracer.Start(ctx, "codemode."+string(kind), opts...)
	if kind == passRun {
		e.Trace, _, _ = propagate.Outgoing(ctx)
	}
	return ctx, span
}

// endPass ends the span of a pass (nil: none) with how e stands now, and
// err, the pass's internal failure.
func (r *Runtime) endPass(span trace.Span, e *codemode.Execution, err error) {
	if span != nil && span.IsRecording() {
		span.SetAttributes(attrStatus.String(e.Status.String()), attrConnectors.StringSlice(slices.Sorted(maps.Keys(e.Connectors))))
		if err == nil && e.Status == codemode.StatusError {
			span.SetStatus(codes.Error, short.Clip(e.Error, maxStatusDetail))
		}
	}
	r.endSpan(span, err)
}

// endSpan ends a span of the runtime's (nil: none), marking it failed
// with err. Its exception event is RecordError's with the message clipped
// as the status is: the SDK's length limit does not reach an event's
// attributes, and a downstream's error can be any length. The message is
// scrubbed of secrets first, as the log's lines are: an internal failure
// (the store's, the sandbox's) may quote one, and a trace collector is
// as far from the process as a log file.
func (r *Runtime) endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil && span.IsRecording() {
		msg := short.Clip(r.scrub.String(err.Error()), maxStatusDetail)
		span.AddEvent("exception", trace.WithAttributes(attribute.String("exception.message", msg)))
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}

// traceWrite makes write, one write to the store about run id, in a span
// named name when tracing is on.
func (r *Runtime) traceWrite(ctx context.Context, name, id string, write func() error) error {
	if r.tracer == nil {
		return write()
	}
	_, span := r.tracer.Start(ctx, name, trace.WithAttributes(attrExecution.String(id)))
	err := write()
	r.endSpan(span, err)
	return err
}

// runProgram runs code as the program of pass p, in a span of its own
// when tracing is on: a sibling of the pass's calls, not their parent
// (the calls are the run's, whichever sandbox runs them).
func (p *pass) runProgram(ctx context.Context, code string, limits sandbox.Limits, clock sandbox.Clock) (sandbox.Outcome, error) {
	prog := sandbox.Program{Code: code, Globals: p.cat.Globals(), Services: serviceList, Limits: limits, Clock: clock}
	if p.r.tracer == nil {
		return p.r.opts.Executor.Run(ctx, prog, p)
	}
	_, span := p.r.tracer.Start(ctx, "codemode.sandbox")
	out, err := p.r.opts.Executor.Run(ctx, prog, p)
	if span.IsRecording() {
		span.SetAttributes(attrOutcome.String(out.Status.String()))
	}
	p.r.endSpan(span, err)
	return out, err
}

// A callSpan is the span of one connector call, with what the pass
// decided about it; nil when tracing is off (its methods do nothing).
type callSpan struct {
	r    *Runtime
	span trace.Span
	how  string // the outcome: executed, replayed, paused, refused
}

// startCall starts the span of call c, a child of ctx's (the pass's). The
// method is the program's, not yet resolved (with forward_unknown any name
// reaches here): it is clipped as an error is.
func (p *pass) startCall(ctx context.Context, c sandbox.Call) (context.Context, *callSpan) {
	method := short.Clip(c.Method, maxStatusDetail)
	ctx, span := p.r.tracer.Start(ctx, "call "+c.Connector+"."+method, trace.WithAttributes(
		attrConnector.String(c.Connector), attrMethod.String(method),
		attrSeq.Int(p.seqBase+c.Seq), attrBytesIn.Int(len(c.Args))))
	return ctx, &callSpan{r: p.r, span: span}
}

// executing notes that the pass makes the call (logged entry e), and,
// when a person approved it before this pass, how long it waited: from
// when it was logged pending to the decision.
func (cs *callSpan) executing(p *pass, e codemode.Entry) {
	if cs == nil {
		return
	}
	cs.how = "executed"
	if _, logged := p.entries[e.Seq]; logged && !e.DecidedAt.IsZero() && cs.span.IsRecording() {
		cs.span.SetAttributes(attrApproval.Bool(true), attrApprovalMs.Int64(e.DecidedAt.Sub(e.CreatedAt).Milliseconds()))
	}
}

// decided notes a call the pass answered without making it: from the log
// (replayed), or by stopping the program (paused: it awaits a person) or
// refusing it (its error).
func (cs *callSpan) decided(p *pass, seq int, err error) {
	if cs == nil {
		return
	}
	p.mu.Lock()
	_, logged := p.entries[seq]
	gated := p.open[seq].State.AwaitsPerson()
	paused := p.stop != nil && p.stop.kind == stopPause
	p.mu.Unlock()
	switch {
	case gated || (errors.Is(err, sandbox.ErrStop) && paused):
		cs.how = "paused"
	case logged && !errors.Is(err, sandbox.ErrStop):
		cs.how = "replayed"
	default:
		cs.how = "refused"
	}
}

// end ends the call's span with what the program got.
func (cs *callSpan) end(val json.RawMessage, err error) {
	if cs == nil {
		return
	}
	how := cmp.Or(cs.how, "refused") // (not even decided: an unknown method, bad arguments)
	if cs.span.IsRecording() {
		cs.span.SetAttributes(attrCall.String(how), attrBytesOut.Int(len(val)))
	}
	if how == "paused" {
		err = nil // a pause is no failure
	}
	cs.r.endSpan(cs.span, err)
}

// noteAsk records on the call's span (ctx's, when it records) that the
// call waited d for a person's decision through the approver.
func noteAsk(ctx context.Context, d time.Duration, dec codemode.Decision) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	how := map[codemode.Decision]string{codemode.Accept: "accept", codemode.Decline: "decline"}[dec]
	span.SetAttributes(attrApproval.Bool(true), attrApprovalMs.Int64(d.Milliseconds()), attrDecision.String(cmp.Or(how, "none")))
}
