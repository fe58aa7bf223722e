// Package mcp is the connector for downstream MCP servers: a stdio server
// started as a child process, a streamable-HTTP server or a legacy SSE
// server. It is the only package besides server/ that imports mcp-go; callers
// see the neutral connectors.Connector.
package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/backoff"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/telemetry/propagate"
)

// ErrClosed is returned (wrapped) by calls on a closed connector.
var ErrClosed = errors.New("connector closed")

// Bounds on one server's tool list, against a server that pages without
// end or lists without measure: what the connector keeps, and the catalog
// builds declarations and search documents from, stays within them. The
// largest servers known list a few hundred tools in well under a MiB.
const (
	maxPages         = 1000     // tools/list round trips
	maxTools         = 10_000   // tool definitions, kept or not
	maxToolListBytes = 16 << 20 // the raw pages together
)

// toolBudget is what is left of maxTools and maxToolListBytes while a
// tool list's pages arrive.
type toolBudget struct{ tools, bytes int }

// take counts a raw tools/list page against the budget. It runs before
// anything decodes the page whole (rawSink.admit): mcp-go's typed
// decoding takes some 50 times a page's size, 900 MiB for a page of 16
// MiB of minimal tools, so a page must be refused before it. Counting
// decodes each tool into nothing; a page that is not a JSON object is
// decodeToolPage's to report.
func (b *toolBudget) take(raw json.RawMessage) error {
	if b.bytes -= len(raw); b.bytes < 0 {
		return fmt.Errorf("the tool list is more than %d MiB", maxToolListBytes>>20)
	}
	var page struct {
		Tools []struct{} `json:"tools"`
	}
	_ = json.Unmarshal(raw, &page) // the length holds past a tool of the wrong type
	if b.tools -= len(page.Tools); b.tools < 0 {
		return fmt.Errorf("more than %d tools", maxTools)
	}
	return nil
}

// A Connector is a connection to one downstream MCP server. It implements
// connectors.Connector; its methods are safe for concurrent use.
//
// A stdio server that exits is started again on the next call, and a remote
// server is reconnected on the next call after a transport failure, with a
// backoff between consecutive failures (RestartDelay doubling up to
// MaxRestartDelay, reset after a healthy period). The call in flight when
// the server went away fails with an error wrapping ErrDisconnected. After
// a new session the tools are listed again; a changed list is logged as a
// warning and reported through OnToolsChanged.
type Connector struct {
	// fixed at creation
	cfg           Config
	logger        *slog.Logger
	httpTransport *http.Transport // url only; shared by every session
	progress      progressRelay   // routes servers' progress to the calls that asked
	backoff       backoff.Policy  // between session starts after failures
	// life ends when Close begins (so a connector is closed once it has
	// ended); it aborts a session start in progress.
	life    context.Context
	endLife context.CancelFunc
	close   func() error // Close, once
	// restarting holds a token while a new session starts.
	restarting chan struct{}
	// legacy: sessions start with the 2025-11-25 handshake, the server
	// offering tasks in that form only (task.go); once set, it stays.
	legacy atomic.Bool
	// phase (a string) is what the last session start did last (see
	// session.open), for the error of one that does not finish in time.
	phase atomic.Value

	mu                        sync.RWMutex
	sess                      *session // the live session; nil between a failure and the next call
	tools                     []connectors.Tool
	bySource                  map[string]int // SourceName -> index in tools
	collisions                []connectors.Collision
	serverName, serverVersion string
	failures                  int       // consecutive session failures (for the backoff)
	failedAt                  time.Time // when the last one happened
	// down is why the server is unreachable while the recovery goroutine
	// (see Open) brings it back, or the *connectors.SignInRequired of a
	// server that wants a sign-in (no goroutine retries it: a sign-in, or
	// tokens another process stored, bring it back); nil otherwise.
	down error

	// recovering holds the first start, the goroutine waiting for a late
	// one and the recovery goroutine; Close waits for them.
	recovering sync.WaitGroup
}

var _ connectors.Connector = (*Connector)(nil)

// DefaultStartTimeout is Config.StartTimeout's default.
const DefaultStartTimeout = 10 * time.Second

// A startResult is what a session start gave: a session and its tools, or
// the error and the session (possibly nil, closed) it left.
type startResult struct {
	s     *session
	tools []connectors.Tool
	err   error
	// stopped: Open's context ended the start (err says why), as at a
	// shutdown: it is not the server's failure.
	stopped bool
}

// startTimeoutError is why a server that has not answered within
// StartTimeout is unavailable: it unwraps to context.DeadlineExceeded.
type startTimeoutError struct {
	after time.Duration
	phase string // what the start was doing (see session.open)
}

func (e *startTimeoutError) Error() string {
	return fmt.Sprintf("timed out after %v %s", e.after, e.phase)
}

func (e *startTimeoutError) Unwrap() error { return context.DeadlineExceeded }

// Open starts or connects to the server described by cfg, performs the
// MCP handshake and lists the server's tools. A started child process
// lives until Close (or until it exits, when the next call starts a new
// one). When the first start fails, Open returns the connector anyway,
// and a goroutine it owns starts the server again with the restart
// backoff (RestartDelay doubling up to MaxRestartDelay) until it comes up
// or Close is called. Until then Tools reports why, and calls fail at
// once with an error naming the connector. When the server comes up its tools are listed and
// OnToolsChanged is called. Only a configuration error fails Open.
//
// A server that has not answered within StartTimeout (a first npx
// download, a proxy that accepts and never replies, a server stuck
// before its handshake) is not stopped: Open returns the connector down,
// with an error saying what the start was doing when the time ran out
// ("timed out after 10s initialising"), and logs a warning naming the
// deadline; a goroutine it owns waits for that start, so the server joins
// as soon as it answers (an info line says after how long, and
// OnToolsChanged is called), or, if the start fails, is started again
// with the backoff. Killing a slow server and starting it again would
// throw away what it was doing, a download say, and never let it finish.
//
// The first session starts on a goroutine of the connector's (in
// recovering), on the connector's life rather than on ctx, so that a
// start that outlives StartTimeout can go on after Open returns; ctx
// ending first stops it, and Open returns the connector down with why.
func Open(ctx context.Context, cfg Config) (*Connector, error) {
	if err := cfg.validate(); err != nil {
		if cfg.OAuth != nil {
			_ = cfg.OAuth.Close()
		}
		return nil, fmt.Errorf("mcp connector %q: %w", cfg.Name, err)
	}
	c := &Connector{cfg: cfg, logger: cmp.Or(cfg.Logger, slog.Default()).With("connector", cfg.Name), restarting: make(chan struct{}, 1),
		backoff: backoff.Policy{First: cfg.RestartDelay, Max: cfg.MaxRestartDelay}, progress: progressRelay{scrub: cfg.Scrubber}}
	c.life, c.endLife = context.WithCancel(context.Background())
	c.close = sync.OnceValue(c.shutdown)
	c.phase.Store(phaseConnecting)
	if cfg.URL != "" {
		c.httpTransport = http.DefaultTransport.(*http.Transport).Clone()
	}
	began := time.Now()
	sctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	results := make(chan startResult, 1)
	c.recovering.Go(func() {
		defer cancel(nil)
		defer context.AfterFunc(c.life, func() { cancel(ErrClosed) })()
		s, tools, err := c.startSession(sctx)
		results <- startResult{s: s, tools: tools, err: err}
	})
	limit := cmp.Or(c.cfg.StartTimeout, DefaultStartTimeout)
	select {
	case r := <-results:
		c.settle(r)
		return c, nil
	case <-ctx.Done():
		late := fmt.Errorf("%s: %w", c.phase.Load().(string), context.Cause(ctx))
		cancel(late)
		r := <-results
		if r.err != nil {
			r.err, r.stopped = late, true
		}
		c.settle(r)
		return c, nil
	case <-time.After(limit):
	}
	phase := c.phase.Load().(string)
	c.mu.Lock()
	c.down = &startTimeoutError{after: limit, phase: phase}
	c.mu.Unlock()
	c.logger.Warn("the MCP server has not answered in time; going on without it until it does",
		"start_timeout", limit, "during", phase)
	c.recovering.Go(func() {
		r := <-results
		if c.settle(r) {
			c.logger.Info("the MCP server answered; its tools are available now",
				"after", time.Since(began).Round(time.Millisecond), "tools", len(r.tools))
			if c.cfg.OnToolsChanged != nil {
				c.cfg.OnToolsChanged()
			}
		}
	})
	return c, nil
}

// settle brings the connector up with a first start's session, or down
// with its error: waiting for a sign-in, which retrying would not bring
// (the connector comes up after a sign-in, this process's or another's,
// whose tokens NeedsSignIn and the next call find in the store), or
// started again in the background with the backoff (recover). It reports
// whether the connector came up.
func (c *Connector) settle(r startResult) bool {
	_, err := c.started(r.s, r.tools, r.err)
	sr, signIn := connectors.AsSignInRequired(err)
	switch {
	case err == nil:
		return true
	case signIn:
		c.logger.Warn("the MCP server needs a sign-in; "+c.cfg.signInHint(), "reason", sr.Reason)
	case !errors.Is(err, ErrClosed):
		c.mu.Lock()
		c.down = err
		c.mu.Unlock()
		switch {
		case r.stopped:
			c.logger.Info("the MCP server's start was stopped before it finished; starting it again in the background until the connector is closed", "why", err)
		case refused(err):
			c.logger.Warn("the MCP server refused the request; trying again in the background at the longest restart delay", "err", err, "every", c.backoff.Limit())
		default:
			c.logger.Warn("the MCP server could not be reached; retrying in the background", "err", err, "first", c.backoff.Delay(1), "max", c.backoff.Limit())
		}
		c.recovering.Go(c.recover)
	}
	return false
}

// started takes in a session start's outcome, the one way for a first
// start and a reconnection: s, which listed tools, becomes the live
// session (returning the tools listed before); or the connector is down
// for a sign-in (returning the *connectors.SignInRequired); or the
// failure counts for the backoff and is returned with what a stdio
// server said (startError); a refusal of our credentials counts as many
// failures as bring the backoff to its longest delay, since trying
// sooner would only be refused again (nothing changes until the server's
// mind or the configuration does) and may count against the credentials.
// A connector closed meanwhile closes s and fails with ErrClosed.
func (c *Connector) started(s *session, tools []connectors.Tool, err error) (old []connectors.Tool, _ error) {
	sr, signIn := connectors.AsSignInRequired(err)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.life.Err() != nil:
		if s != nil {
			_ = s.close()
		}
		return nil, fmt.Errorf("mcp connector %q: %w", c.cfg.Name, ErrClosed)
	case signIn:
		c.down = sr
		return nil, sr
	case err != nil:
		c.failures++
		for refused(err) && c.backoff.Delay(c.failures) < c.backoff.Limit() {
			c.failures++
		}
		c.failedAt = time.Now()
		return nil, c.startError(s, err)
	}
	old = c.tools
	c.sess, c.down = s, nil
	c.setToolsLocked(s, tools)
	return old, nil
}

// recover starts the server again, with the backoff, until it comes up or
// the connector is closed. It runs in recovering.
func (c *Connector) recover() {
	for c.life.Err() == nil {
		_, err := c.reconnect(c.life)
		if err == nil || needsSignIn(err) {
			// Up, or waiting for a sign-in, which brings it back.
			return
		}
		c.mu.Lock()
		if c.down != nil {
			c.down = errors.Unwrap(err)
		}
		c.mu.Unlock()
	}
}

// startError adds to a failed start's error how a stdio server's process
// ended and the last lines of its stderr (which usually say why). The
// session s (possibly nil) has been closed, so its stderr has been read to
// the end.
func (c *Connector) startError(s *session, err error) error {
	if r := refusal(err); r != nil {
		if errors.Is(r, errForbidden) {
			return r // it says what to do
		}
		return fmt.Errorf("%w; %s", r, c.cfg.tokenHint())
	}
	err = saidOnce(err)
	if s == nil || s.proc == nil {
		return err
	}
	if s.proc.exitedOnItsOwn() {
		err = fmt.Errorf("%w (the server exited with %s)", err, s.proc.status())
	}
	if tail := s.proc.stderr.Tail(); len(tail) > 0 {
		return fmt.Errorf("%w; server stderr:\n  %s", err, strings.Join(tail, "\n  "))
	}
	return err
}

// refusal is the error, within err, of a request the server refused for
// want of a credential it accepts (oauth.ErrNoSignIn, or the configured
// one refused: errCredentialsRefused), without what mcp-go and net/http
// wrapped it in ("initialize: transport error: failed to send request:
// Post …"); nil for any other error.
func refusal(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && refused(ue.Err) {
		return ue.Err
	}
	return nil
}

// refused reports whether err says the server refused a request for want
// of a credential it accepts (see refusal).
func refused(err error) bool {
	return errors.Is(err, oauth.ErrNoSignIn) || errors.Is(err, errCredentialsRefused)
}

// saidOnce returns err with a part its message repeats at once said
// once: mcp-go's client and transports each prefix the same words
// ("initialize: transport error: transport error: transport closed"). It
// still wraps err.
func saidOnce(err error) error {
	parts := strings.Split(err.Error(), ": ")
	n := len(parts)
	kept := slices.Compact(parts)
	if len(kept) == n {
		return err
	}
	return &reworded{msg: strings.Join(kept, ": "), errs: []error{err}}
}

// reworded is an error said in other words, wrapping the original and
// what it stands for.
type reworded struct {
	msg  string
	errs []error
}

func (e *reworded) Error() string   { return e.msg }
func (e *reworded) Unwrap() []error { return e.errs }

// answered returns err, a request's failure, with its words scrubbed of
// the secrets the connector knows and clipped to maxErrorWords, as an
// HTTP error answer's are (errorWords): mcp-go's error for a server's
// JSON-RPC error is its message whole, as long as a message may be (64
// MiB), which would be logged and shown to the program. It still wraps
// err.
func (c *Connector) answered(err error) error {
	msg := err.Error()
	if words := short.Clip(c.cfg.Scrubber.String(msg), maxErrorWords); words != msg {
		return &reworded{msg: words, errs: []error{err}}
	}
	return err
}

// clientVersion is the version sent in the client info (named
// codemode-mcp): the module's, from the build info.
func clientVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Name returns the connector's global name in the sandbox.
func (c *Connector) Name() string { return c.cfg.Name }

// ServerInfo returns the name and version the server reported.
func (c *Connector) ServerInfo() (name, version string) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.serverName, c.serverVersion
}

// Tools returns the tools kept by Include/Exclude in the server's order,
// with sanitized, unique names. Callers must not modify the schemas. While
// the server is down (see Open) it returns why.
func (c *Connector) Tools(context.Context) ([]connectors.Tool, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	switch {
	case c.life.Err() != nil:
		return nil, fmt.Errorf("mcp connector %q: %w", c.cfg.Name, ErrClosed)
	case c.down != nil:
		return nil, c.down
	}
	return append([]connectors.Tool(nil), c.tools...), nil
}

// Capabilities: a tool the server runs as a task is called as one
// (task.go), the tools are listed again on demand (Refresh), and a
// connector given OAuth signs in (signin.go). Its
// Diagnostics are the tool names that collided after sanitizing at the
// last listing (they were renamed, never merged).
func (c *Connector) Capabilities() connectors.Capabilities {
	caps := connectors.Capabilities{Tasker: c, Refresher: c}
	if c.cfg.OAuth != nil {
		caps.SignIner = c
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, col := range c.collisions {
		caps.Diagnostics = append(caps.Diagnostics, "tool names collide after sanitizing: "+col.String())
	}
	return caps
}

// Refresh lists the server's tools again (following pagination) and
// replaces the connector's tool list. Without a live session it starts one
// first, which lists the tools itself.
func (c *Connector) Refresh(ctx context.Context) error {
	c.mu.RLock()
	s := c.sess
	c.mu.RUnlock()
	if s == nil || !s.alive() {
		_, err := c.current(ctx)
		return err
	}
	tools, err := c.listTools(ctx, s)
	if err != nil {
		return c.callError(ctx, s, "tools/list", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.life.Err() != nil:
		return fmt.Errorf("mcp connector %q: %w", c.cfg.Name, ErrClosed)
	case c.sess == s: // else a newer session listed the tools itself
		c.setToolsLocked(s, tools)
	}
	return nil
}

// setToolsLocked installs a session's tool list and server info; c.mu is
// held.
func (c *Connector) setToolsLocked(s *session, tools []connectors.Tool) {
	collisions := connectors.AssignNames(tools)
	for _, col := range collisions {
		c.logger.Warn("tool names collide after sanitizing; renamed with numeric suffixes",
			"name", col.Name, "sources", col.Sources)
	}
	bySource := make(map[string]int, len(tools))
	for i, t := range tools {
		bySource[t.SourceName] = i
	}
	c.tools, c.bySource, c.collisions = tools, bySource, collisions
	c.serverName, c.serverVersion = s.serverName, s.serverVersion
}

// listTools pages through tools/list. It decodes the raw pages itself (see
// tap) and keeps only what mcp-go's own decoding kept when that succeeded.
func (c *Connector) listTools(ctx context.Context, s *session) ([]connectors.Tool, error) {
	var tools []connectors.Tool
	seen := map[string]bool{}
	cursors := map[string]bool{}
	cursor := ""
	budget := toolBudget{tools: maxTools, bytes: maxToolListBytes}
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("list tools: more than %d pages", maxPages)
		}
		sink := &rawSink{admit: budget.take}
		req := mcpgo.ListToolsRequest{}
		req.Params.Cursor = mcpgo.Cursor(cursor)
		res, err := s.client.ListToolsByPage(withSink(ctx, sink), req)
		if refused := sink.refusal(); refused != nil {
			return nil, fmt.Errorf("list tools: %w", refused)
		}
		raw := sink.result()
		if raw == nil {
			if err == nil {
				err = errors.New("empty result")
			}
			return nil, fmt.Errorf("list tools: %w", c.answered(err))
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
				t := w.toTool()
				t.Task = w.offersTasks() && s.tasks
				tools = append(tools, t)
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
// connectors.ErrUnknownTool), bad arguments, a timeout, a malformed result,
// a server that could not be (re)started, or a session that ended during
// the call (wrapping ErrDisconnected; the next call starts a new one).
//
// Over stdio the call's connectors.CallHook hears Sent once the request is
// written on the server's stdin, so the runtime writes its log while the
// server works; over HTTP the request leaves inside mcp-go's client, which
// does not say when, so nothing is reported.
func (c *Connector) Call(ctx context.Context, tool string, args json.RawMessage) (connectors.Result, error) {
	s, name, args, err := c.prepare(ctx, tool, args)
	if err != nil {
		return connectors.Result{}, err
	}
	ctx, unwatch := c.progress.watch(ctx, c.cfg.Name)
	defer unwatch()
	if s.stdio == nil {
		raw, err := c.callClient(ctx, s, name, callRequest(ctx, tool, args))
		return c.decode(tool, raw, err)
	}
	pc, err := s.startStdio(ctx, tool, args)
	if err != nil {
		return connectors.Result{}, c.callError(ctx, s, name, err)
	}
	connectors.CallHookFrom(ctx).Sent()
	return c.awaitStdio(ctx, s, name, tool, args, pc)
}

// prepare checks a call's arguments (see objectArgs) and returns the
// live session to make it on and the tool's sandbox name, which must be
// listed or forwardable; else an error wrapping connectors.ErrUnknownTool.
func (c *Connector) prepare(ctx context.Context, tool string, args json.RawMessage) (*session, string, json.RawMessage, error) {
	args, err := objectArgs(args)
	if err != nil {
		return nil, "", nil, fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, tool, err)
	}
	s, err := c.current(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	c.mu.RLock()
	i, known := c.bySource[tool]
	name := tool
	if known {
		name = c.tools[i].Name
	}
	c.mu.RUnlock()
	if !known && !c.forwardable(tool) {
		return nil, "", nil, fmt.Errorf("mcp connector %q: %w %q", c.cfg.Name, connectors.ErrUnknownTool, tool)
	}
	return s, name, args, nil
}

// awaitStdio waits for the answer to a call sent on a stdio session's raw
// path. One that says the server needs input from the client (protocol
// 2026-07-28), which mcp-go's client fulfils, is sent again through it,
// as the protocol allows: such an answer means the server did not carry
// the call out.
func (c *Connector) awaitStdio(ctx context.Context, s *session, name, tool string, args json.RawMessage, pc *pendingCall) (connectors.Result, error) {
	callCtx, release := c.callContext(ctx, s)
	reply, err := pc.wait(callCtx)
	switch {
	case err != nil && callCtx.Err() != nil:
		err = &callEnded{cause: context.Cause(callCtx)}
	case err == nil && reply.err != nil:
		err = c.answered(reply.err.AsError())
	}
	release()
	switch {
	case err != nil:
		return connectors.Result{}, c.callError(ctx, s, name, err)
	case needsInput(reply.result):
		c.logger.Debug("the server needs input for a tool call; sending it again through the MCP client", "tool", tool)
		raw, err := c.callClient(ctx, s, name, callRequest(ctx, tool, args))
		return c.decode(tool, raw, err)
	}
	return c.decode(tool, reply.result, nil)
}

// callClient sends req, a tools/call of the tool named name in the
// sandbox, through mcp-go's client and returns its raw result; a failure
// is reported by callError.
func (c *Connector) callClient(ctx context.Context, s *session, name string, req mcpgo.CallToolRequest) (json.RawMessage, error) {
	send := func(ctx context.Context, s *session) error {
		_, err := s.client.CallTool(ctx, req)
		return err
	}
	raw, err := c.request(ctx, s, true, send)
	if errors.Is(err, transport.ErrSessionTerminated) && ctx.Err() == nil {
		// A server that forgot our session (it restarted) never saw the
		// call: start a new session and send it once more.
		c.logger.Info("the server no longer knows our session; reconnecting", "during", name)
		c.retire(s, false)
		if s, err = c.current(ctx); err != nil {
			return nil, err
		}
		raw, err = c.request(ctx, s, true, send)
	}
	if err != nil {
		return nil, c.callError(ctx, s, name, err)
	}
	return raw, nil
}

// decode turns a raw tools/call result of tool into the connector's
// Result, unless err (which it returns) says there is none.
func (c *Connector) decode(tool string, raw json.RawMessage, err error) (connectors.Result, error) {
	if err != nil {
		return connectors.Result{}, err
	}
	out, err := decodeCallResult(raw)
	if err != nil {
		return connectors.Result{}, fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, tool, err)
	}
	return out, nil
}

// callRequest is the tools/call of tool with args whose _meta carries the
// call's progress token (see progressRelay) and ctx's trace context, if
// any, so that the server's spans continue the call's.
func callRequest(ctx context.Context, tool string, args json.RawMessage) mcpgo.CallToolRequest {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	if tok := tokenOf(ctx); tok != "" {
		req.Params.Meta = &mcpgo.Meta{ProgressToken: tok}
	}
	if parent, state, ok := propagate.Outgoing(ctx); ok {
		if req.Params.Meta == nil {
			req.Params.Meta = &mcpgo.Meta{}
		}
		req.Params.Meta.AdditionalFields = map[string]any{propagate.Traceparent: parent}
		if state != "" {
			req.Params.Meta.AdditionalFields[propagate.Tracestate] = state
		}
	}
	return req
}

// errEmptyResult is the error of a request answered without a result.
var errEmptyResult = errors.New("empty result")

// request sends one request on s through mcp-go's client (send), on the
// context of a call (callContext), and returns the raw result: the
// server's answer as it came, even when mcp-go could not decode it (an
// unknown content type, say), since the connector decodes it leniently
// itself. hide keeps a tools/call result from mcp-go (rawSink.keep). A
// request whose context ended fails with a *callEnded.
func (c *Connector) request(ctx context.Context, s *session, hide bool, send func(context.Context, *session) error) (json.RawMessage, error) {
	callCtx, release := c.callContext(ctx, s)
	defer release()
	sink := &rawSink{keep: hide}
	err := send(withSink(callCtx, sink), s)
	raw := sink.result()
	switch {
	case err != nil && callCtx.Err() != nil:
		return nil, &callEnded{cause: context.Cause(callCtx)}
	case raw != nil:
		if err != nil {
			c.logger.Debug("mcp-go rejected an answer; decoding it leniently", "err", err)
		}
		return raw, nil
	case err == nil:
		return nil, errEmptyResult
	}
	return nil, c.answered(err)
}

// callEnded is the error of a call whose context ended: cause says why
// (the caller's context, CallTimeout, or the session's end), whatever
// error the transport made of it.
type callEnded struct{ cause error }

func (e *callEnded) Error() string { return e.cause.Error() }
func (e *callEnded) Unwrap() error { return e.cause }

// callError reports a failed call: a sign-in needed as such (wrapping
// connectors.SignInRequired); the caller's cancellation or the call
// timeout as such; a 403 to the configured credentials as their refusal
// (errForbidden); a session that ended, or a transport failure, as a
// disconnection (retiring the session); a JSON-RPC error from the server as
// it is.
func (c *Connector) callError(ctx context.Context, s *session, name string, err error) error {
	if sr, ok := connectors.AsSignInRequired(err); ok {
		// Nothing was sent that could take effect, and the session is
		// fine: the call can be made again after a sign-in.
		return fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, name, sr)
	}
	var ended *callEnded
	switch {
	case errors.As(err, &ended) && ended.cause != context.Cause(s.ctx): // not the session's end
		return fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, name, ended.cause)
	case errors.Is(err, errForbidden):
		// The server refused this request, not the session: the call
		// fails alone.
		return fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, name, cmp.Or(refusal(err), err))
	case ended != nil, transportFailed(s, err) && ctx.Err() == nil:
		return c.failure(s, name, err)
	}
	return fmt.Errorf("mcp connector %q: call %s: %w", c.cfg.Name, name, err)
}

// transportFailed reports whether err is a failure of s's transport (not
// an answer from the server), or s ended.
func transportFailed(s *session, err error) bool {
	var te *transport.Error
	return errors.As(err, &te) || !s.alive()
}

// callContext derives the context of one call: it is cancelled when ctx
// ends, CallTimeout passes or the session ends, with the reason as its
// cause, but it has no deadline, since mcp-go's SSE transport turns a
// deadline into a timeout error of its own that would hide the reason.
func (c *Connector) callContext(ctx context.Context, s *session) (context.Context, func()) {
	callCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	stopSession := context.AfterFunc(s.ctx, func() { cancel(context.Cause(s.ctx)) })
	var timer *time.Timer
	if d := c.cfg.CallTimeout; d > 0 {
		timer = time.AfterFunc(d, func() {
			cancel(fmt.Errorf("timed out after %v: %w", d, context.DeadlineExceeded))
		})
	}
	return callCtx, func() {
		stop()
		stopSession()
		if timer != nil {
			timer.Stop()
		}
		cancel(nil)
	}
}

// objectArgs checks that args is a JSON object; empty or null is {}.
// It only scans args (json.Valid), it does not decode them.
func objectArgs(args json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, errors.New("arguments must be a JSON object")
	}
	return args, nil
}

// Close disconnects from the server. For a stdio server it closes the
// child's stdin, sends SIGTERM after a grace period and SIGKILL after
// another, and waits for the child and its stderr; then it kills whatever
// is left of the child's process group. A session start in progress is
// aborted. It is safe to call more than once. A child's non-zero exit
// status is logged, not returned.
func (c *Connector) Close() error { return c.close() }

// shutdown is Close's first call.
func (c *Connector) shutdown() error {
	c.endLife()
	c.recovering.Wait()
	// Wait for a start in progress; it sees the end of life and stops its
	// session.
	c.restarting <- struct{}{}
	c.mu.Lock()
	s := c.sess
	c.sess = nil
	c.mu.Unlock()
	var err error
	if s != nil {
		err = s.close()
	}
	if c.httpTransport != nil {
		c.httpTransport.CloseIdleConnections()
	}
	if c.cfg.OAuth != nil {
		_ = c.cfg.OAuth.Close()
	}
	if err != nil {
		return fmt.Errorf("mcp connector %q: close: %w", c.cfg.Name, err)
	}
	return nil
}

// forwardable reports whether a tool the server did not list may be
// called by name (Config.ForwardUnknown): a name checkToolName accepts,
// as of a listed tool, that Include and Exclude allow.
func (c *Connector) forwardable(tool string) bool {
	return c.cfg.ForwardUnknown && checkToolName(tool) == nil && c.cfg.selected(tool)
}
