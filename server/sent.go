package server

import (
	"bytes"
	"context"
	"sync"
	"time"
)

// mcp-go v1.2.1's streamable-HTTP transport can drop the last notification
// a tool handler sends before its result: the goroutine that forwards
// notifications to the response may have taken it off the session's
// channel but not yet written it when the result is written, and then
// discards it. A handler that sent notifications therefore returns only
// once they have been written (awaitSent): the guard counts the
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

// count returns how many notifications have been written so far.
func (c *sentCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// wait returns once n notifications have been written, or when ctx ends,
// or after timeout (a transport that buffers notifications, or one that
// lost the connection, never writes them).
func (c *sentCounter) wait(ctx context.Context, n int, timeout time.Duration) {
	t := time.NewTimer(timeout)
	defer t.Stop()
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
		case <-t.C:
			return
		}
	}
}

// isNotificationEvent reports whether a write is one SSE event carrying a
// notification (mcp-go writes each event with one Write: "event: message\n"
// then "data: " and the JSON-RPC message, whose method comes second).
func isNotificationEvent(p []byte) bool {
	const prefix = "event: message\ndata: "
	if !bytes.HasPrefix(p, []byte(prefix)) {
		return false
	}
	head := p[len(prefix):min(len(p), len(prefix)+64)]
	return bytes.Contains(head, []byte(`"method":"notifications/`))
}

// sentSoFar returns the notification count of the request's session (or
// response) now, for awaitSent; 0 for other transports.
func sentSoFar(ctx context.Context) int {
	if c, ok := ctx.Value(sentKey{}).(*sentCounter); ok {
		return c.count()
	}
	return 0
}

// awaitSent waits until n more notifications than base have been written
// for the request of ctx, when it is a streamable-HTTP request (others do
// not lose them).
func awaitSent(ctx context.Context, base, n int) {
	if n == 0 {
		return
	}
	if c, ok := ctx.Value(sentKey{}).(*sentCounter); ok {
		c.wait(ctx, base+n, 2*time.Second)
	}
}
