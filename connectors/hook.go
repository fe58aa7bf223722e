package connectors

import "context"

// A CallHook is how a connector tells the runtime what happens to one call
// while the call runs: the runtime makes one per call and puts it in the
// context it calls Connector.Call with (WithCallHook); the connector finds
// it with CallHookFrom and reports through its methods, each of which is
// safe on a nil hook (a call made outside the runtime, by a test or a
// tool, has none). Reporting is optional: a connector that can tell
// nothing reports nothing, and the call is correct without it; what a
// report buys is named on each method.
//
// It is the one channel from a connector to the runtime during a call, so
// that a new signal is a new field here and one line in the runtime, not a
// new context key, capability or interface.
type CallHook struct {
	// OnSent runs when the call's request has left for its source
	// (Sent). The runtime writes its due log group then, so the write
	// overlaps the source's work instead of following it. It may take a
	// while (a log write); it is called at most once per call by the
	// runtime's own guard, however often the connector reports.
	OnSent func()
	// OnProgress receives a short message about the call's progress
	// (Progress); nil when nobody listens, so a connector need not ask
	// its source for progress (WantsProgress). It must be safe for
	// concurrent use and must not block.
	OnProgress func(message string)
	// User is the subject of the person the request is made for: a
	// call's is its run's starter (codemode.Execution.StartedBy), never
	// whoever resumed the run, so that an approver's credentials are never
	// lent to another's run. A connector whose source is reached with each
	// person's own credentials (Capabilities.PerUser) uses that person's;
	// others ignore it. The runtime sets it on the context of Call and of
	// the SignIner's methods; "" outside the runtime.
	User string
	// UserToken is User's own access token at the team's issuer, when
	// the request is User's own (their request started or resumed the
	// run, or signs them in); "" otherwise, and always when another
	// person's request (an approver's) drives the run. A connector that
	// trades it for a downstream token (RFC 8693 token exchange) does so
	// only then; it must not keep it.
	UserToken string
}

type callHookKey struct{}

// WithCallHook returns ctx carrying h, for the connector of one call.
func WithCallHook(ctx context.Context, h *CallHook) context.Context {
	return context.WithValue(ctx, callHookKey{}, h)
}

// CallHookFrom returns the CallHook ctx carries, or nil (whose methods do
// nothing).
func CallHookFrom(ctx context.Context) *CallHook {
	h, _ := ctx.Value(callHookKey{}).(*CallHook)
	return h
}

// Sent reports that the call's request has left, on the goroutine that
// called Call, before the connector waits for the answer (the OpenAPI
// connector once the request is written on its connection, the stdio MCP
// connector once its tools/call is written on the server's stdin).
// Reporting it again (a request sent again) is harmless. A connector that
// cannot tell does not call it: the runtime then writes its log once Call
// returns.
func (h *CallHook) Sent() {
	if h != nil && h.OnSent != nil {
		h.OnSent()
	}
}

// Progress reports a short message about the call's progress (an MCP
// server's notifications/progress, say).
func (h *CallHook) Progress(message string) {
	if h != nil && h.OnProgress != nil {
		h.OnProgress(message)
	}
}

// UserSubject returns the User the hook names ("" for a nil hook).
func (h *CallHook) UserSubject() string {
	if h == nil {
		return ""
	}
	return h.User
}

// UserAccessToken returns the hook's UserToken ("" for a nil hook).
func (h *CallHook) UserAccessToken() string {
	if h == nil {
		return ""
	}
	return h.UserToken
}

// WantsProgress reports whether anybody listens to Progress: a connector
// asks its source for progress (an MCP progress token) only then.
func (h *CallHook) WantsProgress() bool { return h != nil && h.OnProgress != nil }
