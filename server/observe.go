package server

import (
	"context"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// observe returns the context a tool request drives the runtime with: one
// whose observer (codemode.WithObserver) reports to the client that sent
// the request — notifications/progress as the run makes calls and as
// downstream servers report progress, when the request carried a progress
// token; and a log notification (logger "codemode", at the level the
// client chose with logging/setLevel) as the run starts, pauses, is
// approved, completes, fails or is rejected. The handler calls sent before
// it returns its result: it waits until those notifications are written
// (see awaitSent).
func (s *Server) observe(ctx context.Context, req mcp.CallToolRequest) (_ context.Context, sent func()) {
	o := &clientObserver{s: s, ctx: ctx}
	if req.Params.Meta != nil {
		o.token = req.Params.Meta.ProgressToken
	}
	base := sentSoFar(ctx)
	return codemode.WithObserver(ctx, o), func() {
		o.mu.Lock()
		n := o.count
		o.mu.Unlock()
		awaitSent(ctx, base, n)
	}
}

// clientObserver is the observer of one request. It keeps the request's
// context: the notifications go to the session and stream it names.
type clientObserver struct {
	s     *Server
	ctx   context.Context
	token mcp.ProgressToken // nil: the client asked for no progress

	mu    sync.Mutex // serialises notifications, so progress only grows on the wire
	sent  float64    // progress notifications sent
	count int        // notifications sent
}

func (o *clientObserver) Event(e codemode.Event) {
	switch e.Kind {
	case codemode.EventCall:
		o.progress(fmt.Sprintf("%s.%s (call %d)", e.Connector, e.Method, e.Seq))
	case codemode.EventProgress:
		o.progress(fmt.Sprintf("%s.%s (call %d): %s", e.Connector, e.Method, e.Seq, e.Message))
	default:
		o.log(e)
	}
}

// progress sends one progress notification, if the client asked for them.
func (o *clientObserver) progress(msg string) {
	if o.token == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent++
	err := o.s.mcp.SendNotificationToClient(o.ctx, string(mcp.MethodNotificationProgress), map[string]any{
		"progressToken": o.token,
		"progress":      o.sent,
		"message":       msg,
	})
	if err != nil {
		o.s.log.Debug("progress notification not sent", "err", err)
		return
	}
	o.count++
}

// eventLevels are the log levels of run events.
var eventLevels = map[codemode.EventKind]mcp.LoggingLevel{
	codemode.EventStarted:   mcp.LoggingLevelInfo,
	codemode.EventApproved:  mcp.LoggingLevelInfo,
	codemode.EventCompleted: mcp.LoggingLevelInfo,
	codemode.EventPaused:    mcp.LoggingLevelNotice,
	codemode.EventRejected:  mcp.LoggingLevelWarning,
	codemode.EventFailed:    mcp.LoggingLevelError,
	codemode.EventCancelled: mcp.LoggingLevelWarning,
}

// log sends a run event as a log notification (the session filters it by
// the level the client set).
func (o *clientObserver) log(e codemode.Event) {
	level, ok := eventLevels[e.Kind]
	if !ok || !o.wants(level) {
		return
	}
	data := map[string]any{"event": e.Kind.String(), "executionId": e.ExecutionID}
	if e.Message != "" {
		data["message"] = short.FirstLine(e.Message)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	err := o.s.mcp.SendLogMessageToClient(o.ctx, mcp.NewLoggingMessageNotification(level, "codemode", data))
	if err != nil {
		o.s.log.Debug("log notification not sent", "event", e.Kind.String(), "err", err)
		return
	}
	o.count++
}

// wants reports whether the client asked for log messages at level: by
// logging/setLevel, or on protocol 2026-07-28 by the level its request
// declares (as mcp-go's SendLogMessageToClient decides).
func (o *clientObserver) wants(level mcp.LoggingLevel) bool {
	if info := mcpserver.RequestProtocolInfoFromContext(o.ctx); info != nil && info.Modern {
		return info.LogLevel != "" && level.ShouldSendTo(info.LogLevel)
	}
	sess, ok := mcpserver.ClientSessionFromContext(o.ctx).(mcpserver.SessionWithLogging)
	return ok && level.ShouldSendTo(sess.GetLogLevel())
}
