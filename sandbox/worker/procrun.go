package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
)

// procRun is one Run on one worker, seen from the parent: it sends the
// program, serves the worker's host requests with the real Host (each on
// a context the worker can cancel with msgAbandon), and enforces the
// wall-clock deadline.
//
// Its frames are read by one leader goroutine at a time. A leader serves
// a host request itself, so that a quick call costs no goroutine handoff
// (waking another thread roughly doubles the cost of a call here, and so
// does arming a timer per call); when a request is still being served at
// a tick of the run's handoff ticker, a new leader takes over reading
// (other requests, cancellations) meanwhile. The ticker runs only while
// requests are being served: the first serve after a quiet spell starts
// it, and a tick that finds no request served since the previous tick and
// none in progress stops it. So a run of quick calls arms it about once
// per burst, not once per call, and while the program computes without
// calling the host, nothing in the server wakes up (a 2 ms ticker for the
// whole run cost about 2,000 context switches a second;
// BenchmarkServerWhileProgramComputes).
type procRun struct {
	// fixed at creation
	pool   *Pool
	w      *procWorker
	id     uint32
	prog   sandbox.Program
	host   sandbox.Host
	ctx    context.Context // the host requests' parent context; canceled by end
	cancel context.CancelFunc
	res    chan readResult // how reading the frames ended (buffered 1)
	tick   *time.Ticker    // the leaders' handoff; its ticks are read by read
	// maxCalls is the program's Limits.MaxCalls: a worker that asks for
	// more than a program held to it can is broken (see prepare).
	maxCalls int

	leaders sync.WaitGroup // the goroutines reading frames
	calls   sync.WaitGroup // the host requests being served

	mu         sync.Mutex
	over       bool                          // end was called: no more requests, no grace timer, no kill
	killReason string                        // why the parent killed the worker (the first reason)
	grace      *time.Timer                   // kills the worker a grace after a cancellation
	pending    map[uint32]context.CancelFunc // the requests being served and not yet answered, by id
	stop       error                         // the first stop the host returned
	internal   error                         // a host panic
	requests   int                           // host requests received
	inflight   int64                         // bytes of the requests not yet answered
	serving    int                           // serves begun by leaders
	busy       bool                          // the current leader is serving a request, not reading
	seen       int                           // serving at the previous tick
	ticking    bool                          // tick is running
}

// leaderHandoff is the period at which a host request being served by the
// leader lets a new leader take over reading.
const leaderHandoff = 2 * time.Millisecond

// readResult is how reading a run's frames ended: its outcome, or why not.
type readResult struct {
	wo  wireOutcome
	err error
}

// run executes the program on the worker. keep is false when the worker
// must not run another program.
func (r *procRun) run(ctx context.Context) (o sandbox.Outcome, keep bool, err error) {
	r.ctx, r.cancel = context.WithCancel(ctx)
	r.pending = map[uint32]context.CancelFunc{}
	defer r.end()
	limits := r.prog.Limits.WithDefaults()
	r.maxCalls = limits.MaxCalls
	timeout := limits.Timeout
	deadline := time.AfterFunc(timeout+KillGrace, func() { r.kill(pass.TimeoutMessage(timeout)) })
	defer deadline.Stop()

	if r.w.resident > 0 {
		// Sampled until the run returns, whether or not ctx ended.
		resident := func() (int64, error) { return residentBytes(r.w.pid) }
		stopWatch := watch(residentEvery, r.w.resident, resident, func() { r.kill(memoryLimitMessage(r.pool.opts.MemoryLimit)) })
		defer stopWatch()
	}

	e := newEnc(len(r.prog.Code) + 256)
	encodeProgram(e, r.prog)
	rr := readResult{err: r.w.fw.write(msgRun, r.id, e)}
	if rr.err != nil {
		rr.err = fmt.Errorf("send the program: %w", rr.err)
	} else {
		// Armed once the program is sent, so that a cancellation always
		// follows it down the pipe (one before it would be ignored).
		defer context.AfterFunc(ctx, func() {
			reason := pass.EndMessage(ctx, 0)
			_ = r.w.fw.write(msgCancel, r.id, newEnc(len(reason)+4).str(reason))
			r.mu.Lock()
			if !r.over {
				r.grace = time.AfterFunc(KillGrace, func() { r.kill(reason) })
			}
			r.mu.Unlock()
		})()
		rr = r.read()
	}
	r.end()
	// Nothing writes stop and internal any more.
	o = rr.wo.Outcome
	switch {
	case r.internal != nil:
		return sandbox.Outcome{}, false, r.internal
	case rr.err != nil:
		return r.crashed(rr.err), false, nil
	case rr.wo.internal != "":
		return sandbox.Outcome{}, false, fmt.Errorf("sandbox worker %d: %s", r.w.pid, short.Clip(rr.wo.internal, maxInternalText))
	case o.Status == sandbox.Stopped && r.stop == nil:
		// Only the host stops a run: its stop is the one answer recorded.
		return r.crashed(errors.New("a stop the host did not make")), false, nil
	}
	if o.Status == sandbox.Stopped {
		o.Stop = r.stop
	}
	return o, !rr.wo.recycle && r.killed() == "", nil
}

// read reads the run's frames with leaders (see procRun) until the
// outcome or an error.
func (r *procRun) read() readResult {
	r.tick = time.NewTicker(leaderHandoff)
	r.tick.Stop()
	defer r.tick.Stop()
	r.res = make(chan readResult, 1)
	r.leaders.Add(1)
	go r.lead()
	for {
		select {
		case rr := <-r.res:
			if rr.err != nil {
				// Unblock a leader that is serving a request, then wait for it.
				r.w.kill()
				r.cancel()
			}
			r.leaders.Wait()
			return rr
		case <-r.tick.C:
			r.handoff()
		}
	}
}

// lead reads frames until the outcome or an error, serving host requests
// in between.
func (r *procRun) lead() {
	defer r.leaders.Done()
	for {
		kind, id, payload, err := r.w.fr.read()
		if err != nil {
			r.res <- readResult{err: err}
			return
		}
		switch kind {
		case msgOutcome:
			if id != r.id {
				r.res <- readResult{err: fmt.Errorf("outcome of run %d during run %d", id, r.id)}
				return
			}
			// A worker reports its outcome once every request it made has
			// its reply (pass.Execute waits for the host calls); one that
			// does not lies, and the calls it left are cancelled, not
			// awaited.
			r.mu.Lock()
			unanswered := len(r.pending)
			r.mu.Unlock()
			if unanswered > 0 {
				r.res <- readResult{err: fmt.Errorf("outcome of run %d with %d host requests unanswered", id, unanswered)}
				return
			}
			d := &dec{b: payload}
			wo := decodeOutcome(d)
			if d.err != nil {
				r.res <- readResult{err: fmt.Errorf("outcome: %w", d.err)}
				return
			}
			r.res <- readResult{wo: wo}
			return
		case msgAbandon:
			r.mu.Lock()
			cancel := r.pending[id]
			r.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		case msgCall, msgStepResult, msgStepDone, msgService, msgCheck:
			serve, err := r.prepare(kind, id, payload)
			if err != nil {
				r.res <- readResult{err: err}
				return
			}
			if serve != nil && !r.serve(serve) {
				return // a new leader reads on
			}
		default:
			r.res <- readResult{err: fmt.Errorf("unexpected message kind %d", kind)}
			return
		}
	}
}

// serve runs f as the leader; it reports whether this goroutine is still
// the leader afterwards.
func (r *procRun) serve(f func()) bool {
	r.mu.Lock()
	r.serving++
	r.busy = true
	if !r.ticking {
		r.ticking = true
		r.tick.Reset(leaderHandoff)
	}
	r.mu.Unlock()
	f()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.busy {
		return false // handed off
	}
	r.busy = false
	return true
}

// handoff starts a new leader when the current one has been serving the
// same request since the previous tick, and stops the ticker when no
// request has been served since then.
func (r *procRun) handoff() {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.serving != r.seen:
	case r.busy:
		r.busy = false
		r.leaders.Add(1)
		go r.lead()
	default:
		r.tick.Stop()
		r.ticking = false
	}
	r.seen = r.serving
}

// end takes no more host requests, cancels those being served and waits
// for them; it may be called more than once.
func (r *procRun) end() {
	r.mu.Lock()
	r.over = true
	if r.grace != nil {
		r.grace.Stop()
	}
	r.mu.Unlock()
	r.cancel()
	r.calls.Wait()
}

// kill kills the worker for reason (the first reason given is kept),
// unless the run is over: the deadline's and the grace's timers may fire
// as it returns (Stop does not wait for them), and the worker may be
// serving the next run by then.
func (r *procRun) kill(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over {
		return
	}
	if r.killReason == "" {
		r.killReason = reason
	}
	r.w.kill()
}

func (r *procRun) killed() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.killReason
}

// crashed is the outcome of a run whose worker died or broke the protocol
// (cause): the worker is killed and waited for, and the run fails with
// why, unless the host had stopped it.
func (r *procRun) crashed(cause error) sandbox.Outcome {
	r.w.kill()
	<-r.w.exited
	o := sandbox.Outcome{Clock: r.prog.Clock}
	if r.stop != nil {
		o.Status, o.Stop = sandbox.Stopped, r.stop
		return o
	}
	o.Status = sandbox.Failed
	switch reason := r.killed(); {
	case reason != "":
		o.Error = reason
	case r.w.stderr.oom, r.w.stderr.fault && r.pool.opts.Limiter == LimiterSystem:
		// goja makes no system call that could fault: under the system's
		// limit a fault in the runtime is the limit refusing it memory.
		o.Error = memoryLimitMessage(r.pool.opts.MemoryLimit)
	case r.w.forbiddenSyscall():
		o.Error = "sandbox worker killed: it made a system call the sandbox forbids (seccomp: no files, sockets, processes or privileges); the run is ended and the worker replaced"
	default:
		o.Error = "sandbox worker crashed: " + scrub.Paths(r.w.exitSummary())
	}
	r.pool.log.Warn("sandbox worker ended during a run", "pid", r.w.pid, "outcome", o.Error,
		"cause", cause, "exit", r.w.exitSummary(), "stderr", r.w.stderr.last)
	return o
}

// prepare decodes a host request and returns the function that serves it
// (nil when the run is over).
//
// The worker is not trusted with the bounds a real one keeps, and one
// past them is broken: a program may make at most Limits.MaxCalls calls,
// steps and services, each numbered from 1 and asking at most twice (a
// step's lookup and its value), and one check before running; and a
// worker keeps every request it is waiting on in its own memory, so those
// not yet answered come to less than its memory limit. Its ids are its
// own, but not reused while the parent serves one.
func (r *procRun) prepare(kind byte, id uint32, payload []byte) (func(), error) {
	d := &dec{b: payload}
	q := decodeRequest(d)
	if d.err != nil {
		return nil, fmt.Errorf("host request %d: %w", id, d.err)
	}
	size := int64(len(payload))
	ctx, cancel := context.WithCancel(r.ctx)
	r.mu.Lock()
	r.requests++
	r.inflight += size
	var broken error
	switch {
	case r.pending[id] != nil:
		broken = fmt.Errorf("host request %d sent while request %d is being served", id, id)
	case q.seq > r.maxCalls || r.requests > 2*r.maxCalls+1:
		broken = fmt.Errorf("host request %d (seq %d, request %d) past the program's limit of %d calls", id, q.seq, r.requests, r.maxCalls)
	case r.inflight > r.pool.opts.MemoryLimit:
		broken = fmt.Errorf("host request %d: %d bytes of requests unanswered, past the worker's memory limit", id, r.inflight)
	}
	if broken != nil {
		r.mu.Unlock()
		cancel()
		return nil, broken
	}
	if r.over {
		r.mu.Unlock()
		cancel()
		return nil, nil
	}
	r.pending[id] = cancel
	r.calls.Add(1)
	r.mu.Unlock()
	return func() {
		defer r.calls.Done()
		rep := r.answer(ctx, kind, q)
		// Answered before the reply is sent: the worker's outcome, which
		// follows the reply, finds no request pending.
		r.mu.Lock()
		delete(r.pending, id)
		r.inflight -= size
		r.mu.Unlock()
		cancel()
		r.reply(id, rep)
	}, nil
}

// ask calls the Host method that request q of kind names.
func (r *procRun) ask(ctx context.Context, kind byte, q request) (found bool, value []byte, err error) {
	switch kind {
	case msgCall:
		value, err = r.host.Call(ctx, sandbox.Call{Seq: q.seq, Connector: q.name, Method: q.method, Args: q.data})
	case msgStepResult:
		value, found, err = r.host.StepResult(ctx, sandbox.Step{Seq: q.seq, Name: q.name})
	case msgStepDone:
		err = r.host.StepDone(ctx, sandbox.Step{Seq: q.seq, Name: q.name}, q.data, q.errMsg)
	case msgService:
		value, err = r.host.Service(ctx, sandbox.ServiceCall{Seq: q.seq, Name: q.name, Args: q.data})
	case msgCheck:
		ch, ok := r.host.(sandbox.Checker)
		if !ok {
			return false, []byte("[]"), nil
		}
		var calls []sandbox.StaticCall
		if err := json.Unmarshal(q.data, &calls); err != nil {
			return false, nil, fmt.Errorf("sandbox: static calls from the worker: %w", err)
		}
		problems, err := ch.Check(ctx, calls)
		if err != nil {
			return false, nil, err
		}
		value, err = json.Marshal(problems)
	}
	return found, value, err
}

// answer calls the host unless it has stopped the run; a stop is recorded
// and a panic becomes an internal failure that stops the run.
func (r *procRun) answer(ctx context.Context, kind byte, q request) (rep reply) {
	r.mu.Lock()
	stop := r.stop
	r.mu.Unlock()
	if stop != nil {
		return replyOf(false, nil, stop)
	}
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("sandbox: host panic: %v\n%s", p, debug.Stack())
			r.mu.Lock()
			if r.internal == nil {
				r.internal = err
			}
			r.mu.Unlock()
			rep = replyOf(false, nil, fmt.Errorf("%w: internal error", sandbox.ErrStop))
		}
	}()
	found, value, err := r.ask(ctx, kind, q)
	if err != nil && errors.Is(err, sandbox.ErrStop) {
		r.mu.Lock()
		if r.stop == nil {
			r.stop = err
		}
		r.mu.Unlock()
	}
	return replyOf(found, value, err)
}

// reply sends the answer to host request id. A value too large for a frame
// is sent as an error instead; a worker that is gone is noticed by the
// reader.
func (r *procRun) reply(id uint32, rep reply) {
	err := errFrameTooLarge // a value past the limit is refused before it is copied
	if len(rep.value) <= maxFrame {
		err = r.w.fw.write(msgReply, id, rep.encode(newEnc(len(rep.value)+len(rep.msg)+16)))
	}
	if errors.Is(err, errFrameTooLarge) {
		msg := fmt.Sprintf("the value returned is too large for the sandbox: %d bytes, limit %d MiB", len(rep.value), maxFrame>>20)
		_ = r.w.fw.write(msgReply, id, reply{status: replyErr, msg: msg}.encode(newEnc(len(msg)+16)))
	}
}
