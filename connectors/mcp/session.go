package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// Why a session ended (the cause of its context).
var (
	errExited         = errors.New("the server process exited")
	errConnectionLost = errors.New("the connection to the server was lost")
	errSessionClosed  = errors.New("the session was closed")
)

// A session is one connection to the server: a client over a fresh
// transport and, for a stdio server, its child process. When it fails it is
// replaced whole on the next call (see reconnect).
type session struct {
	// fixed at creation
	c       *Connector
	client  *client.Client
	proc    *process        // stdio only
	stdio   *stdioTransport // stdio only
	started time.Time
	// ctx ends when the session does: the child exited, the connection was
	// lost, or the session was closed (the cause says which). Calls in
	// flight end with it.
	ctx    context.Context
	cancel context.CancelCauseFunc

	serverName, serverVersion string
	// tasks: the server runs tools/call as tasks on this session's
	// protocol (task.go); set by connect.
	tasks bool

	stopListen func()        // ends the subscriptions/listen stream, if one was opened
	listening  chan struct{} // closed when the server acknowledges the stream
	ackOnce    sync.Once

	closeOnce sync.Once
	closeErr  error
}

// startSession starts a transport (and a stdio server's process), performs
// the handshake, lists the tools and, when wanted, opens the tool-list
// change stream. On failure everything it started is stopped.
func (c *Connector) startSession(ctx context.Context) (*session, []connectors.Tool, error) {
	s := &session{c: c, started: time.Now(), listening: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	c.phase.Store(phaseConnecting)
	tr, err := c.newTransport(s)
	if err != nil {
		s.close()
		return nil, nil, err
	}
	var opts []client.ClientOption
	if c.legacy.Load() {
		opts = append(opts, client.WithProtocolVersion(mcpgo.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	if c.cfg.Elicit != nil {
		opts = append(opts, client.WithElicitationHandler(elicitHandler(c.cfg.Elicit)))
	}
	s.client = client.NewClient(tr, opts...)
	s.client.OnNotification(s.onNotification)
	s.client.OnConnectionLost(func(err error) { // SSE only
		c.logger.Warn("the connection to the MCP server was lost", "err", err)
		s.cancel(fmt.Errorf("%w: %v", errConnectionLost, err))
	})
	tools, err := s.open(ctx)
	if errors.Is(err, errLegacyTasks) {
		s.close()
		c.logger.Info("the MCP server offers tasks in the 2025-11-25 form only; speaking 2025-11-25 to it")
		return c.startSession(ctx)
	}
	if err != nil {
		if s.proc != nil && ctx.Err() == nil {
			// A child that died is reaped a moment after its output ends;
			// wait for it so the error can say how it ended.
			s.proc.waitExit(exitNoticeDelay)
		}
		s.close()
		return s, nil, err
	}
	return s, tools, nil
}

// The phases of a session start, named in the error of one that does not
// finish within Config.StartTimeout ("timed out after 10s initialising").
const (
	phaseConnecting   = "connecting"
	phaseInitialising = "initialising"
	phaseListing      = "listing tools"
	phaseListening    = "subscribing to tool-list changes"
)

// open performs the handshake, lists the tools and opens the change
// stream. The session's end ends it, with why: a legacy SSE stream lost
// after initialize carries no answer any more, and nothing else would end
// the wait for one.
func (s *session) open(ctx context.Context) (_ []connectors.Tool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(s.ctx, func() { cancel(context.Cause(s.ctx)) })()
	defer func() {
		if err != nil && s.ctx.Err() != nil && !errors.Is(err, context.Cause(s.ctx)) {
			err = fmt.Errorf("%w: %w", err, context.Cause(s.ctx))
		}
	}()
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	s.c.phase.Store(phaseListing)
	tools, err := s.c.listTools(ctx, s)
	if err != nil {
		return nil, err
	}
	s.c.phase.Store(phaseListening)
	if err := s.listen(ctx); err != nil {
		return nil, err
	}
	return tools, nil
}

// connect starts the transport and performs the handshake; cancelling
// ctx ends either.
func (s *session) connect(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := s.c
	// Closing the client ends a start in progress (an SSE start waits for
	// the server's endpoint event) and a handshake.
	defer s.closeOnDone(ctx)()
	// The transport outlives ctx: the SSE stream and the stdio request
	// handler keep the context given to Start.
	if err := s.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	c.phase.Store(phaseInitialising)
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "codemode-mcp", Version: clientVersion()}
	res, err := s.client.Initialize(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("initialize: %w", context.Cause(ctx))
		}
		return fmt.Errorf("initialize: %w", c.answered(err))
	}
	s.serverName = res.ServerInfo.Name
	s.serverVersion = res.ServerInfo.Version
	if offersTasks(s.client.GetServerCapabilities()) {
		if mcpgo.IsModernProtocol(s.client.ProtocolVersion()) {
			c.legacy.Store(true)
			return errLegacyTasks
		}
		s.tasks = true
	}
	c.logger.Debug("connected", "server", s.serverName, "version", s.serverVersion,
		"protocol", s.client.ProtocolVersion())
	return nil
}

// closeOnDone closes the client when ctx ends, until the returned release
// function is called; release waits for a close in progress.
func (s *session) closeOnDone(ctx context.Context) (release func()) {
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(closed)
		_ = s.client.Close()
	})
	return func() {
		if !stop() {
			<-closed
		}
	}
}

// listen opens a subscriptions/listen stream for tool-list changes when
// someone wants them, the server offers them, and the connection is
// streamable HTTP on protocol 2026-07-28 or later, which has no other way
// to carry them (stdio and SSE streams carry notifications unasked).
func (s *session) listen(ctx context.Context) error {
	c := s.c
	caps := s.client.GetServerCapabilities()
	if c.cfg.OnToolsChanged == nil || c.cfg.URL == "" || c.cfg.SSE ||
		!mcpgo.IsModernProtocol(s.client.ProtocolVersion()) ||
		caps.Tools == nil || !caps.Tools.ListChanged {
		return nil
	}
	stop, err := s.client.ListenAsync(context.WithoutCancel(ctx),
		mcpgo.SubscriptionFilter{ToolsListChanged: true},
		func(err error) { c.logger.Warn("tool-list change stream ended", "err", err) })
	if err != nil {
		return fmt.Errorf("listen for tool-list changes: %w", err)
	}
	s.stopListen = stop
	// Wait for the acknowledgement, so changes made after Open are seen.
	select {
	case <-s.listening:
	case <-time.After(listenAckTimeout):
		c.logger.Warn("the server did not acknowledge the tool-list change stream", "after", listenAckTimeout)
	case <-ctx.Done():
		return fmt.Errorf("listen for tool-list changes: %w", ctx.Err())
	}
	return nil
}

// listenAckTimeout bounds the wait for a subscriptions/listen acknowledgement.
const listenAckTimeout = 5 * time.Second

func (s *session) onNotification(n mcpgo.JSONRPCNotification) {
	if n.Method == string(mcpgo.MethodNotificationProgress) {
		s.c.progress.deliver(n)
		return
	}
	if n.Method == mcpgo.MethodNotificationSubscriptionsAcknowledged {
		s.ackOnce.Do(func() { close(s.listening) })
		return
	}
	if n.Method != mcpgo.MethodNotificationToolsListChanged {
		return
	}
	s.c.logger.Debug("server announced a changed tool list")
	if s.c.cfg.OnToolsChanged != nil {
		s.c.cfg.OnToolsChanged()
	}
}

// alive reports whether the session has not ended. A stdio session whose
// output ended or whose child was reaped is over even before the reaper
// cancels its context.
func (s *session) alive() bool {
	switch {
	case s.ctx.Err() != nil:
		return false
	case s.proc != nil && s.proc.hasExited():
		return false
	case s.stdio != nil && s.stdio.ended():
		return false
	}
	return true
}

// close ends the session: the change stream, the client and transport,
// and the child process, which it reaps. It is safe to call more than once
// and concurrently; every call waits for the first to finish.
func (s *session) close() error {
	s.closeOnce.Do(func() {
		s.cancel(errSessionClosed)
		if s.stopListen != nil {
			s.stopListen()
		}
		var errs []error
		if s.client != nil {
			errs = append(errs, s.client.Close())
		}
		if s.proc != nil {
			errs = append(errs, s.proc.stop(s.c.logger))
		}
		if s.stdio != nil {
			// The process is gone and our end of its stdout closed, so
			// the transport's reader has ended or is about to.
			s.stdio.wait()
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// elicitHandler answers a server's elicitation requests with
// Config.Elicit.
type elicitHandler func(ctx context.Context, message string, schema json.RawMessage) (string, map[string]any, error)

func (h elicitHandler) Elicit(ctx context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	if req.Params.Mode != "" && req.Params.Mode != "form" {
		return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseActionDecline}}, nil
	}
	schema, err := json.Marshal(req.Params.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("the elicitation's requested schema: %w", err)
	}
	action, content, err := h(ctx, req.Params.Message, schema)
	if err != nil {
		return nil, err
	}
	out := &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseAction(action)}}
	if action == string(mcpgo.ElicitationResponseActionAccept) {
		out.Content = content
	}
	return out, nil
}
