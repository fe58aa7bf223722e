package pass

import (
	"context"
	"log/slog"
	"sync"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
)

// InProcess is the sandbox.Executor that runs each pass in a fresh goja
// runtime in this process. It bounds time, stack depth, calls, logs and
// code size, but not memory: a single huge allocation cannot be
// interrupted, which is what the worker-process executor (sandbox/worker)
// is for.
type InProcess struct {
	// fixed at creation
	log   *slog.Logger
	cache *source.Cache
	gate  *Gate
}

// InProcessOptions configures NewInProcess; the zero value is the default.
type InProcessOptions struct {
	// Logger receives internal failures (default: discard).
	Logger *slog.Logger
}

// How many normalised programs an InProcess keeps, and what they may
// weigh (see source.NewCache).
const (
	inProcessCacheSize  = 128
	inProcessCacheBytes = 64 << 20
)

// NewInProcess returns an in-process executor.
func NewInProcess(opts InProcessOptions) *InProcess {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &InProcess{log: opts.Logger, cache: source.NewCache(inProcessCacheSize, inProcessCacheBytes), gate: NewGate()}
}

var _ sandbox.Executor = (*InProcess)(nil)

// Run executes one pass of p (see Executor). It is safe for concurrent use.
// A syntax error, a thrown value, a limit or a timeout is a Failed outcome;
// the error is for internal failures and for a closed executor.
//
// Run returns once the program has settled (or was stopped or failed) and
// every host call it started has returned. Host calls still in flight when
// the program ends are canceled and reported in the logs (see pass); after
// a host stop they complete. Host methods must therefore return once their
// context is done.
func (e *InProcess) Run(ctx context.Context, p sandbox.Program, host sandbox.Host) (sandbox.Outcome, error) {
	return e.gate.Run(ctx, func(ctx context.Context) (sandbox.Outcome, error) {
		return Execute(ctx, p, host, e.cache, e.log)
	})
}

// Close cancels the passes in progress, waits for them and makes further
// Runs fail with ErrClosed.
func (e *InProcess) Close() error {
	e.gate.Close()
	return nil
}

// Gate is the part of an Executor's life both executors share: it admits
// Runs until Close, which cancels those in progress and waits for them.
type Gate struct {
	// fixed at creation
	closing context.Context // canceled by Close
	cancel  context.CancelFunc

	mu   sync.Mutex     // orders runs.Add before Close's Wait
	runs sync.WaitGroup // Runs in progress
}

// NewGate returns an open gate.
func NewGate() *Gate {
	g := &Gate{}
	g.closing, g.cancel = context.WithCancel(context.Background())
	return g
}

// Run runs f with ctx, which Close cancels as well; after Close it fails
// with sandbox.ErrClosed.
func (g *Gate) Run(ctx context.Context, f func(context.Context) (sandbox.Outcome, error)) (sandbox.Outcome, error) {
	g.mu.Lock()
	if g.Closed() {
		g.mu.Unlock()
		return sandbox.Outcome{}, sandbox.ErrClosed
	}
	g.runs.Add(1)
	g.mu.Unlock()
	defer g.runs.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(g.closing, cancel)()
	return f(ctx)
}

// Done is closed by Close.
func (g *Gate) Done() <-chan struct{} { return g.closing.Done() }

// AfterClose calls f in its own goroutine once Close is called (see
// context.AfterFunc); stop keeps it from being called.
func (g *Gate) AfterClose(f func()) (stop func() bool) { return context.AfterFunc(g.closing, f) }

// Closed reports whether Close has been called.
func (g *Gate) Closed() bool { return g.closing.Err() != nil }

// Close makes further Runs fail, cancels those in progress and waits for
// them.
func (g *Gate) Close() {
	g.mu.Lock()
	g.cancel()
	g.mu.Unlock()
	g.runs.Wait()
}
