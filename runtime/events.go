package runtime

import (
	"context"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// emit tells the request's observer (codemode.WithObserver), if any.
func emit(ctx context.Context, e codemode.Event) {
	if o := codemode.ObserverFrom(ctx); o != nil {
		o.Event(e)
	}
}

// observeCall reports a call about to be made and returns the context to
// make it with: one through which the connector's own progress reports
// reach the observer too.
func observeCall(ctx context.Context, e codemode.Entry) context.Context {
	o := codemode.ObserverFrom(ctx)
	if o == nil {
		return ctx
	}
	ev := codemode.Event{Kind: codemode.EventCall, ExecutionID: e.ExecutionID, Connector: e.Connector, Method: e.Method, Seq: e.Seq}
	o.Event(ev)
	return connectors.WithProgress(ctx, func(msg string) {
		p := ev
		p.Kind, p.Message = codemode.EventProgress, msg
		o.Event(p)
	})
}

// endEvent is the event of a pass that left its run in status to (stop:
// why the host stopped the pass, if it did).
func endEvent(e *codemode.Execution, to codemode.ExecStatus, stop *stopReason) (codemode.Event, bool) {
	ev := codemode.Event{ExecutionID: e.ID, Message: e.Error}
	switch to {
	case codemode.StatusPaused:
		ev.Kind = codemode.EventPaused
		if stop != nil {
			ev.Message = stop.msg
		}
	case codemode.StatusCompleted:
		ev.Kind = codemode.EventCompleted
	case codemode.StatusError:
		ev.Kind = codemode.EventFailed
	case codemode.StatusRejected:
		ev.Kind = codemode.EventRejected
	default:
		return ev, false
	}
	return ev, true
}
