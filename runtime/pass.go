package runtime

import (
	"context"
	"errors"
	"fmt"
	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
	"github.com/codemode-mcp/codemode-mcp/internal/truncate"
	"sort"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// runPass runs the program of e (status running) once against its log (as
// the caller loaded it: nil for a fresh execution, just created by Execute)
// and records how the pass ended.
func (r *Runtime) runPass(ctx context.Context, e *codemode.Execution, ap codemode.Approver, log []codemode.Entry) (codemode.Outcome, error) {
	if e.Task != nil {
		var end func()
		ctx, end = r.track(ctx, e.ID)
		defer end()
	}
	p := newPass(r, e.ID, ap, modeRun, 0, log)
	out, runErr := r.exec.Run(ctx, sandbox.Program{
		Code:     e.Code,
		Globals:  p.cat.globals,
		Services: serviceList,
		Limits:   r.limitsOf(e),
		Clock:    sandbox.Clock(e.Clock),
		NoCheck:  r.noCheck,
	}, p)
	stop, flushErr := p.finish(ctx)
	return r.record(ctx, e, p, stop, flushErr, out, runErr)
}

// record stores the end of a pass: the clock, logs and connectors used, the
// new status, and the fate of entries the pass left undecided. Terminal
// outcomes dispose the execution. flushErr is the failure of the pass's
// final write of deferred results (finish): the run ends in error then,
// whatever the program did.
func (r *Runtime) record(ctx context.Context, e *codemode.Execution, p *pass, stop *stopReason, flushErr error, out sandbox.Outcome, runErr error) (codemode.Outcome, error) {
	ctx = context.WithoutCancel(ctx) // the pass happened; its end is recorded even if the caller gave up
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
		if fp, ok := p.cat.fingerprintOf(name); ok {
			if e.Connectors == nil {
				e.Connectors = map[string]string{}
			}
			e.Connectors[name] = fp
		}
	}
	leftover := p.leftoverLocked()
	p.mu.Unlock()

	var internal error
	to := codemode.StatusError
	e.Result, e.Error = nil, ""
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
		case stopReject:
			to, e.Error = codemode.StatusRejected, stop.msg
		case stopDiverge, stopQuota:
			e.Error = stop.msg
		default:
			internal = fmt.Errorf("execution %s: %w", e.ID, stop.err)
			e.Error = scrub.Paths(stop.msg)
		}
	case out.Status == sandbox.Completed:
		if missed := p.unreached(); len(missed) > 0 {
			e.Error = fmt.Sprintf("replay diverged: the program completed without reaching call %d, which the log has as %s; wrap non-deterministic code in codemode.step", missed[0].Seq, describeEntry(missed[0]))
			break
		}
		to, e.Result = codemode.StatusCompleted, rawOrNull(out.Result)
		if note := r.programResultTooLarge(out.Result); note != "" {
			// Nothing replays a program's result, so a cut copy is kept (and
			// shown) rather than failing a run whose calls all succeeded.
			e.Result = truncate.Value(out.Result, r.maxValue)
			e.Logs = append(e.Logs, "[warn] "+note)
		}
	case out.Status == sandbox.Failed:
		e.Error = out.Error
	default:
		e.Error = "the program was stopped"
		if out.Stop != nil {
			e.Error = out.Stop.Error()
		}
	}
	if to.Terminal() {
		r.settleLeftovers(ctx, e, leftover)
	}
	if err := r.setStatus(ctx, e, codemode.StatusRunning, to); err != nil {
		if errors.Is(err, codemode.ErrConflict) {
			if cur := r.cancelledMeanwhile(ctx, e, leftover, to.Terminal()); cur != nil {
				o, err := r.outcome(ctx, cur)
				return o, errors.Join(internal, err)
			}
		}
		return codemode.Outcome{ExecutionID: e.ID, Status: codemode.StatusRunning}, errors.Join(internal, err)
	}
	if to.Terminal() {
		r.dispose(ctx, e.ID)
	}
	if ev, ok := endEvent(e, to, stop); ok {
		emit(ctx, ev)
	}
	o, err := r.outcome(ctx, e)
	return o, errors.Join(internal, err)
}

// abort ends a run that could not get a pass started (the store failed):
// it is recorded as error if possible, and the error returned.
func (r *Runtime) abort(ctx context.Context, e *codemode.Execution, cause error) (codemode.Outcome, error) {
	ctx = context.WithoutCancel(ctx)
	e.Error = "internal failure: " + cause.Error()
	if err := r.setStatus(ctx, e, codemode.StatusRunning, codemode.StatusError); err != nil {
		return codemode.Outcome{ExecutionID: e.ID, Status: codemode.StatusRunning}, errors.Join(cause, err)
	}
	r.dispose(ctx, e.ID)
	o, _ := r.outcome(ctx, e)
	return o, cause
}

// leftoverLocked returns the entries a pass leaves undecided: calls still
// executing (their result never recorded), calls it logged pending, and
// logged entries the program did not reach that were executing or pending.
func (p *pass) leftoverLocked() []codemode.Entry {
	var out []codemode.Entry
	for _, e := range p.executing {
		out = append(out, e)
	}
	for _, e := range p.gated {
		out = append(out, e)
	}
	for seq, e := range p.entries {
		if p.visited[seq] {
			continue
		}
		if e.State == codemode.EntryExecuting || e.State.AwaitsPerson() {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// unreached returns logged entries the program did not reach, in seq order.
func (p *pass) unreached() []codemode.Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []codemode.Entry
	for seq, e := range p.entries {
		if !p.visited[seq] {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// settleLeftovers moves undecided entries of a run that is ending: an
// executing call whose result was never recorded becomes error, a pending
// one (or one awaiting a sign-in) rejected. Failures are logged; the run
// ends regardless.
func (r *Runtime) settleLeftovers(ctx context.Context, e *codemode.Execution, leftover []codemode.Entry) {
	for _, en := range leftover {
		var err error
		switch en.State {
		case codemode.EntryExecuting:
			en.Error = "not completed: the run ended before this call's result was recorded; it may or may not have taken effect"
			err = r.moveEntry(ctx, &en, codemode.EntryExecuting, codemode.EntryError)
		case codemode.EntryPending, codemode.EntrySignIn:
			err = r.moveEntry(ctx, &en, en.State, codemode.EntryRejected)
		}
		if err != nil {
			r.log.Warn("could not settle a log entry of an ending run", "execution", e.ID, "seq", en.Seq, "err", err)
		}
	}
}

// setStatus moves e from one status to another through TransitionExec and
// a conditional update; a claimed status (running, rolling_back) makes
// this process the run's owner, any other clears its owner. A conflict
// means another decider won (or the run was recovered).
func (r *Runtime) setStatus(ctx context.Context, e *codemode.Execution, from, to codemode.ExecStatus) error {
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
	e.Status, e.Owner, e.UpdatedAt = st, owner, r.now()
	r.scrubExecution(e)
	if err := r.store.UpdateExecution(ctx, e, from); err != nil {
		e.Status, e.Owner, e.UpdatedAt = prev, prevOwner, prevAt
		return fmt.Errorf("set execution %s %s -> %s: %w", e.ID, from, to, err)
	}
	r.changedStatus()
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

// outcome builds the Outcome of e as stored, cut to MaxResultChars (see
// visible); a paused run lists its pending actions.
func (r *Runtime) outcome(ctx context.Context, e *codemode.Execution) (codemode.Outcome, error) {
	o := codemode.Outcome{Status: e.Status, ExecutionID: e.ID, Error: e.Error, Logs: e.Logs}
	if e.Status == codemode.StatusCompleted {
		o.Result = rawOrNull(e.Result)
	}
	if e.Status == codemode.StatusPaused {
		pending, err := r.pendingOf(ctx, e.ID)
		if err != nil {
			return r.visible(o), err
		}
		o.Pending = pending
	}
	return r.visible(o), nil
}

// pendingOf lists the pending actions of one execution in seq order.
func (r *Runtime) pendingOf(ctx context.Context, id string) ([]codemode.PendingAction, error) {
	log, err := r.store.Entries(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load log of %s: %w", id, err)
	}
	return codemode.PendingActions(id, log), nil
}
