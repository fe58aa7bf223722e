package openapi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/backoff"
)

// remoteReadTimeout bounds one attempt to read a document in the background.
const remoteReadTimeout = 30 * time.Second

// A Remote is the connector of a document at a URL that may be unreachable
// when the server starts (offline, no cached copy). Open returns it down
// when the first read fails; a goroutine it owns reads the document again
// with the downstream backoff (internal/backoff) until it loads or Close is
// called. While it is down Tools reports why (the runtime shows the
// connector unavailable) and calls fail naming it; once loaded it is the
// Connector New would have made, and OnReady is called so that the
// runtime lists its tools again.
type Remote struct {
	// fixed at Open
	cfg     Config
	policy  backoff.Policy
	onReady func()
	life    context.Context
	endLife context.CancelFunc
	loading sync.WaitGroup // the background reads; Close waits for them

	mu   sync.RWMutex
	c    *Connector // nil while down
	down error      // why, while down
}

var _ connectors.Connector = (*Remote)(nil)

// Open is New for a document that may be unreachable at start: only a
// configuration error (checkConfig) fails it; a document that cannot be
// read leaves the Remote down, read again in the background with policy.
// onReady (may be nil) is called, on the Remote's goroutine, once a
// document that was down has loaded.
func Open(ctx context.Context, cfg Config, policy backoff.Policy, onReady func()) (*Remote, error) {
	if _, _, err := checkConfig(cfg); err != nil {
		return nil, err
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	r := &Remote{cfg: cfg, policy: policy, onReady: onReady}
	r.life, r.endLife = context.WithCancel(context.Background())
	c, err := New(ctx, cfg)
	if err == nil {
		r.c = c
		return r, nil
	}
	r.down = err
	cfg.Logger.Warn("openapi: the document could not be read; retrying in the background", "connector", cfg.Name, "err", err,
		"first", policy.Delay(1), "max", policy.Limit())
	r.loading.Go(r.retry)
	return r, nil
}

// retry reads the document with the backoff until it loads or Close.
func (r *Remote) retry() {
	for failures := 1; ; failures++ {
		select {
		case <-r.life.Done():
			return
		case <-time.After(r.policy.Delay(failures)):
		}
		ctx, cancel := context.WithTimeout(r.life, remoteReadTimeout)
		c, err := New(ctx, r.cfg)
		cancel()
		r.mu.Lock()
		if err == nil && r.life.Err() == nil {
			r.c, r.down = c, nil
		} else if err != nil {
			r.down = err
		}
		r.mu.Unlock()
		switch {
		case err == nil && r.c == c:
			r.cfg.Logger.Info("openapi: the document loaded", "connector", r.cfg.Name, "failures", failures)
			if r.onReady != nil {
				r.onReady()
			}
			return
		case err == nil: // closed meanwhile
			_ = c.Close()
			return
		}
	}
}

// loaded returns the connector, or nil and why it is down.
func (r *Remote) loaded() (*Connector, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.c, r.down
}

// Name is the connector's name.
func (r *Remote) Name() string { return r.cfg.Name }

// Capabilities are the loaded document's (see Connector.Capabilities),
// its Router the loaded connector itself: a Remote that loaded stays
// loaded. While it is down it has none, and no methods to route.
func (r *Remote) Capabilities() connectors.Capabilities {
	if c, _ := r.loaded(); c != nil {
		return c.Capabilities()
	}
	return connectors.Capabilities{}
}

// Tools lists the loaded document's methods, or reports why it is down.
func (r *Remote) Tools(ctx context.Context) ([]connectors.Tool, error) {
	c, err := r.loaded()
	if c == nil {
		return nil, err
	}
	return c.Tools(ctx)
}

// Call makes the request of a method; while the document is down it fails
// naming the connector and why.
func (r *Remote) Call(ctx context.Context, tool string, args json.RawMessage) (connectors.Result, error) {
	c, err := r.loaded()
	if c == nil {
		return connectors.Result{}, fmt.Errorf("connector %s is unavailable: %w; its document is read again in the background", r.cfg.Name, err)
	}
	return c.Call(ctx, tool, args)
}

// Close stops the background reads, waits for them, and closes the loaded
// connector. Calls must have returned. It is safe to call more than once.
func (r *Remote) Close() error {
	r.endLife()
	r.loading.Wait()
	if c, _ := r.loaded(); c != nil {
		return c.Close()
	}
	return nil
}
