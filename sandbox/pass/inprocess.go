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
	log     *slog.Logger
	cache   *source.Cache
	closeCx context.Context // canceled by Close: cancels the Runs in progress
	closeFn context.CancelFunc

	mu     sync.Mutex
	closed bool
	runs   sync.WaitGroup // Runs in progress
}

// InProcessOptions configures NewInProcess; the zero value is the default.
type InProcessOptions struct {
	// Logger receives internal failures (default: discard).
	Logger *slog.Logger
	// CacheSize is how many normalised programs are kept (default 128;
	// negative: none).
	CacheSize int
}

// NewInProcess returns an in-process executor.
func NewInProcess(opts InProcessOptions) *InProcess {
	switch {
	case opts.CacheSize == 0:
		opts.CacheSize = 128
	case opts.CacheSize < 0:
		opts.CacheSize = 0
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	e := &InProcess{log: opts.Logger, cache: source.NewCache(opts.CacheSize)}
	e.closeCx, e.closeFn = context.WithCancel(context.Background())
	return e
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
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return sandbox.Outcome{}, sandbox.ErrClosed
	}
	e.runs.Add(1)
	e.mu.Unlock()
	defer e.runs.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.closeCx, cancel)()
	return Execute(ctx, p, host, e.cache, e.log)
}

// Close cancels the passes in progress, waits for them and makes further
// Runs fail with ErrClosed.
func (e *InProcess) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.closeFn()
	e.runs.Wait()
	return nil
}
