package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// Calls run as downstream tasks (docs/ARCHITECTURE.md, "Downstream
// tasks"). A tool its connector runs as a task of its source
// (connectors.Tasker) is called in three steps, each logged before the
// next: the call is decided as any other and written ahead; StartTask
// sends it, and the task's id is committed with the entry moved
// executing -> waiting (never only journaled: recovery applies a journal
// only over entries still executing), and the pass stops (stopWait) with
// the run waiting, owned by this process, holding no worker; the run's
// waiter (waitFor) reads the tasks every poll (the source's hint within
// [minTaskPoll, maxTaskPoll]) and, once they have all ended, resumes the
// run, whose replay reads each task (readTask) instead of calling the tool
// again.
//
// Tasks live in their server (a stdio server's process, an HTTP server's
// session), so the process that started them watches them; a serving
// process takes over a waiting run whose owner is gone (Join), and a task
// its server no longer knows (connectors.ErrUnknownTask) fails its call,
// which may or may not have taken effect.

// Bounds of how often a waiter reads a run's tasks: the source's hint is
// kept within them, defaultTaskPoll stands for no hint.
const (
	minTaskPoll     = 100 * time.Millisecond
	defaultTaskPoll = time.Second
	maxTaskPoll     = 30 * time.Second
)

// taskRequestTimeout bounds one request about a task outside a pass (a
// waiter's reading, a cancellation), so that a server that does not answer
// holds nothing up.
const taskRequestTimeout = 30 * time.Second

// startTask makes a decided call (logged executing) as a task of its
// source: its result when the source answered at once, else the task's
// id is committed and the pass stops to wait for it (see above).
func (p *pass) startTask(ctx context.Context, e codemode.Entry, t *catalog.Method, tk connectors.Tasker) (json.RawMessage, error) {
	st, err := tk.StartTask(ctx, t.Def.SourceName, e.Args)
	p.mu.Lock()
	logErr := p.writeGroupLocked(ctx, false)
	p.mu.Unlock()
	switch {
	case logErr != nil:
		if err == nil && st.ID != "" {
			p.r.cancelTask(ctx, tk, e, st.ID)
		}
		return nil, logErr
	case err != nil:
		return p.settle(ctx, e, connectors.Result{}, err)
	case st.Result != nil:
		return p.settle(ctx, e, *st.Result, nil)
	}
	// e moves to waiting with its task's id, committed at once with
	// everything queued.
	p.mu.Lock()
	defer p.mu.Unlock()
	e.Task = st.ID
	if err := p.commitLocked(ctx, &e, codemode.EntryExecuting, codemode.EntryWaiting); err != nil {
		// Nobody will ever read the task: stop it.
		p.r.cancelTask(ctx, tk, e, st.ID)
		return nil, err
	}
	p.open[e.Seq] = e
	return nil, p.stopLocked(stopWait, awaitsTask(e), nil)
}

// readTask answers a replayed call whose entry waits for its task: with
// the task's result once it has ended (recorded as a call's would be);
// while it works, or cannot be read for now, the pass stops to wait again.
// A task its source no longer knows fails the call.
func (p *pass) readTask(ctx context.Context, e codemode.Entry, t *catalog.Method) (json.RawMessage, error) {
	tk := t.Tasker()
	if tk == nil {
		return p.settle(ctx, e, connectors.Result{}, fmt.Errorf("its task %s cannot be read: connector %s no longer runs %s as a task; it may or may not have taken effect", e.Task, e.Connector, e.Method))
	}
	st, err := tk.PollTask(ctx, e.Task)
	switch {
	case errors.Is(err, connectors.ErrUnknownTask):
		return p.settle(ctx, e, connectors.Result{}, lostTask(e, err))
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("%s.%s: %w", e.Connector, e.Method, err)
	case err != nil:
		p.r.log.InfoContext(ctx, "could not read a call's downstream task; the run waits for it", "execution", e.ExecutionID, "seq", e.Seq, "task", e.Task, "err", err)
		return nil, p.stillWaiting(e)
	case !st.Ended:
		return nil, p.stillWaiting(e)
	}
	res, err := tk.TaskResult(ctx, e.Task)
	switch _, signIn := connectors.AsSignInRequired(err); {
	case errors.Is(err, connectors.ErrUnknownTask):
		err = lostTask(e, err)
	case signIn:
		// (Its task ended; its result waits for the sign-in.)
		p.r.log.InfoContext(ctx, "a call's downstream task cannot be read without a sign-in; the run waits for it", "execution", e.ExecutionID, "seq", e.Seq, "task", e.Task)
		return nil, p.stillWaiting(e)
	}
	// (A result that cannot be read otherwise is the call's failure: its
	// task has ended, so reading it again would fail again.)
	return p.settle(ctx, e, res, err)
}

// stillWaiting stops the pass at e, whose task has not ended.
func (p *pass) stillWaiting(e codemode.Entry) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopLocked(stopWait, awaitsTask(e), nil)
}

// lostTask is the failure of a call whose task its source does not know.
func lostTask(e codemode.Entry, err error) error {
	return fmt.Errorf("its task %s is no longer known to connector %s (its server was restarted, or the task expired): it may or may not have taken effect: %w", e.Task, e.Connector, err)
}

// awaitsTask is the stop message of a pass that waits for e's task.
func awaitsTask(e codemode.Entry) string { return entryRef(e) + " waits for its task " + e.Task }

// cancelTask asks e's connector to stop task id, which nothing will read;
// a failure is logged.
func (r *Runtime) cancelTask(ctx context.Context, tk connectors.Tasker, e codemode.Entry, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskRequestTimeout)
	defer cancel()
	if err := tk.CancelTask(ctx, id); err != nil {
		r.log.WarnContext(ctx, "could not cancel a call's downstream task", "execution", e.ExecutionID, "seq", e.Seq, "task", id, "err", err)
	}
}

// taskerOf returns the connector that runs e's call as a task, in the
// current catalog, or nil.
func (r *Runtime) taskerOf(e codemode.Entry) connectors.Tasker {
	s := r.catalog().Connector(e.Connector)
	if s == nil {
		return nil
	}
	return s.Caps.Tasker
}

// watchWaiting starts this process's waiter of run id (waitFor), unless
// it has one or is closing. The waiter is background work of the runtime:
// Close stops it and waits for it; the run stays waiting, for another
// process (or this one, started again) to take over.
func (r *Runtime) watchWaiting(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.waiters[id] {
		return
	}
	r.waiters[id] = true
	r.active.Add(1)
	go func() {
		defer r.active.Done()
		defer func() {
			r.mu.Lock()
			delete(r.waiters, id)
			r.mu.Unlock()
		}()
		r.waitFor(r.background, id)
	}()
}

// waitFor watches waiting run id until it no longer waits here or ctx
// ends: every poll (waitPoll) it reads the run and its calls' tasks, and
// resumes the run once they have all ended, or at once when its owner is
// gone (taken over).
func (r *Runtime) waitFor(ctx context.Context, id string) {
	for ctx.Err() == nil {
		next, more := r.waitPoll(ctx, id)
		if !more {
			return
		}
		if next == 0 {
			continue
		}
		// (A waiter is not woken by status changes: a cancellation made
		// here settles the run's calls itself, and it sees the run next.)
		select {
		case <-ctx.Done():
			return
		case <-time.After(next):
		}
	}
}

// waitPoll is one poll of run id's waiter: it returns whether the waiter
// goes on watching, and when to poll again (0: at once, the run having
// moved on). It reads the run brief (not its code and output, up to
// megabytes, at every poll); resumeWaiting reads whole the run it
// resumes. Another live process's run is left to it. A run ended while
// it waited has its calls' tasks cancelled here: only this process's
// session may know them.
func (r *Runtime) waitPoll(ctx context.Context, id string) (next time.Duration, more bool) {
	list, err := r.store.ListExecutions(ctx, codemode.ExecutionFilter{ID: id, Brief: true})
	switch {
	case err != nil:
		if ctx.Err() == nil {
			r.log.WarnContext(ctx, "reading a waiting run failed; trying again", "execution", id, "err", err)
		}
		return defaultTaskPoll, true
	case len(list) == 0:
		return 0, false
	}
	switch e := list[0]; {
	case e.Status == codemode.StatusCancelled || e.Status == codemode.StatusRejected:
		r.cancelTasksOf(ctx, id)
		return 0, false
	case e.Status != codemode.StatusWaiting:
		return 0, false
	case e.Owner != r.own.id:
		if _, gone := r.ownerGone(ctx, e); !gone {
			return 0, false // its owner watches it
		}
		if r.resumeWaiting(ctx, e, "its owner is gone") {
			return 0, true
		}
	default:
		if next = r.taskPoll(ctx, id); next > 0 {
			return next, true
		}
		if r.resumeWaiting(ctx, e, "its tasks ended") {
			return 0, true
		}
	}
	return defaultTaskPoll, true
}

// cancelTasksOf cancels, at their sources, the tasks of run id's calls
// that were waiting when it ended (they end error) or still wait;
// cancelling one that has ended, or that a source does not know, is
// harmless.
func (r *Runtime) cancelTasksOf(ctx context.Context, id string) {
	heads, err := r.store.ClippedEntries(ctx, id, codemode.LogQuery{Preview: -1}) // (no values: the states and task ids)
	if err != nil {
		r.log.WarnContext(ctx, "could not load the log to cancel the tasks of an ended run", "execution", id, "err", err)
		return
	}
	for _, h := range heads {
		en := h.Entry
		if tk := r.taskerOf(en); tk != nil && en.Task != "" && (en.State == codemode.EntryWaiting || en.State == codemode.EntryError) {
			r.cancelTask(ctx, tk, en, en.Task)
		}
	}
}

// taskPoll reads the task of every call of run id that waits for one and
// returns when to read them again: 0 once every task has ended or can no
// longer be read (which the replay records).
func (r *Runtime) taskPoll(ctx context.Context, id string) (poll time.Duration) {
	heads, err := r.store.ClippedEntries(ctx, id, codemode.LogQuery{Preview: -1}) // (no values: the states and task ids)
	if err != nil {
		if ctx.Err() == nil {
			r.log.WarnContext(ctx, "reading a waiting run's log failed; trying again", "execution", id, "err", err)
		}
		return defaultTaskPoll
	}
	for _, h := range heads {
		en := h.Entry
		if en.State != codemode.EntryWaiting {
			continue
		}
		tk := r.taskerOf(en)
		if tk == nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, taskRequestTimeout)
		st, err := tk.PollTask(rctx, en.Task)
		cancel()
		switch {
		case errors.Is(err, connectors.ErrUnknownTask), err == nil && st.Ended:
			continue
		case err != nil:
			if ctx.Err() == nil {
				r.log.InfoContext(ctx, "could not read a call's downstream task; trying again", "execution", id, "seq", en.Seq, "task", en.Task, "err", err)
			}
		}
		next := st.PollInterval
		if next <= 0 {
			next = defaultTaskPoll
		}
		if poll == 0 || next < poll {
			poll = next
		}
	}
	if poll == 0 {
		return 0
	}
	return min(max(poll, minTaskPoll), maxTaskPoll)
}

// resumeWaiting claims waiting run e, as read brief (waiting -> running;
// why is for the log), and runs its pass in the background, replaying its
// log. A run whose connectors changed while it waited cannot be replayed:
// it ends error. It reports whether the run moved on (here or by
// another); false when it could not be claimed (the store failed), to be
// tried again.
func (r *Runtime) resumeWaiting(ctx context.Context, brief *codemode.Execution, why string) bool {
	done, err := r.begin()
	if err != nil {
		return false
	}
	defer done()
	e, err := r.store.GetExecution(ctx, brief.ID) // (whole: it is written back)
	switch {
	case errors.Is(err, codemode.ErrNotFound):
		return true
	case err != nil:
		if ctx.Err() == nil {
			r.log.WarnContext(ctx, "reading a waiting run failed; trying again", "execution", brief.ID, "err", err)
		}
		return false
	case e.Status != brief.Status || !e.UpdatedAt.Equal(brief.UpdatedAt):
		return true // it moved on since it was read
	}
	if changed := r.catalog().Changed(e.Connectors); len(changed) > 0 {
		msg := fmt.Sprintf("the connectors it used changed while it waited for its calls' tasks: %v; replaying it could call the wrong tools", changed)
		if err := r.endIdle(ctx, e, codemode.StatusError, msg, codemode.Person{}); err != nil {
			return errors.Is(err, codemode.ErrConflict)
		}
		emit(ctx, codemode.Event{Kind: codemode.EventFailed, ExecutionID: e.ID, Message: e.Error})
		return true
	}
	h, err := r.own.claims.take(ctx, e.ID)
	if err != nil {
		return false
	}
	defer h.release()
	if err := r.setStatus(ctx, e, e.Status, codemode.StatusRunning); err != nil {
		if errors.Is(err, codemode.ErrConflict) {
			return true // another moved it first
		}
		if ctx.Err() == nil {
			r.log.WarnContext(ctx, "could not resume a waiting run", "execution", e.ID, "err", err)
		}
		return false
	}
	r.log.DebugContext(ctx, "resuming a waiting run", "execution", e.ID, "why", why)
	log, err := r.store.Entries(ctx, e.ID)
	if err != nil {
		_, _ = r.abort(ctx, e, fmt.Errorf("load log of %s: %w", e.ID, err))
		return true
	}
	r.backgroundPass(ctx, &claimed{e: e, h: h, log: log, end: h.release})
	return true
}

// settled returns out, the outcome of a pass of a run that is not a task,
// once the run no longer runs nor waits: a run waiting for its calls'
// tasks is awaited for at most Limits.Timeout, until ctx ends or the
// runtime closes, and is otherwise returned waiting, going on. (A caller
// that can wait longer starts the run as a task.) Whoever made the pass
// waits, the run's approver as its starter.
func (r *Runtime) settled(ctx context.Context, out codemode.Outcome, err error) (codemode.Outcome, error) {
	if err != nil || out.Status != codemode.StatusWaiting {
		return out, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Limits.WithDefaults().Timeout)
	defer cancel()
	defer context.AfterFunc(r.background, cancel)()
	e, aerr := r.await(ctx, out.ExecutionID, 0, func(e *codemode.Execution) bool {
		return e.Status != codemode.StatusWaiting && e.Status != codemode.StatusRunning
	})
	if aerr != nil {
		return out, nil
	}
	return r.outcome(context.WithoutCancel(ctx), e)
}
