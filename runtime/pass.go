package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/internal/truncate"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"go.opentelemetry.io/otel/trace"
)

// runPass runs the program of c.e (status running) once against its log
// (c.log, as the caller loaded it: nil for a fresh execution, just created
// by Execute) and records how the pass ended. c.h is the caller's hold on
// the run (hold.go), which c.end lets go of once the pass has recorded its
// end. A pass of a task run can be cancelled (task.go). The pass's span is
// c.span, or one runPass starts (a resumed run's), and ends here.
func (r *Runtime) runPass(ctx context.Context, c *claimed, ap codemode.Approver) (_ codemode.Outcome, err error) {
	e := c.e
	defer c.end()
	if r.tracer != nil {
		if c.span == nil {
			ctx, c.span = r.startPass(ctx, e, passResume)
		} else {
			ctx = trace.ContextWithSpan(ctx, c.span)
		}
		defer func() { r.endPass(c.span, e, err) }()
	}
	limits := r.opts.Limits
	if e.Task != nil { // bounded by the task timeout, and cancellable (track)
		limits.Timeout = r.opts.TaskTimeout
		var end func()
		ctx, end = r.track(ctx, e.ID)
		defer end()
	}
	user, token := e.StartedBy.Subject, tokenOf(ctx, e.StartedBy.Subject)
	if token != "" {
		r.listForStarter(ctx, user)
	}
	p := newPass(r, &codemode.Execution{ID: e.ID, StartedBy: e.StartedBy}, ap, 0, 0, c.log)
	p.userToken = token
	out, runErr := p.runProgram(ctx, e.Code, limits, sandbox.Clock(e.Clock))
	stop, flushErr := p.finish(ctx)
	o, err := r.record(ctx, e, p, c.h, passEnd{stop: stop, flushErr: flushErr, out: out, runErr: runErr})
	if err == nil && o.Status == codemode.StatusPaused && p.userToken != "" {
		r.prepareCredentials(ctx, user, o.Pending)
	}
	return o, err
}

// listForStarter lists, before a pass on its starter's own request, the
// per-user connectors nobody could list yet for want of a sign-in, once
// the starter's credentials are ready (their request may ready them: a
// token exchange), so that their calls find the methods.
func (r *Runtime) listForStarter(ctx context.Context, user string) {
	for _, s := range r.catalog().Connectors() {
		if !s.Caps.PerUser || s.Caps.SignIner == nil || s.NeedsSignIn() == nil {
			continue
		}
		if why, err := s.Caps.SignIner.NeedsSignIn(forUser(ctx, user)); err != nil || why != nil {
			continue
		}
		if _, err := r.RefreshConnector(ctx, s.Name); err != nil {
			r.log.DebugContext(ctx, "a per-user connector could not be listed", "connector", s.Name, "err", err)
		}
	}
}

// prepareCredentials readies, while the starter's own request is at hand,
// the credentials of the per-user connectors whose calls the paused run
// awaits approval for (a token exchange, RFC 8693), so that the approval,
// made on another person's request, finds them. Failures are logged.
func (r *Runtime) prepareCredentials(ctx context.Context, user string, pending []codemode.PendingAction) {
	seen := map[string]bool{}
	for _, a := range pending {
		if a.Awaits == codemode.AwaitsSignIn || seen[a.Connector] {
			continue
		}
		seen[a.Connector] = true
		s := r.catalog().Connector(a.Connector)
		if s == nil || !s.Caps.PerUser || s.Caps.SignIner == nil {
			continue
		}
		if why, err := s.Caps.SignIner.NeedsSignIn(forUser(ctx, user)); err != nil || why != nil {
			r.log.DebugContext(ctx, "the starter's credentials for a pending call are not ready", "connector", a.Connector, "why", why, "err", err)
		}
	}
}

// passEnd is how a pass ended.
type passEnd struct {
	stop     *stopReason
	flushErr error // the failure of the pass's final write of deferred results (finish)
	out      sandbox.Outcome
	runErr   error // the executor's failure
}

// record stores the end of a pass (writeEnd) and returns the run's
// outcome. If the store does not take it, the run, still claimed here, is
// stranded (hold.go) with what the pass holds, to be written later.
func (r *Runtime) record(ctx context.Context, e *codemode.Execution, p *pass, h *hold, end passEnd) (codemode.Outcome, error) {
	ctx = context.WithoutCancel(ctx) // the pass happened; its end is recorded even if the caller gave up
	internal, err := r.writeEnd(ctx, e, p, end)
	if err != nil {
		if !errors.Is(err, codemode.ErrConflict) && !errors.Is(err, codemode.ErrNotFound) {
			h.strand(func(ctx context.Context) error { return r.writeEndAgain(ctx, e, p, end) })
			r.log.WarnContext(ctx, "the store did not record how a run ended; this process records it once the store answers again", "execution", e.ID, "err", err)
		}
		return codemode.Outcome{ExecutionID: e.ID, Status: codemode.StatusRunning}, errors.Join(internal, err)
	}
	o, err := r.outcome(ctx, e)
	return o, errors.Join(internal, err)
}

// writeEndAgain writes the end of a stranded pass: what it still holds
// queued, then its end as record would have (as an internal failure if
// the queue cannot be written).
func (r *Runtime) writeEndAgain(ctx context.Context, e *codemode.Execution, p *pass, end passEnd) error {
	p.mu.Lock()
	err := p.flushLocked(ctx)
	if err == nil {
		p.dropJournalLocked(ctx)
	}
	p.mu.Unlock()
	end.flushErr = err
	_, err = r.writeEnd(ctx, e, p, end)
	return err
}

// writeEnd decides the end of a pass and writes it: the clock, logs and
// connectors used, the new status, and the fate of the entries the pass
// left undecided; a terminal run is disposed. internal is the pass's own
// failure, err the store's failure to take the end. A pass whose log could
// not be written (end.flushErr, or a stopInternal) ends the run as
// recovery would (interrupt): a write that failed may have taken effect.
func (r *Runtime) writeEnd(ctx context.Context, e *codemode.Execution, p *pass, end passEnd) (internal, err error) {
	stop, flushErr, out, runErr := end.stop, end.flushErr, end.out, end.runErr
	if len(out.Clock.Times) >= len(e.Clock.Times) {
		e.Clock.Times = out.Clock.Times
	}
	clockErr := r.clockTooLarge(e.Clock)
	if clockErr != "" {
		e.Clock.Times = nil // the run ends in error: nothing replays it
	}
	if out.Logs != nil || runErr == nil {
		e.Logs = out.Logs
	}
	p.mu.Lock()
	for name := range p.used {
		if fp, ok := p.cat.Fingerprint(name); ok {
			if e.Connectors == nil {
				e.Connectors = map[string]string{}
			}
			e.Connectors[name] = fp
		}
	}
	leftover := p.leftoverLocked()
	p.mu.Unlock()

	to := codemode.StatusError
	e.Result, e.Error = nil, ""
	interrupted := flushErr != nil || (stop != nil && stop.kind == stopInternal && out.Status != sandbox.Completed)
	switch {
	case runErr != nil:
		internal = errors.Join(fmt.Errorf("run %s: %w", e.ID, runErr), flushErr)
		e.Error = "internal failure running the program: " + scrub.Paths(runErr.Error())
	case flushErr != nil:
		internal = fmt.Errorf("execution %s: %w", e.ID, flushErr)
		e.Error = "internal failure: " + scrub.Paths(flushErr.Error())
	case clockErr != "":
		e.Error = clockErr
	case stop != nil && out.Status != sandbox.Completed:
		// (A stop the host decided after the program had already completed —
		// a call it left floating — does not undo the completion: the
		// sandbox's first outcome wins and the leftover entry is settled.)
		switch stop.kind {
		case stopPause:
			to = codemode.StatusPaused
		case stopWait:
			to = codemode.StatusWaiting
		case stopReject:
			to, e.Error = codemode.StatusRejected, stop.msg
		case stopDiverge, stopQuota:
			e.Error = stop.msg
		default:
			internal = fmt.Errorf("execution %s: %w", e.ID, stop.err)
			e.Error = scrub.Paths(stop.msg)
		}
	case out.Status == sandbox.Completed:
		if missed, ok := p.firstUnreached(); ok {
			e.Error = fmt.Sprintf("replay diverged: the program completed without reaching call %d, which the log has as %s; wrap non-deterministic code in codemode.step", missed.Seq, describeEntry(missed))
			break
		}
		to, e.Result = codemode.StatusCompleted, rawOrNull(out.Result)
		if note := r.tooLarge(len(out.Result), "the program's result", "is", "it keeps a cut copy; return less, e.g. filter, summarise or paginate"); note != "" {
			// Nothing replays a program's result, so a cut copy is kept (and
			// shown) rather than failing a run whose calls all succeeded.
			e.Result, _ = truncate.Fit(out.Result, nil, r.maxValue)
			e.Logs = append(e.Logs, "[warn] "+note)
		}
	case out.Status == sandbox.Failed:
		// What the program threw, as the program made it: within the
		// per-value cap, as its result is (nothing replays it either).
		e.Error = short.Clip(out.Error, r.maxValue)
	default:
		e.Error = "the program was stopped"
		if out.Stop != nil {
			e.Error = out.Stop.Error()
		}
	}
	switch {
	case interrupted:
		if err := r.interrupt(ctx, e); err != nil {
			return internal, err
		}
	default:
		if to.Terminal() {
			r.settleEntries(ctx, e.ID, leftover, codemode.Person{})
		}
		if err := r.setStatus(ctx, e, codemode.StatusRunning, to); err != nil {
			if cur := r.cancelledMeanwhile(ctx, e, leftover, to.Terminal(), err); cur != nil {
				*e = *cur // the run stays cancelled, as the pass leaves it
				return internal, nil
			}
			return internal, err
		}
		if to.Terminal() {
			r.dispose(ctx, e.ID)
		}
		if to == codemode.StatusWaiting {
			r.watchWaiting(e.ID)
		}
	}
	if kind, ok := endEvents[e.Status]; ok {
		ev := codemode.Event{Kind: kind, ExecutionID: e.ID, Message: e.Error}
		if e.Status == codemode.StatusPaused && stop != nil {
			ev.Message = stop.msg // what it awaits
		}
		emit(ctx, ev)
	}
	return internal, nil
}

// interrupt ends a run this process claims whose log could not be written
// (the store failed), with e.Error, as recovery ends a dead owner's run
// (endRecovered): a write that failed may have taken effect, and a call
// whose result was not written may have run. ErrConflict if another
// process recovered it first.
func (r *Runtime) interrupt(ctx context.Context, e *codemode.Execution) error {
	if err := r.endRecovered(ctx, e, codemode.StatusRunning, codemode.StatusError, r.own.id, e.Error+"; calls that were in flight are marked unknown"); err != nil {
		return fmt.Errorf("end execution %s after a failure of the store: %w", e.ID, err)
	}
	return nil
}

// endRecovered ends run e, claimed by owner in status from, in status to
// with msg, as recovery does: in one transaction, if the store still
// shows it so, its calls still executing become unknown, its pending ones
// rejected, and it takes status to. Then e is as stored, and the run is
// disposed.
func (r *Runtime) endRecovered(ctx context.Context, e *codemode.Execution, from, to codemode.ExecStatus, owner, msg string) error {
	st, err := codemode.TransitionExec(from, to)
	if err != nil {
		return err
	}
	rec := &codemode.Execution{ID: e.ID, Status: st, Error: r.scrub.String(msg), UpdatedAt: r.stampAfter(e.UpdatedAt)}
	if err := r.store.RecoverExecution(ctx, rec, from, owner, unknownNote); err != nil {
		return err
	}
	e.Status, e.Error, e.Owner, e.UpdatedAt = rec.Status, rec.Error, "", rec.UpdatedAt
	r.statusSet(ctx, e, from, time.Time{})
	r.dispose(ctx, e.ID)
	return nil
}

// dispose tells every connector that holds per-execution resources that the
// execution reached a terminal status. It runs once per terminal transition
// (so a completed run that is later rolled back is disposed twice) and never
// on pause. Failures are logged.
func (r *Runtime) dispose(ctx context.Context, id string) {
	ctx = context.WithoutCancel(ctx)
	for _, s := range r.catalog().Connectors() {
		d := s.Caps.Disposer
		if d == nil {
			continue
		}
		if err := d.DisposeExecution(ctx, id); err != nil {
			r.log.WarnContext(ctx, "dispose failed", "connector", s.Name, "execution", id, "err", err)
		}
	}
}

// abort ends a run that could not get a pass started (the store failed)
// as interrupt does, and returns the cause; if that fails too, the run is
// left to this process's recovery (hold.go).
func (r *Runtime) abort(ctx context.Context, e *codemode.Execution, cause error) (codemode.Outcome, error) {
	ctx = context.WithoutCancel(ctx)
	e.Error = "internal failure: " + cause.Error()
	if err := r.interrupt(ctx, e); err != nil {
		return codemode.Outcome{ExecutionID: e.ID, Status: codemode.StatusRunning}, errors.Join(cause, err)
	}
	o, _ := r.outcome(ctx, e)
	return o, cause
}

// leftoverLocked returns the entries a pass leaves undecided: those it
// holds open, and logged entries the program did not reach that were
// executing, waiting or pending.
func (p *pass) leftoverLocked() []codemode.Entry {
	var out []codemode.Entry
	for _, e := range p.open {
		out = append(out, e)
	}
	for seq, e := range p.entries {
		if p.visited[seq] {
			continue
		}
		if e.State == codemode.EntryExecuting || e.State == codemode.EntryWaiting || e.State.AwaitsPerson() {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// firstUnreached returns the logged entry of lowest seq that the program
// did not reach (ok false: it reached them all).
func (p *pass) firstUnreached() (first codemode.Entry, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for seq, e := range p.entries {
		if !p.visited[seq] && (!ok || seq < first.Seq) {
			first, ok = e, true
		}
	}
	return first, ok
}

// settleEntries settles the entries of run id, which is ending, that are
// undecided (settleEntry; what awaits a person is rejected, decided by
// by). Failures are logged; the run ends regardless.
func (r *Runtime) settleEntries(ctx context.Context, id string, entries []codemode.Entry, by codemode.Person) {
	for _, en := range entries {
		if err := r.settleEntry(ctx, en, by); err != nil {
			r.log.WarnContext(ctx, "could not settle a log entry of an ending run", "execution", id, "seq", en.Seq, "err", err)
		}
	}
}

// settleEntry settles en, left undecided in a run that ends: a call
// executing whose result was never recorded ends error, one awaiting a
// person is rejected (decided by by; zero: by nobody), one waiting for
// its task ends error, its task cancelled at its source.
func (r *Runtime) settleEntry(ctx context.Context, en codemode.Entry, by codemode.Person) error {
	switch {
	case en.State == codemode.EntryExecuting:
		en.Error = "not completed: the run ended before this call's result was recorded; it may or may not have taken effect"
		return r.moveEntry(ctx, &en, codemode.EntryExecuting, codemode.EntryError)
	case en.State == codemode.EntryWaiting:
		if tk := r.taskerOf(en); tk != nil {
			r.cancelTask(ctx, tk, en, en.Task)
		}
		en.Error = fmt.Sprintf("not completed: the run ended while this call's task %s was working; the task was cancelled, and the call may or may not have taken effect", en.Task)
		return r.moveEntry(ctx, &en, codemode.EntryWaiting, codemode.EntryError)
	case !en.State.AwaitsPerson():
		return nil
	case !by.IsZero():
		en.DecidedBy, en.DecidedAt = by, r.now()
	}
	return r.moveEntry(ctx, &en, en.State, codemode.EntryRejected)
}

// setStatus moves e from one status to another through TransitionExec and
// a conditional update, stamped now (stampAfter); a claimed status (running,
// rolling_back) makes this process the run's owner, any other clears its
// owner. A conflict means another decider won (or the run was recovered).
func (r *Runtime) setStatus(ctx context.Context, e *codemode.Execution, from, to codemode.ExecStatus) error {
	return r.setStatusAt(ctx, e, from, to, r.stampAfter(e.UpdatedAt))
}

// stampAfter is now, or a nanosecond after prev, a run's stamp as read,
// when the clock has not moved past it: a clock that ticks coarsely
// (Windows' every 0.5 to 15.6 ms) or was set back. So a run that left a
// status and came back to it (paused again) never bears the stamp it had,
// which a decision that read it compares (UpdateExecution's since).
func (r *Runtime) stampAfter(prev time.Time) time.Time {
	if now := r.now(); now.After(prev) {
		return now
	}
	return prev.Add(time.Nanosecond)
}

// setStatusAt is setStatus stamped at: a claim given back (a refused
// approval) leaves the run as it was, paused since it paused.
func (r *Runtime) setStatusAt(ctx context.Context, e *codemode.Execution, from, to codemode.ExecStatus, at time.Time) error {
	st, err := codemode.TransitionExec(from, to)
	if err != nil {
		return err
	}
	owner := ""
	if st.Claimed() {
		if owner, err = r.own.claim(ctx); err != nil {
			return err
		}
	}
	prev, prevOwner, prevAt := e.Status, e.Owner, e.UpdatedAt
	e.Status, e.Owner, e.UpdatedAt = st, owner, at
	r.scrubExecution(e)
	if err := r.traceWrite(ctx, "codemode.store.execution", e.ID, func() error { return r.store.UpdateExecution(ctx, e, from, prevAt) }); err != nil {
		e.Status, e.Owner, e.UpdatedAt = prev, prevOwner, prevAt
		return fmt.Errorf("set execution %s %s -> %s: %w", e.ID, from, to, err)
	}
	r.statusSet(ctx, e, from, prevAt)
	return nil
}

// moveEntry moves a logged entry through Transition and a conditional
// update.
func (r *Runtime) moveEntry(ctx context.Context, e *codemode.Entry, from, to codemode.EntryState) error {
	st, err := codemode.Transition(from, to)
	if err != nil {
		return err
	}
	e.State, e.UpdatedAt = st, r.now()
	if err := r.store.UpdateEntry(context.WithoutCancel(ctx), *e, from); err != nil {
		return fmt.Errorf("set call %d of %s %s -> %s: %w", e.Seq, e.ExecutionID, from, to, err)
	}
	return nil
}

// outcome builds the Outcome of e as stored, scrubbed of secrets; a
// paused run lists its pending actions. Outcomes are whole: a surface
// cuts what it shows (the MCP server, to max_result_chars).
func (r *Runtime) outcome(ctx context.Context, e *codemode.Execution) (codemode.Outcome, error) {
	o := codemode.Outcome{Status: e.Status, ExecutionID: e.ID, Error: e.Error, Logs: e.Logs}
	if e.Status == codemode.StatusCompleted {
		o.Result = rawOrNull(e.Result)
	}
	if e.Status == codemode.StatusPaused {
		pending, err := r.pendingOf(ctx, e.ID)
		if err != nil {
			return r.scrubOutcome(o), err
		}
		o.Pending = pending
	}
	return r.scrubOutcome(o), nil
}

// pendingOf lists the pending actions of one execution in seq order. It
// reads the log without its values, then whole only the entries that
// await a person, each run of them in one read: a paused run's log may
// hold megabytes of results before the few calls it awaits.
func (r *Runtime) pendingOf(ctx context.Context, id string) ([]codemode.PendingAction, error) {
	heads, err := r.store.ClippedEntries(ctx, id, codemode.LogQuery{Preview: -1})
	if err != nil {
		return nil, fmt.Errorf("load log of %s: %w", id, err)
	}
	var awaiting []codemode.Entry
	for i := 0; i < len(heads); {
		if !heads[i].State.AwaitsPerson() {
			i++
			continue
		}
		j := i + 1
		for j < len(heads) && heads[j].State.AwaitsPerson() {
			j++
		}
		whole, err := r.store.ClippedEntries(ctx, id, codemode.LogQuery{After: heads[i].Seq - 1, Limit: j - i})
		if err != nil {
			return nil, fmt.Errorf("load log of %s: %w", id, err)
		}
		for _, en := range whole { // (PendingActions leaves out one decided meanwhile)
			awaiting = append(awaiting, en.Entry)
		}
		i = j
	}
	return codemode.PendingActions(id, awaiting), nil
}
