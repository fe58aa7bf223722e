package oauth

import (
	"context"
	"sync"
)

// A Flight shares one run of a request (a token request, a refresh) among
// the callers that need it at once: a caller that comes while a run is
// under way waits for that run's outcome instead of starting another.
//
// The run is in a goroutine of the Flight, not of the caller that started
// it, so a caller that gives up (its context ends) does not fail the
// others; Close cancels a run under way and waits for it. Its methods are
// safe for concurrent use.
type Flight[T any] struct {
	// Fixed at creation.
	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	closed error
	wg     sync.WaitGroup

	mu  sync.Mutex
	cur *flightRun[T] // the run under way; guarded by mu
}

// A flightRun is one run under way; done closes when v and err are set.
type flightRun[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// NewFlight returns a Flight whose Do returns closed once it is closed.
func NewFlight[T any](closed error) *Flight[T] {
	ctx, cancel := context.WithCancel(context.Background())
	return &Flight[T]{ctx: ctx, cancel: cancel, closed: closed}
}

// Do returns the outcome of the run under way, or of a new run of run,
// which gets a context that Close ends. It returns early with ctx's error
// when ctx ends; the run goes on for the others.
func (f *Flight[T]) Do(ctx context.Context, run func(context.Context) (T, error)) (T, error) {
	f.mu.Lock()
	r := f.cur
	if r == nil {
		if f.ctx.Err() != nil {
			f.mu.Unlock()
			var zero T
			return zero, f.closed
		}
		r = &flightRun[T]{done: make(chan struct{})}
		f.cur = r
		f.wg.Go(func() {
			v, err := run(f.ctx)
			f.mu.Lock()
			f.cur = nil
			f.mu.Unlock()
			r.v, r.err = v, err
			close(r.done)
		})
	}
	f.mu.Unlock()
	select {
	case <-r.done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Close cancels a run under way and waits for it.
func (f *Flight[T]) Close() {
	f.cancel()
	f.wg.Wait()
}
