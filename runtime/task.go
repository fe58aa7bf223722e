package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// Runs started as tasks: docs/ARCHITECTURE.md, "A task, end to end". A
// task run (codemode.Execution.Task set) is an ordinary run whose passes
// go on in the background, each bounded by Options.TaskTimeout; any
// process that shares the store serves its client.

// DefaultTaskTimeout is the default of Options.TaskTimeout.
const DefaultTaskTimeout = 30 * time.Minute

// cancelPoll is how often the pass of a task run reads its run's status,
// to stop once another process cancelled it; awaitPoll how often Await
// reads a run it waits for (this process's own status changes wake it at
// once). Each is one read of the run's row.
const (
	cancelPoll = 250 * time.Millisecond
	awaitPoll  = 250 * time.Millisecond
)

// Causes of a stopped task pass, as the run's error reads them.
var (
	errCancelled = errors.New("the run was cancelled")
	errShutdown  = errors.New("the server shut down while the run was in progress")
)

// livePass is a pass of a task run in progress in this process.
type livePass struct {
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the pass has recorded how it ended
}

// Start runs a new program as a task: it creates the execution as Execute
// does and returns it running at once; the program goes on in the
// background with no approver, each pass bounded by Options.TaskTimeout.
// The observer in ctx hears the run's events; ctx's end does not stop the
// run (Cancel and Close do).
func (r *Runtime) Start(ctx context.Context, code string, task codemode.Task) (codemode.Outcome, error) {
	c, out, err := r.create(ctx, code, &task)
	if c == nil {
		return out, err
	}
	go r.backgroundPass(ctx, c)
	return codemode.Outcome{Status: codemode.StatusRunning, ExecutionID: c.e.ID}, nil
}

// Resume approves a paused run as Approve does (with no approver), for a
// person who was shown its pending actions (rv: see claimApproved): the
// answer to a task's questions, or the console's Approve. The decision is
// made before Resume returns; a run started as a task then goes on in the
// background and the outcome is running, so no request waits out its
// pass (bounded by the task timeout, not the call's). A run that is not a
// task resumes within the call.
func (r *Runtime) Resume(ctx context.Context, id string, rv codemode.Review) (codemode.Outcome, error) {
	c, out, err := r.claimApproved(ctx, id, rv)
	if c == nil {
		return out, err
	}
	if c.e.Task == nil {
		return r.passNow(ctx, c, nil)
	}
	go r.backgroundPass(ctx, c)
	return codemode.Outcome{Status: codemode.StatusRunning, ExecutionID: id}, nil
}

// backgroundPass runs the pass of a claimed run with a context that keeps
// ctx's values (its observer) and ends only when the runtime closes
// (errShutdown); Start and Resume run it in a goroutine, which the claim
// (its request: see begin) keeps Close waiting for. A failure is logged:
// nobody waits for the outcome, which is in the store.
func (r *Runtime) backgroundPass(ctx context.Context, c *claimed) {
	bg, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	defer context.AfterFunc(r.background, func() { cancel(errShutdown) })()
	if _, err := r.runPass(bg, c, nil); err != nil {
		r.log.ErrorContext(ctx, "a pass in the background failed", "execution", c.e.ID, "err", err)
	}
}

// track registers a pass of task run id in progress here and returns the
// context to run it with (cancelled by Cancel, with errCancelled) and the
// func that ends the registration once the pass has recorded its end. A
// watcher reads the run's status every cancelPoll and stops the pass
// when the run is no longer running here (another process cancelled it,
// or took this one for gone).
func (r *Runtime) track(ctx context.Context, id string) (context.Context, func()) {
	pctx, cancel := context.WithCancelCause(ctx)
	lp := &livePass{cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.live[id] = lp
	r.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { r.watch(pctx, id, cancel) })
	return pctx, func() {
		cancel(nil) // the pass is over; so is its watcher
		wg.Wait()
		r.mu.Lock()
		if r.live[id] == lp {
			delete(r.live, id)
		}
		r.mu.Unlock()
		close(lp.done)
	}
}

// watch stops a pass (cancel) once its run is no longer running under
// this process, reading it every cancelPoll until ctx ends.
func (r *Runtime) watch(ctx context.Context, id string, cancel context.CancelCauseFunc) {
	t := time.NewTicker(cancelPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e, err := r.store.GetExecution(ctx, id)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				r.log.WarnContext(ctx, "reading a task run's status failed", "execution", id, "err", err)
			}
		case e.Status == codemode.StatusCancelled:
			cancel(errCancelled)
			return
		case e.Status != codemode.StatusRunning || e.Owner != r.own.id:
			cancel(fmt.Errorf("the run is %s, no longer running in this process", e.Status))
			return
		}
	}
}

// Cancel ends a task run that is running, paused or waiting: it is
// cancelled (reason is its error), its pending actions rejected, its
// waiting calls settled (their tasks cancelled), and a pass of it in
// progress here stopped and awaited (elsewhere it stops within
// cancelPoll). Applied calls stay applied (see Rollback). Any other run,
// or a cancellation that loses the race to the run's own end, is refused
// (ErrWrongState). Under an issuer only the run's starter cancels it
// (policy.Sees). The cancellation, or its refusal, is audited.
func (r *Runtime) Cancel(ctx context.Context, id, reason string) (_ codemode.Outcome, err error) {
	defer func() { r.audit(ctx, codemode.AuditRecord{Action: codemode.AuditCancel, ExecutionID: id}, err) }()
	e, done, err := r.openExecution(ctx, id, "cancelled", ownRun, codemode.StatusRunning, codemode.StatusPaused, codemode.StatusWaiting)
	if err != nil {
		return wrongOutcome(id, e), err
	}
	defer done()
	if e.Task == nil {
		return wrongOutcome(id, e), wrongState("execution %s was not started as a task; only a task can be cancelled", id)
	}
	from := e.Status
	e.Error = reason
	if from == codemode.StatusRunning && e.Owner != r.own.id {
		if why, gone := r.ownerGone(ctx, e); gone {
			// Nobody will settle what its pass left in flight: end it as
			// recovery does, cancelled.
			return r.cancelOrphan(ctx, e, why)
		}
	}
	if err := r.setStatus(ctx, e, from, codemode.StatusCancelled); err != nil {
		return r.lostRace(ctx, id, "cancelled", err)
	}
	wait := ctx
	ctx = context.WithoutCancel(ctx) // the decision is made; finish the job
	if from != codemode.StatusRunning {
		r.settleEnded(ctx, id, codemode.PersonFrom(ctx))
		r.dispose(ctx, id)
	} else {
		r.mu.Lock()
		lp := r.live[id]
		r.mu.Unlock()
		if lp != nil {
			// The pass stops at once (its program is interrupted, its
			// calls cancelled) and settles what it left undecided.
			lp.cancel(errCancelled)
			select {
			case <-lp.done:
			case <-wait.Done():
			}
		}
	}
	emit(ctx, codemode.Event{Kind: codemode.EventCancelled, ExecutionID: id, Message: reason})
	return r.outcome(ctx, e)
}

// cancelOrphan cancels running run e whose owner is gone (why) as
// recovery ends such a run (endRecovered), cancelled.
func (r *Runtime) cancelOrphan(ctx context.Context, e *codemode.Execution, why string) (codemode.Outcome, error) {
	ctx = context.WithoutCancel(ctx)
	msg := e.Error + "; its process was gone (" + why + "): calls that were in flight are marked unknown"
	if err := r.endRecovered(ctx, e, codemode.StatusRunning, codemode.StatusCancelled, e.Owner, msg); err != nil {
		return r.lostRace(ctx, e.ID, "cancelled", err)
	}
	emit(ctx, codemode.Event{Kind: codemode.EventCancelled, ExecutionID: e.ID, Message: e.Error})
	return r.outcome(ctx, e)
}

// cancelledMeanwhile ends a pass that could not record its end (err)
// because its run was cancelled meanwhile: the calls it left undecided are
// settled (unless it settled them itself) and the run disposed. It returns
// the run as stored, or nil when it was not cancelled.
func (r *Runtime) cancelledMeanwhile(ctx context.Context, e *codemode.Execution, leftover []codemode.Entry, settled bool, err error) *codemode.Execution {
	if !errors.Is(err, codemode.ErrConflict) {
		return nil
	}
	cur, err := r.store.GetExecution(ctx, e.ID)
	if err != nil || cur.Status != codemode.StatusCancelled {
		return nil
	}
	if !settled {
		r.settleEntries(ctx, cur.ID, leftover, codemode.Person{})
	}
	r.dispose(ctx, e.ID)
	return cur
}

// Await returns run id as stored once until reports true of it: at once
// when it already does, else when this process changes a run's status or
// every poll (another process's change; 0 means awaitPoll), until ctx
// ends. An unknown run, or under an issuer another's, is
// ErrUnknownExecution.
func (r *Runtime) Await(ctx context.Context, id string, poll time.Duration, until func(*codemode.Execution) bool) (*codemode.Execution, error) {
	if _, err := r.seen(ctx, id, ownRun); err != nil {
		return nil, err
	}
	return r.await(ctx, id, poll, until)
}

// await is Await for the runtime itself, whoever ctx carries.
func (r *Runtime) await(ctx context.Context, id string, poll time.Duration, until func(*codemode.Execution) bool) (*codemode.Execution, error) {
	t := time.NewTicker(positiveOr(poll, awaitPoll))
	defer t.Stop()
	for {
		r.mu.Lock()
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		changed := r.changed
		r.mu.Unlock()
		e, err := r.getExecution(ctx, id)
		if err != nil {
			return nil, err
		}
		if until(e) {
			return e, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		case <-t.C:
		}
	}
}

// Outcome is the outcome of run id as stored, whole: what the call that
// ran its last pass returned; running while a pass of it is in progress.
// An unknown run, or under an issuer another's, is ErrUnknownExecution.
func (r *Runtime) Outcome(ctx context.Context, id string) (codemode.Outcome, error) {
	e, err := r.seen(ctx, id, ownRun)
	if err != nil {
		return codemode.Outcome{}, err
	}
	return r.outcome(ctx, e)
}
