// Package worker runs passes in a pool of worker processes (Pool): each
// worker is this binary's hidden sub-command (Main), confined and under a
// memory limit, talking to the parent over two pipes with the frames of
// wire.go. The parent keeps the connectors and the durable log; a worker
// only runs programs.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
)

// Options configure NewPool. Zero values mean the defaults.
type Options struct {
	// Command starts a worker: the path of a binary and its arguments, e.g.
	// [os.Executable(), "__sandbox-worker"]; the binary must call Main.
	// Required.
	Command []string
	// Env is added to a worker's environment, which is otherwise only
	// GOMAXPROCS=1 and EnvMemoryLimit: a worker does not inherit the
	// parent's environment (and its tokens), nor its TZ (programs see
	// local time as UTC, see package pass).
	Env []string
	// Size is the number of warm workers kept ready (default 2).
	Size int
	// MaxWorkers bounds the workers alive at once, busy or idle (default
	// the larger of Size and 4); a Run beyond it waits for a free worker.
	// Peak memory is about MaxWorkers × MemoryLimit.
	MaxWorkers int
	// MemoryLimit is each worker's memory budget in bytes (default 256
	// MiB): a program whose heap passes 80% of it is interrupted with
	// "memory limit exceeded (256 MiB)", and the Limiter stops one that
	// allocates past it in one go, with the same outcome.
	MemoryLimit int64
	// Limiter is the hard memory limit besides the heap watchdog (default
	// LimiterSystem, this OS's own).
	Limiter Limiter
	// MaxRunsPerWorker recycles a worker after that many runs (default 1,000).
	MaxRunsPerWorker int
	// Logger receives worker failures (default: discard).
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultPoolSize         = 2
	DefaultMaxWorkers       = 4
	DefaultMemoryLimit      = 256 << 20
	DefaultMaxRunsPerWorker = 1000
)

const (
	// KillGrace is how long past its timeout, or past a cancellation, a
	// worker may take to report before it is killed.
	KillGrace = time.Second
	// startTimeout bounds a worker's start-up (until its hello).
	startTimeout = 10 * time.Second
	// stopTimeout is how long a worker told to stop may take to exit before
	// it is killed.
	stopTimeout = time.Second
	// startBackoff is the pause of the background starter after a failure.
	startBackoff = time.Second
)

// Pool is the sandbox.Executor that runs each program in a worker process
// (see Main and Serve) taken from a warm pool. A worker runs
// one program at a time with GOMAXPROCS=1, a heap watchdog and a hard
// memory limit (see Limiter); the parent serves its host calls with the real Host
// over a pipe, holds a wall-clock deadline (Limits.Timeout plus a grace of
// one second) and kills a worker that does not stop. A worker is replaced
// after it crashed, hit the memory limit, was killed, or ran
// MaxRunsPerWorker programs. Run never waits for a process to start while
// a warm worker is idle; the pool is refilled in the background.
//
// A failure of the worker is the program's failure, reported in the
// Outcome: "memory limit exceeded (256 MiB)", "timed out after 60s",
// "sandbox worker crashed: …". The pool is the same code on Linux, macOS
// and Windows (the proc_*.go files hold what differs); elsewhere
// NewPool returns an error wrapping errors.ErrUnsupported.
type Pool struct {
	// fixed at creation
	opts    Options // with defaults
	env     []string
	log     *slog.Logger
	gate    *pass.Gate    // the Runs; closed first by Close
	wake    chan struct{} // wakes the starter (buffered 1)
	nextRun atomic.Uint32

	starter sync.WaitGroup // the background starter
	procs   sync.WaitGroup // process waiters and background stops

	mu       sync.Mutex
	idle     []*procWorker // warm, most recently used last
	total    int           // workers alive or starting
	starting int           // started by the background starter, not yet idle
	waiters  int           // Runs waiting for a worker
	changed  chan struct{} // closed and replaced when a worker is freed or total drops
	replaced int64         // workers stopped after a run they could not survive, or found dead
}

var _ sandbox.Executor = (*Pool)(nil)

// NewPool starts a pool: the first worker before it returns (so that
// a bad Command is reported here), the other warm ones in the background.
func NewPool(opts Options) (*Pool, error) {
	if !processSupported {
		return nil, fmt.Errorf("sandbox: process isolation: %w", errors.ErrUnsupported)
	}
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return nil, errors.New("sandbox: Options.Command is required")
	}
	if opts.Size <= 0 {
		opts.Size = DefaultPoolSize
	}
	if opts.MaxWorkers <= 0 {
		opts.MaxWorkers = max(opts.Size, DefaultMaxWorkers)
	}
	opts.MaxWorkers = max(opts.MaxWorkers, opts.Size)
	if opts.MemoryLimit <= 0 {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	if opts.MaxRunsPerWorker <= 0 {
		opts.MaxRunsPerWorker = DefaultMaxRunsPerWorker
	}
	limiter, err := limiterFor(opts.Limiter)
	if err != nil {
		return nil, err
	}
	opts.Limiter = limiter
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	env := []string{"GOMAXPROCS=1", EnvMemoryLimit + "=" + strconv.FormatInt(opts.MemoryLimit, 10)}
	if opts.Limiter != LimiterSystem {
		env = append(env, EnvLimiter+"="+string(opts.Limiter))
	}
	p := &Pool{
		opts:    opts,
		env:     append(env, opts.Env...),
		log:     log,
		gate:    pass.NewGate(),
		wake:    make(chan struct{}, 1),
		changed: make(chan struct{}),
	}
	w, err := p.start()
	if err != nil {
		p.gate.Close()
		p.procs.Wait()
		return nil, err
	}
	p.idle, p.total = []*procWorker{w}, 1
	p.starter.Go(p.refill)
	p.wakeStarter()
	return p, nil
}

// Run executes one pass of p in a worker (see Executor). It is safe for
// concurrent use. The error is for internal failures (of the host
// plumbing, or a worker that cannot start) and for a closed pool.
func (p *Pool) Run(ctx context.Context, prog sandbox.Program, host sandbox.Host) (sandbox.Outcome, error) {
	return p.gate.Run(ctx, func(ctx context.Context) (sandbox.Outcome, error) { return p.run(ctx, prog, host) })
}

func (p *Pool) run(ctx context.Context, prog sandbox.Program, host sandbox.Host) (sandbox.Outcome, error) {
	if o, tooLarge := pass.CodeTooLarge(prog); tooLarge {
		return o, nil
	}
	w, err := p.acquire(ctx)
	if err != nil {
		if p.gate.Closed() {
			return sandbox.Outcome{}, sandbox.ErrClosed
		}
		if ctx.Err() != nil {
			return sandbox.Outcome{Status: sandbox.Failed, Error: pass.EndMessage(ctx, 0), Clock: prog.Clock}, nil
		}
		return sandbox.Outcome{}, err
	}
	r := &procRun{pool: p, w: w, id: p.nextRun.Add(1), prog: prog, host: host}
	o, keep, err := r.run(ctx)
	p.release(w, keep)
	return o, err
}

// acquire takes the idle worker used last, else starts one (within
// MaxWorkers), else waits for one.
func (p *Pool) acquire(ctx context.Context) (*procWorker, error) {
	for {
		if p.gate.Closed() {
			return nil, sandbox.ErrClosed
		}
		p.mu.Lock()
		for len(p.idle) > 0 {
			w := p.idle[len(p.idle)-1]
			p.idle = p.idle[:len(p.idle)-1]
			if w.dead() {
				p.total--
				p.replaced++
				p.procs.Go(w.stop)
				continue
			}
			p.wakeStarter()
			p.mu.Unlock()
			return w, nil
		}
		// Start one unless enough are already on their way to the Runs
		// waiting before this one.
		if p.total < p.opts.MaxWorkers && p.starting <= p.waiters {
			p.total++
			p.mu.Unlock()
			return p.startFor(ctx)
		}
		p.waiters++
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
		p.mu.Lock()
		p.waiters--
		p.mu.Unlock()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// startFor starts a worker for a Run (counted in total by the caller).
// A Run whose ctx ends first returns at once; the start goes on (a
// worker's start-up is bounded by startTimeout and Close) in a goroutine owned by
// p.procs, and the worker, if it comes up, goes to the pool as the
// background starter's do.
func (p *Pool) startFor(ctx context.Context) (*procWorker, error) {
	type started struct {
		w   *procWorker
		err error
	}
	ch, gone := make(chan started), make(chan struct{})
	p.procs.Go(func() {
		w, err := p.start()
		select {
		case ch <- started{w, err}:
		case <-gone:
			p.mu.Lock()
			p.addLocked(w, err)
			p.mu.Unlock()
		}
	})
	select {
	case s := <-ch:
		if s.err != nil {
			p.mu.Lock()
			p.addLocked(nil, s.err)
			p.mu.Unlock()
		}
		return s.w, s.err
	case <-ctx.Done():
		close(gone)
		return nil, ctx.Err()
	}
}

// addLocked takes a worker started for the pool and counted in total
// (err: it did not start): it is idle, unless the pool is closed, and the
// Runs waiting for a worker are woken.
func (p *Pool) addLocked(w *procWorker, err error) {
	switch {
	case err != nil:
		p.total--
	case p.gate.Closed(): // Close may have taken the idle workers already
		p.total--
		p.procs.Go(w.stop)
	default:
		p.idle = append(p.idle, w)
	}
	p.notifyLocked()
}

// release gives a worker back after a run; one that must not run again is
// stopped in the background.
func (p *Pool) release(w *procWorker, keep bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.runs++
	if keep && !p.gate.Closed() && w.runs < p.opts.MaxRunsPerWorker && !w.dead() {
		p.idle = append(p.idle, w)
		p.notifyLocked()
		return
	}
	if !keep || w.dead() {
		p.replaced++
	}
	p.total--
	p.notifyLocked()
	p.wakeStarter()
	p.procs.Go(w.stop)
}

// notifyLocked wakes the Runs waiting for a worker.
func (p *Pool) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *Pool) wakeStarter() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// refill is the background starter: it keeps Size workers idle or
// starting, within MaxWorkers.
func (p *Pool) refill() {
	for {
		select {
		case <-p.gate.Done():
			return
		case <-p.wake:
		}
		for {
			p.mu.Lock()
			need := !p.gate.Closed() && len(p.idle)+p.starting < p.opts.Size && p.total < p.opts.MaxWorkers
			if need {
				p.total++
				p.starting++
			}
			p.mu.Unlock()
			if !need {
				break
			}
			w, err := p.start()
			p.mu.Lock()
			p.starting--
			p.addLocked(w, err)
			p.mu.Unlock()
			if err != nil {
				if p.gate.Closed() {
					return // Close ended the start
				}
				p.log.Warn("sandbox: cannot start a worker", "err", err)
				select {
				case <-p.gate.Done():
					return
				case <-time.After(startBackoff):
				}
				break
			}
		}
	}
}

// Close cancels the runs in progress, waits for them, interrupts the
// workers starting, stops every worker and waits for the processes to exit. Later Runs fail with ErrClosed.
func (p *Pool) Close() error {
	p.gate.Close()
	p.starter.Wait()
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.total -= len(idle)
	p.mu.Unlock()
	for _, w := range idle {
		p.procs.Go(w.stop)
	}
	p.procs.Wait()
	return nil
}

// Stats is a snapshot of a pool, for tests, diagnostics and metrics.
type Stats struct {
	Idle  int   // warm workers waiting for a run
	Busy  int   // workers running a program (or starting for one)
	Total int   // workers alive or starting
	PIDs  []int // process ids of the idle workers
	// Replaced counts the workers stopped after a run they could not
	// survive (a crash, a kill at the deadline, the memory limit) or
	// found dead while idle, since the pool started; a worker recycled
	// after MaxRunsPerWorker runs is not counted.
	Replaced int64
}

// Stats returns a snapshot of the pool.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{Idle: len(p.idle), Busy: p.total - len(p.idle) - p.starting, Total: p.total, Replaced: p.replaced}
	for _, w := range p.idle {
		s.PIDs = append(s.PIDs, w.pid)
	}
	return s
}
