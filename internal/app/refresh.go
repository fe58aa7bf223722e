package app

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// refreshTimeout bounds one connector's refresh (listing its tools again).
const refreshTimeout = 30 * time.Second

// refresher lists a connector's tools again when it announces a change
// (notifications/tools/list_changed, or different tools after a restart),
// one connector at a time on a goroutine it owns, and tells the server so
// that the codemode tool's description follows. Announcements that arrive
// while a refresh runs, or before the runtime exists, are merged and
// handled after it.
type refresher struct {
	app  *App
	wake chan struct{} // capacity 1: a refresh is wanted

	mu    sync.Mutex
	dirty map[string]bool // connectors that announced a change; guarded by mu

	onChange atomic.Pointer[func()] // OnConnectorsChanged's

	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has ended (nil: not started)
}

func newRefresher(a *App) *refresher {
	return &refresher{app: a, wake: make(chan struct{}, 1), dirty: map[string]bool{}}
}

// changed records that connector name announced a change. It never blocks
// (it runs on a connector's reading goroutine).
func (f *refresher) changed(name string) {
	f.mu.Lock()
	f.dirty[name] = true
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default: // a wake already pending covers it
	}
}

// start begins refreshing; a.Runtime must be set.
func (f *refresher) start() {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel, f.done = cancel, make(chan struct{})
	go f.loop(ctx)
}

// stop ends the goroutine and waits for it.
func (f *refresher) stop() {
	if f.done == nil {
		return
	}
	f.cancel()
	<-f.done
}

func (f *refresher) loop(ctx context.Context) {
	defer close(f.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		}
		f.mu.Lock()
		names := f.dirty
		f.dirty = map[string]bool{}
		changedAny := false
		f.mu.Unlock()
		for name := range names {
			rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
			changed, err := f.app.Runtime.RefreshConnector(rctx, name)
			cancel()
			switch {
			case err != nil && ctx.Err() == nil:
				f.app.Log.Warn("could not list the connector's changed tools; programs still see the previous ones", "connector", name, "err", err)
			case changed:
				changedAny = true
			}
		}
		if on := f.onChange.Load(); changedAny && on != nil {
			(*on)()
		}
	}
}

// OnConnectorsChanged sets f to be called after a connector's tools were
// listed again and changed, or a connector that failed at start-up joined
// (the server rebuilds the codemode tool's description then). It is called
// on the App's own goroutine, never concurrently with itself.
func (a *App) OnConnectorsChanged(f func()) {
	a.refresh.onChange.Store(&f)
}
