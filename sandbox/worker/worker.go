package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
)

// Config configures Serve.
type Config struct {
	// MemoryLimit is the worker's memory budget in bytes. While a program
	// runs, a watchdog interrupts it once the heap passes 80% of the budget
	// (the outcome is "memory limit exceeded (256 MiB)") and the worker asks
	// to be replaced. 0 disables the watchdog. The hard limit (see
	// Limiter) is not set here.
	MemoryLimit int64
	// Logger receives internal failures (default: discard).
	Logger *slog.Logger
}

// How many normalised programs a worker keeps, and what they may weigh
// (see source.NewCache): the cache's heap counts against the memory limit
// of the worker's runs.
const (
	workerCacheSize  = 32
	workerCacheBytes = 16 << 20
)

// Serve is the worker side of the process executor: it serves runs
// sent by a Pool over a pair of pipes (in from the parent, out to
// it), one at a time. Each program runs as in the in-process executor; every
// Host method is forwarded to the parent, which alone owns connectors and
// the durable log, and a stop the parent's host returns stops the program.
//
// It returns nil when in reaches EOF (the parent closed the pipe, which is
// how a worker is stopped), or an error for a broken pipe or a protocol
// violation. ctx cancels a run in progress; when in has a read deadline
// (an *os.File pipe), ctx also ends Serve.
func Serve(ctx context.Context, in io.Reader, out io.Writer, cfg Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &workerServer{
		cfg:   cfg,
		log:   log,
		cache: source.NewCache(workerCacheSize, workerCacheBytes),
		fw:    &frameWriter{w: out},
	}
	s.host = &pipeHost{fw: s.fw, pending: map[uint32]chan reply{}}
	if d, ok := in.(interface{ SetReadDeadline(time.Time) error }); ok {
		stop := context.AfterFunc(ctx, func() { _ = d.SetReadDeadline(time.Now()) })
		defer stop()
	}
	err := s.serve(ctx, newFrameReader(in))
	s.shutdown(err)
	if errors.Is(err, io.EOF) {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// workerServer is the state of Serve. The serving goroutine reads
// frames; a run goroutine (owned by runs) executes the current program.
type workerServer struct {
	// fixed at creation
	cfg   Config
	log   *slog.Logger
	cache *source.Cache
	fw    *frameWriter
	host  *pipeHost

	runs sync.WaitGroup

	mu        sync.Mutex
	runID     uint32
	cancelRun context.CancelCauseFunc // of the run in progress; nil when none
}

// warmUpCode runs once before a worker says hello, so that the first real
// program does not pay for initialising esbuild and goja (several ms).
const warmUpCode = "const o = { a: [1, 'x'], d: new Date(0) };\nconsole.log(o);\nawait null;\nJSON.stringify(o)"

func (s *workerServer) serve(ctx context.Context, fr *frameReader) error {
	// The warm-up program calls no host method: it has none.
	if _, err := pass.Execute(ctx, sandbox.Program{Code: warmUpCode}, nil, s.cache, s.log); err != nil {
		s.log.Warn("sandbox worker: warm-up failed", "err", err)
	}
	if err := s.fw.write(msgHello, 0, newEnc(0)); err != nil {
		return fmt.Errorf("sandbox worker: say hello: %w", err)
	}
	for {
		kind, id, payload, err := fr.read()
		if err != nil {
			return err
		}
		switch kind {
		case msgRun:
			d := &dec{b: payload}
			p := decodeProgram(d)
			if d.err != nil {
				return fmt.Errorf("sandbox worker: run %d: %w", id, d.err)
			}
			if err := s.start(ctx, id, p); err != nil {
				return err
			}
		case msgCancel:
			d := &dec{b: payload}
			reason := d.str()
			if d.err != nil {
				return fmt.Errorf("sandbox worker: cancel %d: %w", id, d.err)
			}
			s.cancel(id, reason)
		case msgReply:
			if err := s.host.deliver(id, payload); err != nil {
				return err
			}
		default:
			return fmt.Errorf("sandbox worker: unexpected message kind %d", kind)
		}
	}
}

// start begins run id unless one is in progress (a protocol error).
func (s *workerServer) start(ctx context.Context, id uint32, p sandbox.Program) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancelRun != nil {
		return fmt.Errorf("sandbox worker: run %d sent while run %d is in progress", id, s.runID)
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	s.runID, s.cancelRun = id, cancel
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		o := s.run(runCtx, cancel, p)
		cancel(nil)
		// The run is over before the parent hears of it: it may send the
		// next one at once.
		s.mu.Lock()
		s.cancelRun = nil
		s.mu.Unlock()
		if err := s.sendOutcome(id, o); err != nil {
			s.log.Error("sandbox worker: send outcome", "run", id, "err", err)
		}
	}()
	return nil
}

// cancel cancels run id, if it is the one in progress, with reason as its
// outcome's error.
func (s *workerServer) cancel(id uint32, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancelRun != nil && s.runID == id {
		s.cancelRun(&pass.LimitError{Msg: reason})
	}
}

// shutdown ends the run in progress, if any, and waits for it: host calls
// waiting for the parent fail with cause.
func (s *workerServer) shutdown(cause error) {
	s.mu.Lock()
	if s.cancelRun != nil {
		s.cancelRun(&pass.LimitError{Msg: "canceled: the sandbox worker is stopping"})
	}
	s.mu.Unlock()
	if cause == nil || errors.Is(cause, io.EOF) {
		cause = errors.New("the parent process closed the pipe")
	}
	s.host.fail(cause)
	s.runs.Wait()
}

// run executes one program and returns its outcome.
func (s *workerServer) run(ctx context.Context, cancel context.CancelCauseFunc, p sandbox.Program) wireOutcome {
	stopWatch := func() bool { return false }
	if s.cfg.MemoryLimit > 0 {
		heap := func() (int64, error) { return heapBytes(), nil }
		stopWatch = watch(heapWatchEvery, s.cfg.MemoryLimit/100*heapWatchPercent, heap, func() {
			cancel(&pass.LimitError{Msg: memoryLimitMessage(s.cfg.MemoryLimit)})
		})
	}
	o, err := pass.Execute(ctx, p, s.host, s.cache, s.log)
	tripped := stopWatch()

	if err != nil {
		s.log.Error("sandbox worker: internal failure", "err", err)
		return wireOutcome{Outcome: sandbox.Outcome{Status: sandbox.Failed, Error: "internal error"}, internal: err.Error(), recycle: true}
	}
	// A worker whose heap stays large after a run is replaced rather than
	// kept idle with that memory.
	recycle := tripped || (s.cfg.MemoryLimit > 0 && heapBytes() > s.cfg.MemoryLimit/2)
	return wireOutcome{Outcome: o, recycle: recycle} // o.Stop stays here: the parent has the host's own
}

// sendOutcome writes the outcome of run id. An outcome too large for one
// frame becomes a failure that says so.
func (s *workerServer) sendOutcome(id uint32, o wireOutcome) error {
	size := len(o.Result)
	for _, l := range o.Logs {
		size += len(l)
	}
	if size <= maxFrame { // a larger outcome is refused before it is copied
		e := newEnc(size + 256)
		encodeOutcome(e, o)
		err := s.fw.write(msgOutcome, id, e)
		if !errors.Is(err, errFrameTooLarge) {
			return err
		}
		size = len(e.b)
	}
	o.Outcome = sandbox.Outcome{
		Status: sandbox.Failed,
		Error:  fmt.Sprintf("the program's value and logs are too large to return: %d bytes, limit %d MiB", size, maxFrame>>20),
		Clock:  o.Clock,
	}
	e := newEnc(256)
	encodeOutcome(e, o)
	return s.fw.write(msgOutcome, id, e)
}

// memoryLimitMessage is the outcome of a program that hit the memory limit.
func memoryLimitMessage(limit int64) string {
	return "memory limit exceeded (" + short.Bytes(limit) + ")"
}

// pipeHost is the Host of a worker: every method is a round trip to the
// parent. It is safe for concurrent use.
type pipeHost struct {
	fw *frameWriter

	mu      sync.Mutex
	next    uint32
	pending map[uint32]chan reply
	gone    error // the parent is gone: calls fail at once
}

var _ sandbox.Host = (*pipeHost)(nil)

// stopError is a stop decided by the parent's host.
type stopError struct{ msg string }

func (e *stopError) Error() string { return e.msg }
func (e *stopError) Unwrap() error { return sandbox.ErrStop }

// roundTrip sends request q of kind and waits for its reply. When ctx
// ends first, the parent is told to cancel the call, and its reply is
// still awaited: the call has returned on the parent's side when roundTrip
// returns.
func (h *pipeHost) roundTrip(ctx context.Context, kind byte, q request) (reply, error) {
	if len(q.data) > maxFrame {
		return reply{}, errFrameTooLarge // refused before it is copied into a frame
	}
	ch := make(chan reply, 1)
	h.mu.Lock()
	if h.gone != nil {
		h.mu.Unlock()
		return reply{}, h.gone
	}
	h.next++
	id := h.next
	h.pending[id] = ch
	h.mu.Unlock()
	if err := h.fw.write(kind, id, q.encode(newEnc(len(q.name)+len(q.method)+len(q.data)+len(q.errMsg)+16))); err != nil {
		h.mu.Lock()
		delete(h.pending, id)
		h.mu.Unlock()
		return reply{}, err
	}
	var r reply
	select {
	case r = <-ch:
	case <-ctx.Done():
		_ = h.fw.write(msgAbandon, id, newEnc(0)) // on failure, fail() answers
		r = <-ch
	}
	return r, r.err()
}

// deliver hands a reply frame to the call waiting for it.
func (h *pipeHost) deliver(id uint32, payload []byte) error {
	d := &dec{b: payload}
	r := decodeReply(d)
	if d.err != nil {
		return fmt.Errorf("sandbox worker: reply %d: %w", id, d.err)
	}
	h.mu.Lock()
	ch, ok := h.pending[id]
	delete(h.pending, id)
	h.mu.Unlock()
	if ok {
		ch <- r
	}
	return nil
}

// fail answers every waiting call with an error and makes later calls fail.
func (h *pipeHost) fail(cause error) {
	err := fmt.Errorf("sandbox worker: %w", cause)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gone = err
	for id, ch := range h.pending {
		ch <- reply{status: replyErr, msg: err.Error()}
		delete(h.pending, id)
	}
}

// Call forwards a connector call.
func (h *pipeHost) Call(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
	r, err := h.roundTrip(ctx, msgCall, request{seq: c.Seq, name: c.Connector, method: c.Method, data: c.Args})
	if errors.Is(err, errFrameTooLarge) {
		return nil, fmt.Errorf("%s.%s: the arguments are too large to send: %d bytes, limit %d MiB", c.Connector, c.Method, len(c.Args), maxFrame>>20)
	}
	return r.value, err
}

// StepResult forwards codemode.step's lookup.
func (h *pipeHost) StepResult(ctx context.Context, s sandbox.Step) (json.RawMessage, bool, error) {
	r, err := h.roundTrip(ctx, msgStepResult, request{seq: s.Seq, name: s.Name})
	return r.value, r.found, err
}

// StepDone forwards a step's value or failure.
func (h *pipeHost) StepDone(ctx context.Context, s sandbox.Step, value json.RawMessage, errMsg string) error {
	_, err := h.roundTrip(ctx, msgStepDone, request{seq: s.Seq, name: s.Name, data: value, errMsg: errMsg})
	if errors.Is(err, errFrameTooLarge) {
		return fmt.Errorf("codemode.step(%q): the value is too large to record: %d bytes, limit %d MiB", s.Name, len(value), maxFrame>>20)
	}
	return err
}

// Service forwards a host-backed codemode function.
func (h *pipeHost) Service(ctx context.Context, s sandbox.ServiceCall) (json.RawMessage, error) {
	r, err := h.roundTrip(ctx, msgService, request{seq: s.Seq, name: s.Name, data: s.Args})
	if errors.Is(err, errFrameTooLarge) {
		return nil, fmt.Errorf("codemode.%s: the arguments are too large to send: %d bytes, limit %d MiB", s.Name, len(s.Args), maxFrame>>20)
	}
	return r.value, err
}

// Check forwards the check before running (see Checker).
func (h *pipeHost) Check(ctx context.Context, calls []sandbox.StaticCall) ([]sandbox.Problem, error) {
	raw, err := json.Marshal(calls)
	if err != nil {
		return nil, err
	}
	r, err := h.roundTrip(ctx, msgCheck, request{data: raw})
	if err != nil {
		return nil, err
	}
	var problems []sandbox.Problem
	if err := json.Unmarshal(r.value, &problems); err != nil {
		return nil, fmt.Errorf("sandbox: problems from the host: %w", err)
	}
	return problems, nil
}
