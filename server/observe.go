package server

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry/propagate"
)

// observe returns the context a tool request drives the runtime with: one
// whose observer (codemode.WithObserver) reports to the client that sent
// the request — notifications/progress as the run makes calls and as
// downstream servers report progress, when the request carried a progress
// token; and a log notification (logger "codemode", at the level the
// client chose with logging/setLevel) as the run starts, pauses, is
// approved, completes, fails or is rejected. The handler calls sent before
// it returns its result: on streamable HTTP it waits until those
// notifications are written (see sentCounter).
func (s *Server) observe(ctx context.Context, req mcp.CallToolRequest) (_ context.Context, sent func()) {
	o := s.observer(ctx, req.Params.Meta)
	c, _ := ctx.Value(sentKey{}).(*sentCounter) // nil: not streamable HTTP, which alone loses them
	base := c.count()
	return codemode.WithObserver(ctx, o), func() {
		o.mu.Lock()
		n := o.count
		o.mu.Unlock()
		if n > 0 && c != nil {
			c.wait(ctx, base+n, 2*time.Second)
		}
	}
}

// observer is the observer of a request whose _meta is meta, sending
// through ctx (its session and stream).
func (s *Server) observer(ctx context.Context, meta *mcp.Meta) *clientObserver {
	o := &clientObserver{s: s, ctx: ctx}
	if meta != nil {
		o.token = meta.ProgressToken
	}
	return o
}

// traced continues the trace a request's _meta names (traceparent,
// tracestate) when Options.TraceContext is set: every tool call's
// (handles) and a task-augmented codemode call's (the front). It wins
// over the HTTP request's headers (guard), which a proxy may have set.
func (s *Server) traced(ctx context.Context, meta *mcp.Meta) context.Context {
	if s.opts.TraceContext && meta != nil {
		return propagate.FromMeta(ctx, meta.AdditionalFields)
	}
	return ctx
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
	if o.token != nil {
		o.send("progress", func() error {
			o.sent++
			return o.s.mcp.SendNotificationToClient(o.ctx, string(mcp.MethodNotificationProgress), map[string]any{
				"progressToken": o.token,
				"progress":      o.sent,
				"message":       msg,
			})
		})
	}
}

// send sends one notification (what: its kind, for the log) under the
// observer's lock, and counts it when it was sent.
func (o *clientObserver) send(what string, notify func() error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := notify(); err != nil {
		o.s.log.Debug(what+" notification not sent", "err", err)
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
	o.send("log", func() error {
		return o.s.mcp.SendLogMessageToClient(o.ctx, mcp.NewLoggingMessageNotification(level, "codemode", data))
	})
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

// mcp-go v1.2.1's streamable-HTTP transport can drop the last notification
// a tool handler sends before its result: the goroutine that forwards
// notifications to the response may have taken it off the session's
// channel but not yet written it when the result is written, and then
// discards it. A handler that sent notifications therefore returns only
// once they have been written (observe): the guard counts the
// notification events written on a session's responses (sentCounter, one
// per session, reached from the request's context — the session's GET
// stream takes some of them), and the observer counts what it sent. The
// count is per session, so notifications of a concurrent request of the
// same session can end a wait early; that request's own wait covers them.

// sentCounter counts notification events written on the responses of one
// session (or one response, without a session). Safe for concurrent use.
type sentCounter struct {
	mu      sync.Mutex
	n       int
	changed chan struct{} // closed and replaced on every add
}

type sentKey struct{}

func (c *sentCounter) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// count returns how many notifications have been written so far (none
// without a counter).
func (c *sentCounter) count() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// wait returns once n notifications have been written, or when ctx ends,
// or after timeout (a transport that buffers notifications, or one that
// lost the connection, never writes them).
func (c *sentCounter) wait(ctx context.Context, n int, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		c.mu.Lock()
		if c.n >= n {
			c.mu.Unlock()
			return
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// isNotificationEvent reports whether a write is one SSE event carrying a
// notification (mcp-go writes each event with one Write: "event: message\n"
// then "data: " and the JSON-RPC message).
func isNotificationEvent(p []byte) bool {
	const prefix = "event: message\ndata: "
	return bytes.HasPrefix(p, []byte(prefix)) && isNotification(p[len(prefix):])
}

// isAnswerEvent reports whether a write is one SSE event carrying a
// response: neither a notification nor a request of the server's, whose
// method or params come within the head (its ids are numbers; mcp-go's
// pings, "data:" without a space, are not counted either).
func isAnswerEvent(p []byte) bool {
	const prefix = "event: message\ndata: "
	if !bytes.HasPrefix(p, []byte(prefix)) {
		return false
	}
	head := p[len(prefix):min(len(p), len(prefix)+64)]
	return !bytes.Contains(head, []byte(`"method":`)) && !bytes.Contains(head, []byte(`"params":`))
}

// isNotification reports whether a JSON-RPC message mcp-go encoded is a
// notification (its method comes second).
func isNotification(msg []byte) bool {
	return bytes.Contains(msg[:min(len(msg), 64)], []byte(`"method":"notifications/`))
}
