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
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
)

// procRun is one Run on one worker, seen from the parent: it sends the
// program, serves the worker's host calls with the real Host, and enforces
// the wall-clock deadline.
type procRun struct {
	// fixed at creation
	pool   *Pool
	w      *procWorker
	id     uint32
	prog   sandbox.Program
	limits sandbox.Limits // with defaults

	mu         sync.Mutex
	killReason string      // why the parent killed the worker; guarded by mu
	grace      *time.Timer // kill after a cancellation; guarded by mu
	over       bool        // run returned: no more timers; guarded by mu
}

// run executes the program on the worker. keep is false when the worker
// must not run another program.
func (r *procRun) run(ctx context.Context, host sandbox.Host) (o sandbox.Outcome, keep bool, err error) {
	d := newDispatch(ctx, host, r.w.fw)
	defer d.close()

	deadline := time.AfterFunc(r.limits.Timeout+KillGrace, func() {
		r.kill(pass.TimeoutMessage(r.limits.Timeout))
	})
	defer deadline.Stop()
	stopCancel := context.AfterFunc(ctx, func() {
		reason := pass.EndMessage(ctx, 0)
		_ = r.w.fw.write(msgCancel, r.id, newEnc(len(reason)+4).str(reason))
		r.mu.Lock()
		if !r.over {
			r.grace = time.AfterFunc(KillGrace, func() { r.kill(reason) })
		}
		r.mu.Unlock()
	})
	defer func() {
		stopCancel()
		r.mu.Lock()
		r.over = true
		if r.grace != nil {
			r.grace.Stop()
		}
		r.mu.Unlock()
	}()

	if r.w.resident > 0 {
		// Sampled until the run returns, whether or not ctx ended.
		var watching sync.WaitGroup
		watchCtx, stopWatch := context.WithCancel(context.Background())
		defer watching.Wait()
		defer stopWatch()
		resident := func() (int64, error) { return residentBytes(r.w.pid) }
		watching.Go(func() {
			watch(watchCtx, residentEvery, r.w.resident, resident, func() { r.kill(memoryLimitMessage(r.pool.opts.MemoryLimit)) })
		})
	}

	e := newEnc(len(r.prog.Code) + 256)
	encodeProgram(e, r.prog)
	if err := r.w.fw.write(msgRun, r.id, e); err != nil {
		return r.crashed(d, fmt.Errorf("send the program: %w", err))
	}
	// Frames are read by one leader goroutine at a time. A leader serves a
	// host request itself, so that a quick call costs no goroutine handoff
	// (waking another thread roughly doubles the cost of a call here, and
	// so does arming a timer per call); when a call is still being served
	// at a tick of this goroutine's ticker, a new leader takes over reading
	// (other calls, cancellations) meanwhile. The ticker runs only while
	// calls are being served (see leaders).
	tick := time.NewTicker(leaderHandoff)
	tick.Stop()
	defer tick.Stop()
	res := make(chan readResult, 1)
	l := &leaders{run: r, d: d, res: res, tick: tick}
	l.wg.Add(1)
	go l.lead()
	var rr readResult
wait:
	for {
		select {
		case rr = <-res:
			break wait
		case <-tick.C:
			l.handoff()
		}
	}
	if rr.err != nil {
		// Unblock a leader that is serving a call, then wait for it.
		r.w.kill()
		d.cancel()
	}
	l.wg.Wait()
	if rr.err != nil {
		return r.crashed(d, rr.err)
	}
	return r.finish(d, rr.wo)
}

// leaderHandoff is the period at which a host call being served by the
// leader lets a new leader take over reading.
const leaderHandoff = 2 * time.Millisecond

// readResult is how reading a run's frames ended: its outcome, or why not.
type readResult struct {
	wo  wireOutcome
	err error
}

// leaders are the goroutines reading the frames of one run, one at a time
// (all owned by wg).
//
// The handoff ticker runs only while host requests are being served: the
// first serve after a quiet spell starts it, and a tick that finds no
// request served since the previous tick and none in progress stops it.
// So a run of quick calls arms it about once per burst, not once per call,
// and while the program computes without calling the host, nothing in
// the server wakes up (a 2 ms ticker for the whole run cost about 2,000
// context switches a second; BenchmarkServerWhileProgramComputes).
type leaders struct {
	// fixed at creation
	run  *procRun
	d    *dispatch
	res  chan<- readResult
	tick *time.Ticker // read by procRun.run, which calls handoff at each tick

	wg sync.WaitGroup

	mu      sync.Mutex
	serving int  // serves begun by leaders; guarded by mu
	busy    bool // the current leader is serving a call, not reading; guarded by mu
	seen    int  // serving at the previous tick; guarded by mu
	ticking bool // tick is running; guarded by mu
}

// lead reads frames until the outcome or an error, serving host requests
// in between.
func (l *leaders) lead() {
	defer l.wg.Done()
	r, d := l.run, l.d
	for {
		kind, id, payload, err := r.w.fr.read()
		if err != nil {
			l.res <- readResult{err: err}
			return
		}
		switch kind {
		case msgOutcome:
			if id != r.id {
				l.res <- readResult{err: fmt.Errorf("outcome of run %d during run %d", id, r.id)}
				return
			}
			dd := &dec{b: payload}
			wo := decodeOutcome(dd)
			if dd.err != nil {
				l.res <- readResult{err: fmt.Errorf("outcome: %w", dd.err)}
				return
			}
			l.res <- readResult{wo: wo}
			return
		case msgAbandon:
			d.abandon(id)
		case msgCall, msgStepResult, msgStepDone, msgService, msgCheck:
			serve, err := d.prepare(kind, id, payload)
			if err != nil {
				l.res <- readResult{err: err}
				return
			}
			if serve == nil {
				continue
			}
			if !l.serve(serve) {
				return // a new leader reads on
			}
		default:
			l.res <- readResult{err: fmt.Errorf("unexpected message kind %d", kind)}
			return
		}
	}
}

// serve runs f as the leader; it reports whether this goroutine is still
// the leader afterwards.
func (l *leaders) serve(f func()) bool {
	l.mu.Lock()
	l.serving++
	l.busy = true
	if !l.ticking {
		l.ticking = true
		l.tick.Reset(leaderHandoff)
	}
	l.mu.Unlock()
	f()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.busy {
		return false // handed off
	}
	l.busy = false
	return true
}

// handoff starts a new leader when the current one has been serving the
// same call since the previous tick, and stops the ticker when no call
// has been served since then.
func (l *leaders) handoff() {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.serving != l.seen:
	case l.busy:
		l.busy = false
		l.wg.Add(1)
		go l.lead()
	default:
		l.tick.Stop()
		l.ticking = false
	}
	l.seen = l.serving
}

// kill kills the worker for reason (the first reason given is kept).
func (r *procRun) kill(reason string) {
	r.mu.Lock()
	if r.killReason == "" {
		r.killReason = reason
	}
	r.mu.Unlock()
	r.w.kill()
}

func (r *procRun) killed() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.killReason
}

// finish turns the worker's outcome into the Run's result.
func (r *procRun) finish(d *dispatch, wo wireOutcome) (sandbox.Outcome, bool, error) {
	d.close()
	keep := !wo.recycle && r.killed() == ""
	stop, internal, _ := d.result()
	if internal != nil {
		return sandbox.Outcome{}, false, internal
	}
	if wo.internal != "" {
		return sandbox.Outcome{}, false, fmt.Errorf("sandbox worker %d: %s", r.w.pid, wo.internal)
	}
	o := wo.Outcome
	if o.Status == sandbox.Stopped {
		o.Stop = stop
		if o.Stop == nil {
			o.Stop = &stopError{msg: wo.stopMsg}
		}
	}
	return o, keep, nil
}

// crashed reports a worker that died or broke the protocol (cause): it is
// killed and waited for, and the run fails with why.
func (r *procRun) crashed(d *dispatch, cause error) (sandbox.Outcome, bool, error) {
	r.w.kill()
	<-r.w.exited
	d.close()
	stop, internal, seq := d.result()
	if internal != nil {
		return sandbox.Outcome{}, false, internal
	}
	o := sandbox.Outcome{Clock: r.prog.Clock, Calls: seq}
	if stop != nil {
		o.Status, o.Stop = sandbox.Stopped, stop
		return o, false, nil
	}
	o.Status = sandbox.Failed
	switch reason := r.killed(); {
	case reason != "":
		o.Error = reason
	case r.w.stderr.oom:
		o.Error = memoryLimitMessage(r.pool.opts.MemoryLimit)
	case r.w.forbiddenSyscall():
		o.Error = "sandbox worker killed: it made a system call the sandbox forbids (seccomp: no files, sockets, processes or privileges); the run is ended and the worker replaced"
	default:
		o.Error = "sandbox worker crashed: " + scrub.Paths(r.w.exitSummary())
	}
	r.pool.log.Warn("sandbox worker ended during a run", "pid", r.w.pid, "outcome", o.Error,
		"cause", cause, "exit", r.w.exitSummary(), "stderr", r.w.stderr.last)
	return o, false, nil
}

// dispatch serves the host calls of one run on goroutines of its own (owned
// by wg), each with a context that the worker can cancel (msgAbandon).
type dispatch struct {
	// fixed at creation
	ctx    context.Context // parent of the calls' contexts
	cancel context.CancelFunc
	host   sandbox.Host
	fw     *frameWriter

	wg sync.WaitGroup

	mu       sync.Mutex
	calls    map[uint32]context.CancelFunc // calls in progress
	stop     error                         // the first stop the host returned
	internal error                         // a host panic
	seq      int                           // the highest seq seen
	closed   bool
}

func newDispatch(ctx context.Context, host sandbox.Host, fw *frameWriter) *dispatch {
	d := &dispatch{host: host, fw: fw, calls: map[uint32]context.CancelFunc{}}
	d.ctx, d.cancel = context.WithCancel(ctx)
	return d
}

// close cancels the calls in progress and waits for them; it may be
// called more than once.
func (d *dispatch) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
}

func (d *dispatch) abandon(id uint32) {
	d.mu.Lock()
	cancel := d.calls[id]
	d.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// result is what the host calls left: the first stop, a host panic, and
// the highest seq seen.
func (d *dispatch) result() (stop, internal error, seq int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stop, d.internal, d.seq
}

// hostReply is what a host method answered.
type hostReply struct {
	found bool
	value []byte
	err   error
}

// prepare decodes a host request and returns the function that answers it
// (nil when the run is over).
func (d *dispatch) prepare(kind byte, id uint32, payload []byte) (func(), error) {
	dd := &dec{b: payload}
	var call func(ctx context.Context) hostReply
	seq := 0
	switch kind {
	case msgCall:
		c := sandbox.Call{Seq: dd.int(1 << 31), Connector: dd.str(), Method: dd.str(), Args: json.RawMessage(dd.bytes())}
		seq = c.Seq
		call = func(ctx context.Context) hostReply {
			v, err := d.host.Call(ctx, c)
			return hostReply{value: v, err: err}
		}
	case msgStepResult:
		s := sandbox.Step{Seq: dd.int(1 << 31), Name: dd.str()}
		seq = s.Seq
		call = func(ctx context.Context) hostReply {
			v, found, err := d.host.StepResult(ctx, s)
			return hostReply{found: found, value: v, err: err}
		}
	case msgStepDone:
		s := sandbox.Step{Seq: dd.int(1 << 31), Name: dd.str()}
		value, errMsg := json.RawMessage(dd.bytes()), dd.str()
		call = func(ctx context.Context) hostReply {
			return hostReply{err: d.host.StepDone(ctx, s, value, errMsg)}
		}
	case msgService:
		s := sandbox.ServiceCall{Seq: dd.int(1 << 31), Name: dd.str(), Args: json.RawMessage(dd.bytes())}
		seq = s.Seq
		call = func(ctx context.Context) hostReply {
			v, err := d.host.Service(ctx, s)
			return hostReply{value: v, err: err}
		}
	case msgCheck:
		raw := dd.bytes()
		call = func(ctx context.Context) hostReply {
			ch, ok := d.host.(sandbox.Checker)
			if !ok {
				return hostReply{value: []byte("[]")}
			}
			var calls []sandbox.StaticCall
			if err := json.Unmarshal(raw, &calls); err != nil {
				return hostReply{err: fmt.Errorf("sandbox: static calls from the worker: %w", err)}
			}
			problems, err := ch.Check(ctx, calls)
			if err != nil {
				return hostReply{err: err}
			}
			v, err := json.Marshal(problems)
			return hostReply{value: v, err: err}
		}
	}
	if dd.err != nil {
		return nil, fmt.Errorf("host request %d: %w", id, dd.err)
	}
	ctx, cancel := context.WithCancel(d.ctx)
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		cancel()
		return nil, nil
	}
	d.calls[id] = cancel
	d.seq = max(d.seq, seq)
	d.wg.Add(1)
	d.mu.Unlock()
	return func() {
		defer d.wg.Done()
		defer func() {
			d.mu.Lock()
			delete(d.calls, id)
			d.mu.Unlock()
			cancel()
		}()
		d.reply(id, d.answer(ctx, call))
	}, nil
}

// answer calls the host unless it has stopped the run; a stop is recorded
// and a panic becomes an internal failure that stops the run.
func (d *dispatch) answer(ctx context.Context, call func(context.Context) hostReply) (r hostReply) {
	if stop, _, _ := d.result(); stop != nil {
		return hostReply{err: stop}
	}
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("sandbox: host panic: %v\n%s", p, debug.Stack())
			d.mu.Lock()
			if d.internal == nil {
				d.internal = err
			}
			d.mu.Unlock()
			r = hostReply{err: fmt.Errorf("%w: internal error", sandbox.ErrStop)}
		}
	}()
	r = call(ctx)
	if r.err != nil && errors.Is(r.err, sandbox.ErrStop) {
		d.mu.Lock()
		if d.stop == nil {
			d.stop = r.err
		}
		d.mu.Unlock()
	}
	return r
}

// reply sends the answer to host request id. A value too large for a frame
// is sent as an error instead; a worker that is gone is noticed by the
// reader.
func (d *dispatch) reply(id uint32, r hostReply) {
	status, msg := replyOK, ""
	if r.err != nil {
		status, msg = replyErr, r.err.Error()
		if errors.Is(r.err, sandbox.ErrStop) {
			status = replyStop
		}
		r.value = nil
		// An error's details travel as the reply's value.
		if ce := (*sandbox.CallError)(nil); status == replyErr && errors.As(r.err, &ce) {
			r.value = ce.Details
		}
	}
	e := newEnc(len(r.value) + len(msg) + 16)
	e.uvarint(uint64(status)).flag(r.found).bytes(r.value).str(msg)
	err := d.fw.write(msgReply, id, e)
	if errors.Is(err, errFrameTooLarge) {
		msg = fmt.Sprintf("the value returned is too large for the sandbox: %d bytes, limit %d MiB", len(r.value), maxFrame>>20)
		_ = d.fw.write(msgReply, id, newEnc(len(msg)+16).uvarint(uint64(replyErr)).flag(false).bytes(nil).str(msg))
	}
}
