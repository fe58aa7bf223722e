package app

import (
	"context"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/config"
)

// backoff is the retry schedule of a downstream that failed at start-up:
// the first retry comes first after the failure, each later one twice as
// long after the previous attempt, at most max after it.
type backoff struct {
	first, max time.Duration
}

// defaultBackoff is the schedule Open uses.
var defaultBackoff = backoff{first: time.Second, max: time.Minute}

// step is where a connector is in its schedule: the next attempt comes
// next after the previous one, or early after it once a program asked for
// the connector (early is the gap the schedule used last, 0 before the
// first retry). So a stream of calls brings attempts forward by one step
// of the backoff and never closer together than it: calls do not hammer a
// downstream that stays down.
type step struct {
	early, next time.Duration
}

// begin is the step after the start-up failure.
func (b backoff) begin() step { return step{early: 0, next: b.first} }

// after is the step after an attempt at s failed.
func (b backoff) after(s step) step { return step{early: s.next, next: min(2*s.next, b.max)} }

// dialTimeout bounds one attempt to reach a downstream.
const dialTimeout = 30 * time.Second

// retrier dials again, with backoff, the MCP connectors that failed at
// start-up, one goroutine each (which it owns), and brings those it
// reaches into the runtime in place of their stand-in. A program that
// names such a connector wakes its goroutine for an earlier attempt (see
// wakingExecutor).
type retrier struct {
	// fixed at creation
	app     *App
	backoff backoff

	mu      sync.Mutex
	waiting map[string]*waiter // connectors not reached yet; guarded by mu

	cancel context.CancelFunc // nil: not started
	wg     sync.WaitGroup
}

// waiter is one connector waiting to be reached.
type waiter struct {
	cc       config.Connector
	failedAt time.Time
	wake     chan struct{} // capacity 1: a program asked for the connector
}

func newRetrier(a *App, b backoff) *retrier {
	if b == (backoff{}) {
		b = defaultBackoff
	}
	return &retrier{app: a, backoff: b, waiting: map[string]*waiter{}}
}

// add records that cc failed to start at failedAt; OpenAPI connectors
// whose document is a URL are retried once start is called, others never
// (an MCP connector comes back by itself, see mcp.Open; a native connector
// or a document file that fails is a configuration error).
func (r *retrier) add(cc config.Connector, failedAt time.Time) {
	switch {
	case cc.Kind == config.KindOpenAPI && isURL(cc.OpenAPI):
	default:
		return
	}
	r.mu.Lock()
	r.waiting[cc.Name] = &waiter{cc: cc, failedAt: failedAt, wake: make(chan struct{}, 1)}
	r.mu.Unlock()
	r.app.log.Info("retrying the connector in the background", "connector", cc.Name, "first", r.backoff.first, "max", r.backoff.max)
}

// start begins retrying; a.Runtime must be set.
func (r *retrier) start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.waiting {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.retry(ctx, w)
		}()
	}
}

// stop ends the goroutines (an attempt under way is cancelled) and waits
// for them.
func (r *retrier) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.wg.Wait()
}

// wake asks for an early attempt to reach connector name, if it is
// waiting. It never blocks.
func (r *retrier) wake(name string) {
	r.mu.Lock()
	w := r.waiting[name]
	r.mu.Unlock()
	if w == nil {
		return
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// isWaiting reports whether connector name has not been reached yet.
func (r *retrier) isWaiting(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiting[name] != nil
}

// retry attempts to reach w's connector until it joins or ctx ends.
func (r *retrier) retry(ctx context.Context, w *waiter) {
	last, s := w.failedAt, r.backoff.begin()
	for {
		if !w.await(ctx, last, s) {
			return
		}
		last = time.Now()
		if r.attempt(ctx, w) {
			return
		}
		s = r.backoff.after(s)
	}
}

// await waits until s.next after last, or s.early after last once a
// program asked for the connector; it reports false when ctx ended first.
func (w *waiter) await(ctx context.Context, last time.Time, s step) bool {
	t := time.NewTimer(time.Until(last.Add(s.next)))
	defer t.Stop()
	wake := w.wake
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			// (When ctx ended too, select may pick either.)
			return ctx.Err() == nil
		case <-wake:
			wake = nil
			t.Reset(time.Until(last.Add(s.early)))
		}
	}
}

// attempt dials w's connector once and, when that works, puts it in the
// runtime's catalog in place of its stand-in and tells the server.
func (r *retrier) attempt(ctx context.Context, w *waiter) bool {
	a, name := r.app, w.cc.Name
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	c, warns, err := a.startConnector(dctx, w.cc)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			a.log.Debug("connector still unavailable", "connector", name, "err", err)
		}
		return false
	}
	if err := a.Runtime.ReplaceConnector(ctx, name, c); err != nil {
		a.log.Warn("connector was reached but could not join; retrying", "connector", name, "err", err)
		if err := c.Close(); err != nil {
			a.log.Warn("close connector", "connector", name, "err", err)
		}
		return false
	}
	a.mu.Lock()
	a.joined = append(a.joined, c)
	a.mu.Unlock()
	r.mu.Lock()
	delete(r.waiting, name)
	r.mu.Unlock()
	for _, msg := range warns {
		a.log.Warn(msg)
	}
	a.log.Info("connector that failed at start-up is now available", "connector", name)
	a.refresh.joined()
	return true
}
