package runtime

import (
	"context"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// emit tells the request's observer (codemode.WithObserver), if any.
func emit(ctx context.Context, e codemode.Event) {
	if o := codemode.ObserverFrom(ctx); o != nil {
		o.Event(e)
	}
}

// observeCall reports a call about to be made and returns what passes the
// connector's progress reports (connectors.CallHook) to the observer: nil
// when there is none, so the connector asks its source for none.
func observeCall(ctx context.Context, e codemode.Entry) func(string) {
	o := codemode.ObserverFrom(ctx)
	if o == nil {
		return nil
	}
	ev := codemode.Event{Kind: codemode.EventCall, ExecutionID: e.ExecutionID, Connector: e.Connector, Method: e.Method, Seq: e.Seq}
	o.Event(ev)
	return func(msg string) {
		p := ev
		p.Kind, p.Message = codemode.EventProgress, msg
		o.Event(p)
	}
}

// endEvents are the events of the statuses a pass can leave its run in.
var endEvents = map[codemode.ExecStatus]codemode.EventKind{
	codemode.StatusPaused:    codemode.EventPaused,
	codemode.StatusCompleted: codemode.EventCompleted,
	codemode.StatusError:     codemode.EventFailed,
	codemode.StatusRejected:  codemode.EventRejected,
}
