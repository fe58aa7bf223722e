package mcp

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// exitNoticeDelay is how long a failed call waits for a stdio server to be
// reaped, to tell an exit from another transport failure.
const exitNoticeDelay = time.Second

// ErrDisconnected is returned (wrapped) by a call whose session with the
// server ended while it was in flight: a stdio server exited, or the
// connection to a remote server failed. Whether the call took effect is
// unknown. The next call starts a new session.
var ErrDisconnected = errors.New("disconnected from the MCP server")

// current returns a live session, starting a new one when there is none or
// the last one ended (a stdio server that exited between calls, a lost SSE
// stream, a failed call).
func (c *Connector) current(ctx context.Context) (*session, error) {
	c.mu.RLock()
	s, down := c.sess, c.down
	c.mu.RUnlock()
	switch {
	case c.life.Err() != nil:
		return nil, fmt.Errorf("mcp connector %q: %w", c.cfg.Name, ErrClosed)
	case down != nil && needsSignIn(down):
		// Another process may have signed in meanwhile.
		if c.cfg.OAuth != nil {
			if sr, err := c.cfg.OAuth.NeedsSignIn(ctx); err == nil && sr == nil {
				return c.reconnect(ctx)
			}
		}
		return nil, fmt.Errorf("mcp connector %q: %w", c.cfg.Name, down)
	case down != nil:
		var late *startTimeoutError
		if errors.As(down, &late) {
			return nil, fmt.Errorf("%s: the MCP server is unavailable (%w); it is still starting and joins when it answers", c.cfg.Name, down)
		}
		return nil, fmt.Errorf("%s: the MCP server is unavailable (%w); it is being started again in the background", c.cfg.Name, down)
	case s != nil && s.alive():
		return s, nil
	}
	return c.reconnect(ctx)
}

// retire stops using s and closes it, which reaps its process. After a
// failure (failed) of the live session it counts the failure for the
// restart backoff, once, since the first retire ends its being live: a
// session that ran for a healthy period (twice the maximum delay) resets
// the count. A session retired without one (the server is fine, the
// session is not) counts nothing.
func (c *Connector) retire(s *session, failed bool) {
	c.mu.Lock()
	if c.sess == s {
		c.sess = nil
		if failed {
			end := time.Now() // when the session ended: its process's exit, or now
			if s.proc != nil && s.proc.hasExited() {
				end = s.proc.exitedAt
			}
			if end.Sub(s.started) >= 2*c.backoff.Limit() {
				c.failures = 0
			}
			c.failures++
			c.failedAt = end
		}
	}
	c.mu.Unlock()
	if err := s.close(); err != nil && failed {
		c.logger.Warn("closing a failed session", "err", err)
	}
}

// failure turns the error of a request whose session ended under it (or
// whose transport failed) into the error reported to the caller, and
// retires the session. what names the request ("get_sum", "tools/list").
func (c *Connector) failure(s *session, what string, err error) error {
	if s.proc != nil {
		// The transport usually notices a dead child (its output ends) a
		// moment before the child is reaped.
		s.proc.waitExit(exitNoticeDelay)
	}
	c.retire(s, true)
	name := c.cfg.Name
	if c.life.Err() != nil {
		return fmt.Errorf("mcp connector %q: %s: %w", name, what, ErrClosed)
	}
	var msg string
	switch {
	case s.proc != nil && s.proc.exitedOnItsOwn():
		msg = fmt.Sprintf("%s: the MCP server exited (%s) during %s; it will be restarted on the next call", name, s.proc.status(), what)
		attrs := []any{"status", s.proc.status(), "during", what}
		if tail := s.proc.stderr.Tail(); len(tail) > 0 {
			attrs = append(attrs, "stderr", strings.Join(tail, "\n"))
		}
		c.logger.Warn("the MCP server exited", attrs...)
	case s.proc != nil:
		msg = fmt.Sprintf("%s: the connection to the MCP server failed during %s (%v); the server was stopped and will be restarted on the next call", name, what, err)
		c.logger.Warn("the connection to the MCP server failed; stopped it", "during", what, "err", err)
	default:
		msg = fmt.Sprintf("%s: the connection to the MCP server failed during %s (%v); it will reconnect on the next call", name, what, err)
		c.logger.Warn("the connection to the MCP server failed", "during", what, "err", err)
	}
	return &reworded{msg: msg, errs: []error{ErrDisconnected, err}}
}

// reconnect starts a new session, after the backoff delay of the failures
// so far. One reconnect runs at a time; callers queued behind it use its
// session. It is the one way a session is replaced: a live session that
// ended before a call noticed (the child exited, the SSE stream was lost)
// is retired first and counts as a failure, whoever asks for the new one
// (a call, a sign-in). A failed start counts as a failure too.
func (c *Connector) reconnect(ctx context.Context) (*session, error) {
	select {
	case c.restarting <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: waiting for the MCP server to restart: %w", c.cfg.Name, ctx.Err())
	case <-c.life.Done():
		return nil, fmt.Errorf("mcp connector %q: %w", c.cfg.Name, ErrClosed)
	}
	defer func() { <-c.restarting }()

	c.mu.RLock()
	s := c.sess
	c.mu.RUnlock()
	switch {
	case c.life.Err() != nil:
		return nil, fmt.Errorf("mcp connector %q: %w", c.cfg.Name, ErrClosed)
	case s != nil && s.alive():
		return s, nil // another caller reconnected meanwhile
	case s != nil:
		c.logger.Warn("the MCP server's session ended between calls; starting a new one", "reason", context.Cause(s.ctx), "status", s.proc.status())
		c.retire(s, true)
	}
	c.mu.RLock()
	failures, failedAt := c.failures, c.failedAt
	c.mu.RUnlock()
	verb := "reconnected"
	if c.cfg.Command != "" {
		verb = "started again"
	}
	if wait := time.Until(failedAt.Add(c.backoff.Delay(failures))); wait > 0 {
		c.logger.Info("waiting before the MCP server is "+verb, "delay", wait.Round(time.Millisecond), "failures", failures)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: waiting %v for the MCP server to restart: %w", c.cfg.Name, wait.Round(time.Millisecond), ctx.Err())
		case <-c.life.Done():
			return nil, fmt.Errorf("mcp connector %q: %w", c.cfg.Name, ErrClosed)
		}
	}

	// Close aborts a start in progress.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.life, cancel)()
	start := time.Now()
	s, tools, err := c.startSession(sctx)
	old, err := c.started(s, tools, err)
	if sr, ok := connectors.AsSignInRequired(err); ok {
		// Not a failure of the server: no backoff, no retry until a
		// sign-in.
		c.logger.Info("the MCP server needs a sign-in", "reason", sr.Reason)
		return nil, fmt.Errorf("mcp connector %q: %w", c.cfg.Name, sr)
	}
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return nil, err
		}
		if ctx.Err() != nil {
			// The caller gave up (a shutdown, say), not the server.
			c.logger.Info("the MCP server's start was stopped before it finished", "why", context.Cause(ctx))
		} else {
			c.logger.Warn("the MCP server could not be "+verb, "err", err)
		}
		return nil, fmt.Errorf("%s: the MCP server could not be %s: %w; it will be tried again on the next call", c.cfg.Name, verb, err)
	}
	changed := !reflect.DeepEqual(old, tools)

	if s.proc != nil {
		c.logger.Info("restarted the MCP server", "after", time.Since(start).Round(time.Millisecond), "failures", failures, "pid", s.proc.pid())
	} else {
		c.logger.Info("reconnected to the MCP server", "after", time.Since(start).Round(time.Millisecond), "failures", failures)
	}
	if c.cfg.OnRestart != nil {
		c.cfg.OnRestart()
	}
	if changed {
		added, removed := toolDiff(old, tools)
		c.logger.Warn("the MCP server's tools changed since the last session; calls to removed or changed tools may fail",
			"added_or_changed", added, "removed", removed)
		if c.cfg.OnToolsChanged != nil {
			c.cfg.OnToolsChanged()
		}
	}
	return s, nil
}

// toolDiff names the tools only in a (removed) or only in b (added), and
// those in both whose definition changed (in added).
func toolDiff(a, b []connectors.Tool) (added, removed []string) {
	in := make(map[string]connectors.Tool, len(a))
	for _, t := range a {
		in[t.SourceName] = t
	}
	seen := map[string]bool{}
	for _, t := range b {
		seen[t.SourceName] = true
		if old, ok := in[t.SourceName]; !ok || !reflect.DeepEqual(old, t) {
			added = append(added, t.SourceName)
		}
	}
	for _, t := range a {
		if !seen[t.SourceName] {
			removed = append(removed, t.SourceName)
		}
	}
	return added, removed
}
