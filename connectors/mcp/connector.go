// Package mcp is the connector for downstream MCP servers: a stdio server
// started as a child process, a streamable-HTTP server or a legacy SSE
// server. It is the only package besides server/ that imports mcp-go; callers
// see the neutral connectors.Connector.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// ErrClosed is returned (wrapped) by calls on a closed connector.
var ErrClosed = errors.New("connector closed")

// clientName is the client name sent to downstream servers.
const clientName = "codemode-mcp"

// maxPages bounds tools/list pagination against a server that never stops.
const maxPages = 1000

// A Connector is a connection to one downstream MCP server. It implements
// connectors.Connector; its methods are safe for concurrent use.
type Connector struct {
	// fixed at creation
	cfg           Config
	logger        *slog.Logger
	client        *client.Client
	stderr        *lineLogger     // stdio only
	httpTransport *http.Transport // url only
	serverName    string
	serverVersion string
	instructions  string

	closeOnce  sync.Once
	closeErr   error
	stopListen func()        // ends the subscriptions/listen stream, if one was opened
	listening  chan struct{} // closed when the server acknowledges the stream
	ackOnce    sync.Once

	mu         sync.RWMutex
	cmd        *exec.Cmd // stdio child, set when it is started
	closed     bool
	tools      []connectors.Tool
	bySource   map[string]int // SourceName -> index in tools
	collisions []connectors.Collision
}

var _ connectors.Connector = (*Connector)(nil)

// Dial starts or connects to the server described by cfg, performs the
// MCP handshake and lists the server's tools. The context bounds only the
// connection and listing; a started child process lives until Close.
func Dial(ctx context.Context, cfg Config) (*Connector, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("mcp connector %q: %w", cfg.Name, err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	c := &Connector{cfg: cfg, logger: logger.With("connector", cfg.Name), listening: make(chan struct{})}
	tr, err := c.newTransport()
	if err != nil {
		return nil, fmt.Errorf("mcp connector %q: %w", cfg.Name, err)
	}
	c.client = client.NewClient(tr)
	c.client.OnNotification(c.onNotification)

	if err := c.connect(ctx); err != nil {
		_ = c.Close()
		return nil, c.dialError(err)
	}
	if err := c.Refresh(ctx); err != nil {
		_ = c.Close()
		return nil, c.dialError(err)
	}
	if err := c.listen(ctx); err != nil {
		_ = c.Close()
		return nil, c.dialError(err)
	}
	return c, nil
}

// listen opens a subscriptions/listen stream for tool-list changes when
// someone wants them, the server offers them, and the connection is
// streamable HTTP on protocol 2026-07-28 or later, which has no other way
// to carry them (stdio and SSE streams carry notifications unasked).
func (c *Connector) listen(ctx context.Context) error {
	caps := c.client.GetServerCapabilities()
	if c.cfg.OnToolsChanged == nil || c.cfg.URL == "" || c.cfg.SSE ||
		!mcpgo.IsModernProtocol(c.client.ProtocolVersion()) ||
		caps.Tools == nil || !caps.Tools.ListChanged {
		return nil
	}
	stop, err := c.client.ListenAsync(context.WithoutCancel(ctx),
		mcpgo.SubscriptionFilter{ToolsListChanged: true},
		func(err error) { c.logger.Warn("tool-list change stream ended", "err", err) })
	if err != nil {
		return fmt.Errorf("listen for tool-list changes: %w", err)
	}
	c.stopListen = stop
	// Wait for the acknowledgement, so changes made after Dial are seen.
	timer := time.NewTimer(listenAckTimeout)
	defer timer.Stop()
	select {
	case <-c.listening:
	case <-timer.C:
		c.logger.Warn("the server did not acknowledge the tool-list change stream", "after", listenAckTimeout)
	case <-ctx.Done():
		return fmt.Errorf("listen for tool-list changes: %w", ctx.Err())
	}
	return nil
}

// listenAckTimeout bounds the wait for a subscriptions/listen acknowledgement.
const listenAckTimeout = 5 * time.Second

// connect starts the transport and performs the handshake. Cancelling ctx
// closes the transport, which ends a handshake in progress.
func (c *Connector) connect(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// An SSE start waits for the server's endpoint event, so it must be
	// abortable; the other starts return at once, and mcp-go's stdio
	// transport must not be closed while it is spawning the child.
	if c.cfg.SSE {
		defer c.closeOnDone(ctx)()
	}
	// The transport outlives ctx: the SSE stream and the stdio request
	// handler keep the context given to Start.
	if err := c.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if !c.cfg.SSE {
		defer c.closeOnDone(ctx)()
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: clientName, Version: c.clientVersion()}
	res, err := c.client.Initialize(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("initialize: %w", ctx.Err())
		}
		return fmt.Errorf("initialize: %w", err)
	}
	c.serverName = res.ServerInfo.Name
	c.serverVersion = res.ServerInfo.Version
	c.instructions = res.Instructions
	c.logger.Debug("connected", "server", c.serverName, "version", c.serverVersion,
		"protocol", c.client.ProtocolVersion())
	return nil
}

// closeOnDone closes the client when ctx ends, until the returned release
// function is called; release waits for a close in progress.
func (c *Connector) closeOnDone(ctx context.Context) (release func()) {
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(closed)
		_ = c.client.Close()
	})
	return func() {
		if !stop() {
			<-closed
		}
	}
}

// dialError wraps a failed Dial's error, adding the last stderr lines of a
// stdio server (which usually say why it failed). Close has run, so the
// child's stderr has been read to the end.
func (c *Connector) dialError(err error) error {
	err = fmt.Errorf("mcp connector %q: %w", c.cfg.Name, err)
	if c.stderr == nil {
		return err
	}
	if tail := c.stderr.Tail(); len(tail) > 0 {
		return fmt.Errorf("%w; server stderr:\n  %s", err, strings.Join(tail, "\n  "))
	}
	return err
}

func (c *Connector) clientVersion() string {
	if c.cfg.ClientVersion != "" {
		return c.cfg.ClientVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func (c *Connector) onNotification(n mcpgo.JSONRPCNotification) {
	if n.Method == mcpgo.MethodNotificationSubscriptionsAcknowledged {
		c.ackOnce.Do(func() { close(c.listening) })
		return
	}
	if n.Method != mcpgo.MethodNotificationToolsListChanged {
		return
	}
	c.logger.Debug("server announced a changed tool list")
	if c.cfg.OnToolsChanged != nil {
		c.cfg.OnToolsChanged()
	}
}

// Name returns the connector's global name in the sandbox.
func (c *Connector) Name() string { return c.cfg.Name }

// ServerInfo returns the name and version the server reported.
func (c *Connector) ServerInfo() (name, version string) { return c.serverName, c.serverVersion }

// Instructions returns the server's usage instructions, if it sent any.
func (c *Connector) Instructions() string { return c.instructions }

// Tools returns the tools kept by Include/Exclude in the server's order,
// with sanitized, unique names. Callers must not modify the schemas.
func (c *Connector) Tools(context.Context) ([]connectors.Tool, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, fmt.Errorf("mcp connector %q: %w", c.cfg.Name, ErrClosed)
	}
	return append([]connectors.Tool(nil), c.tools...), nil
}

// Collisions reports the tools whose sanitized names clashed at the last
// listing; they were renamed, never merged.
func (c *Connector) Collisions() []connectors.Collision {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]connectors.Collision(nil), c.collisions...)
}

// Refresh lists the server's tools again (following pagination) and
// replaces the connector's tool list.
func (c *Connector) Refresh(ctx context.Context) error {
	tools, err := c.listTools(ctx)
	if err != nil {
		return err
	}
	collisions := connectors.AssignNames(tools)
	for _, col := range collisions {
		c.logger.Warn("tool names collide after sanitizing; renamed with numeric suffixes",
			"name", col.Name, "sources", col.Sources)
	}
	bySource := make(map[string]int, len(tools))
	for i, t := range tools {
		bySource[t.SourceName] = i
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fmt.Errorf("mcp connector %q: %w", c.cfg.Name, ErrClosed)
	}
	c.tools, c.bySource, c.collisions = tools, bySource, collisions
	return nil
}

// listTools pages through tools/list. It decodes the raw pages itself (see
// tap) and keeps only what mcp-go's own decoding kept when that succeeded.
func (c *Connector) listTools(ctx context.Context) ([]connectors.Tool, error) {
	var tools []connectors.Tool
	seen := map[string]bool{}
	cursors := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("list tools: more than %d pages", maxPages)
		}
		sink := &rawSink{}
		req := mcpgo.ListToolsRequest{}
		req.Params.Cursor = mcpgo.Cursor(cursor)
		res, err := c.client.ListToolsByPage(withSink(ctx, sink), req)
		raw := sink.result()
		if raw == nil {
			if err == nil {
				err = errors.New("empty result")
			}
			return nil, fmt.Errorf("list tools: %w", err)
		}
		var kept map[string]bool
		if err != nil {
			c.logger.Debug("mcp-go could not decode tools/list; decoding it leniently", "err", err)
		} else {
			kept = make(map[string]bool, len(res.Tools))
			for _, t := range res.Tools {
				kept[t.Name] = true
			}
		}
		wire, next, skipped, err := decodeToolPage(raw)
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		for _, e := range skipped {
			c.logger.Warn("skipping a malformed tool definition", "err", e)
		}
		for i := range wire {
			w := &wire[i]
			switch {
			case kept != nil && !kept[w.Name]:
				c.logger.Warn("skipping a tool the MCP client rejected", "tool", w.Name)
			case seen[w.Name]:
				c.logger.Warn("skipping a duplicate tool definition", "tool", w.Name)
			case c.cfg.selected(w.Name):
				seen[w.Name] = true
				tools = append(tools, w.toTool())
			default:
				seen[w.Name] = true
			}
		}
		if next == "" {
			return tools, nil
		}
		if cursors[next] {
			return nil, fmt.Errorf("list tools: the server repeated cursor %q", next)
		}
		cursors[next] = true
		cursor = next
	}
}

// Call invokes the tool whose source name is tool with args, a JSON object
// (empty or null means {}). A tool's own failure (isError) is reported in
// the Result; err reports an unknown tool (wrapping
// connectors.ErrUnknownTool), bad arguments, a timeout, a transport failure
// or a malformed result.
func (c *Connector) Call(ctx context.Context, tool string, args json.RawMessage) (connectors.Result, error) {
	c.mu.RLock()
	closed := c.closed
	_, known := c.bySource[tool]
	c.mu.RUnlock()
	switch {
	case closed:
		return connectors.Result{}, fmt.Errorf("mcp connector %q: %w", c.cfg.Name, ErrClosed)
	case !known:
		return connectors.Result{}, fmt.Errorf("mcp connector %q: %w %q", c.cfg.Name, connectors.ErrUnknownTool, tool)
	}
	args, err := objectArgs(args)
	if err != nil {
		return connectors.Result{}, fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, tool, err)
	}

	callCtx, release := c.callContext(ctx)
	defer release()
	sink := &rawSink{}
	req := mcpgo.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.client.CallTool(withSink(callCtx, sink), req)
	raw := sink.result()
	if err != nil {
		switch {
		case callCtx.Err() != nil:
			return connectors.Result{}, fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, tool, context.Cause(callCtx))
		case raw == nil:
			return connectors.Result{}, fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, tool, err)
		}
		// The server answered, but mcp-go could not decode the answer (an
		// unknown content type, say) or wanted more input: decode it here.
		c.logger.Debug("mcp-go rejected a tools/call result; decoding it leniently", "tool", tool, "err", err)
	}
	if raw == nil && res != nil {
		if raw, err = json.Marshal(res); err != nil {
			return connectors.Result{}, fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, tool, err)
		}
	}
	out, err := decodeCallResult(raw)
	if err != nil {
		return connectors.Result{}, fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, tool, err)
	}
	return out, nil
}

// callContext derives the context of one call: it is cancelled when ctx
// ends or CallTimeout passes, with the reason as its cause, but it has no
// deadline, since mcp-go's SSE transport turns a deadline into a timeout
// error of its own that would hide the reason.
func (c *Connector) callContext(ctx context.Context) (context.Context, func()) {
	callCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	var timer *time.Timer
	if d := c.cfg.CallTimeout; d > 0 {
		timer = time.AfterFunc(d, func() {
			cancel(fmt.Errorf("timed out after %v: %w", d, context.DeadlineExceeded))
		})
	}
	return callCtx, func() {
		stop()
		if timer != nil {
			timer.Stop()
		}
		cancel(nil)
	}
}

// objectArgs checks that args is a JSON object; empty or null is {}.
func objectArgs(args json.RawMessage) (json.RawMessage, error) {
	if isNull(args) {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return nil, errors.New("arguments must be a JSON object")
	}
	return args, nil
}

// Close disconnects from the server. For a stdio server it closes the
// child's stdin, sends SIGTERM after a grace period and SIGKILL after
// another, and waits for the child and its stderr; then it kills whatever
// is left of the child's process group. It is safe to call more than once.
// A child's non-zero exit status is logged, not returned.
func (c *Connector) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()

		if c.stopListen != nil {
			c.stopListen()
		}
		start := time.Now()
		err := c.client.Close()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			c.logger.Debug("server process exited", "status", exitErr.ProcessState.String())
			err = nil
		}
		c.mu.RLock()
		cmd := c.cmd
		c.mu.RUnlock()
		if cmd != nil && cmd.Process != nil {
			if kerr := killProcessGroup(cmd.Process.Pid); kerr != nil && err == nil {
				err = fmt.Errorf("kill process group: %w", kerr)
			}
			c.logger.Debug("server process stopped", "after", time.Since(start).Round(time.Millisecond))
		}
		if c.stderr != nil {
			c.stderr.Flush()
		}
		if c.httpTransport != nil {
			c.httpTransport.CloseIdleConnections()
		}
		if err != nil {
			c.closeErr = fmt.Errorf("mcp connector %q: close: %w", c.cfg.Name, err)
		}
	})
	return c.closeErr
}
