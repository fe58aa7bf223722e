package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"go.opentelemetry.io/otel/trace"
)

// Execute runs a new program, after the housekeeping (MaxExecutions,
// PausedTTL) when it is due. The outcome is completed, error (a script
// failure is an outcome, not a Go error), paused (Pending lists what
// awaits a person) or rejected. ap (nil: none) is asked about calls that
// need approval before the run pauses. A run that waits for downstream
// tasks is awaited (settled).
func (r *Runtime) Execute(ctx context.Context, code string, ap codemode.Approver) (codemode.Outcome, error) {
	c, out, err := r.create(ctx, code, nil)
	if c == nil {
		return out, err
	}
	return r.passNow(ctx, c, ap)
}

// passNow runs the pass of a claimed run within the request and returns
// its outcome once settled, as the person ctx carries may be told it.
func (r *Runtime) passNow(ctx context.Context, c *claimed, ap codemode.Approver) (codemode.Outcome, error) {
	out, err := r.runPass(ctx, c, ap)
	out, err = r.settled(ctx, out, err)
	return r.shown(ctx, c.e, out), err
}

// A claimed run is a run a request has claimed for a pass: the hold on it
// (hold.go), and end, which lets go of the hold and ends the request (see
// begin) once the pass has recorded how it ended (runPass calls it).
type claimed struct {
	e   *codemode.Execution
	h   *hold
	log []codemode.Entry // what the pass replays
	end func()
	// span is the pass's span, started with the claim (nil: runPass
	// starts one, or tracing is off).
	span trace.Span
}

// create begins a request (begin) and creates the execution of a new
// program (a task when task is set), after the checks made before
// anything is stored (its size, the type check) and the housekeeping.
// Without a run, the program was refused (out says why) or err failed.
func (r *Runtime) create(ctx context.Context, code string, task *codemode.Task) (*claimed, codemode.Outcome, error) {
	done, err := r.begin()
	if err != nil {
		return nil, codemode.Outcome{}, err
	}
	refuse := func(out codemode.Outcome, err error) (*claimed, codemode.Outcome, error) {
		done()
		return nil, out, err
	}
	if max := r.opts.Limits.WithDefaults().MaxCodeBytes; len(code) > max {
		// Refused before an execution exists: a rejected program stores
		// nothing.
		return refuse(codemode.Outcome{Status: codemode.StatusError, Error: fmt.Sprintf("code is too large: %s, limit %s; nothing was run", short.Bytes(int64(len(code))), short.Bytes(int64(max)))}, nil)
	}
	if r.opts.TypeCheck != nil {
		if o, refused := r.typeCheckProgram(ctx, code); refused {
			return refuse(o, nil)
		}
	}
	now := r.now()
	if r.housekeepingDue(now) {
		r.housekeeping(ctx)
	}

	e := &codemode.Execution{
		ID:         newID("exec_"),
		Code:       code,
		Clock:      codemode.Clock{Seed: rand.Int64()}, // Math.random's seed
		Connectors: map[string]string{},
		Task:       task,
		StartedBy:  codemode.PersonFrom(ctx),
		CreatedAt:  now,
		UpdatedAt:  now,
	}
	if e.Status, err = codemode.TransitionExec(0, codemode.StatusRunning); err != nil {
		return refuse(codemode.Outcome{}, err)
	}
	if e.Owner, err = r.own.claim(ctx); err != nil {
		return refuse(codemode.Outcome{}, err)
	}
	h, err := r.own.claims.take(ctx, e.ID)
	if err != nil {
		return refuse(codemode.Outcome{}, err)
	}
	// The run's span begins before the execution is stored, which keeps
	// its traceparent (Execution.Trace) for the later passes to link to.
	sctx, span := r.startPass(ctx, e, passRun)
	if err := r.traceWrite(sctx, "codemode.store.execution", e.ID, func() error { return r.store.CreateExecution(ctx, e) }); err != nil {
		h.release()
		err = fmt.Errorf("create execution: %w", err)
		r.endPass(span, e, err)
		return refuse(codemode.Outcome{}, err)
	}
	r.audit(ctx, codemode.AuditRecord{Action: codemode.AuditRun, ExecutionID: e.ID}, nil)
	emit(ctx, codemode.Event{Kind: codemode.EventStarted, ExecutionID: e.ID})
	return &claimed{e: e, h: h, span: span, end: func() { h.release(); done() }}, codemode.Outcome{}, nil
}

// Approve approves every pending action of a paused run and resumes it by
// replay: the program runs again from the start with its recorded clock,
// logged results replayed, the approved calls made. Another run, or a
// second approval racing this one, gets ErrWrongState and nothing
// changes; a run whose connectors changed gets ErrConnectorsChanged and
// stays paused.
func (r *Runtime) Approve(ctx context.Context, id string, ap codemode.Approver) (codemode.Outcome, error) {
	c, out, err := r.claimApproved(ctx, id, codemode.Review{})
	if c == nil {
		return out, err
	}
	return r.passNow(ctx, c, ap)
}

// claimApproved makes the decision of Approve and Resume: it claims the
// paused run, moves its pending actions on and returns it with the log the
// resuming pass replays. Without a run, the approval was refused (the run
// stays as it was) or failed (the run ended in error). With rv.Digest set
// (a person was shown the pending actions), the actions pending once the
// run is claimed must have that digest (codemode.PendingDigest), else the
// run stays paused and the error wraps ErrNotAsShown: the check is made
// after the claim, so no other decision can slip in between. Under an issuer
// the person must be allowed to approve every action pending once the run
// is claimed (policy.MayApprove). The decision, or its refusal, is
// audited.
func (r *Runtime) claimApproved(ctx context.Context, id string, rv codemode.Review) (_ *claimed, _ codemode.Outcome, err error) {
	rec := codemode.AuditRecord{Action: codemode.AuditApprove, ExecutionID: id}
	defer func() { r.audit(ctx, rec, err) }()
	e, done, err := r.openExecution(ctx, id, "approved", pendingOfRun, codemode.StatusPaused)
	if err != nil {
		return nil, wrongOutcome(id, e), err
	}
	var h *hold
	ok := false
	sctx, span := r.startPass(ctx, e, passReplay)
	defer func() {
		if !ok {
			if h != nil {
				h.release()
			}
			done()
			r.endPass(span, e, err)
		}
	}()
	fail := func(out codemode.Outcome, err error) (*claimed, codemode.Outcome, error) {
		return nil, out, err
	}
	if changed := r.catalog().Changed(e.Connectors); len(changed) > 0 {
		return fail(wrongOutcome(id, e), refusal(codemode.ErrConnectorsChanged, "execution %s cannot be approved: connectors it used changed since it paused: %s; replaying it could call the wrong tools, so reject it and run the program again",
			id, strings.Join(changed, ", ")))
	}
	if who := codemode.PrincipalFrom(ctx); who != nil {
		// The policy is asked before the claim too, so that an approval it
		// refuses leaves the run untouched: claiming it and giving it back
		// would hide it meanwhile from an approver deciding it, and tell
		// whoever follows it (a task's tasks/result, which asks its starter
		// again) of a change that is none. Asked again once claimed: what
		// is pending may have moved on in between.
		pending, err := r.pendingOf(ctx, id)
		if err == nil {
			err = r.opts.Policy.MayApprove(who, e, pending)
		}
		if err != nil {
			rec.Target = targets(pending)
			return fail(wrongOutcome(id, e), err)
		}
	}
	if h, err = r.own.claims.take(ctx, id); err != nil {
		return fail(wrongOutcome(id, e), err)
	}
	pausedAt := e.UpdatedAt
	if err := r.setStatus(sctx, e, codemode.StatusPaused, codemode.StatusRunning); err != nil {
		return fail(r.lostRace(ctx, id, "approved", err))
	}
	log, err := r.store.Entries(ctx, id)
	if err != nil {
		return fail(r.abort(ctx, e, fmt.Errorf("load log of %s: %w", id, err)))
	}
	// refuse gives the claim back: the run waits, as it was (paused since
	// pausedAt, which its expiry counts from), for a decision about what
	// is pending now.
	refuse := func(why error) (*claimed, codemode.Outcome, error) {
		if err := r.setStatusAt(context.WithoutCancel(ctx), e, codemode.StatusRunning, codemode.StatusPaused, pausedAt); err != nil {
			return fail(r.abort(ctx, e, fmt.Errorf("return %s to paused after a refused approval: %w", id, err)))
		}
		return fail(wrongOutcome(id, e), why)
	}
	pending := codemode.PendingActions(id, log)
	rec.Target = targets(pending)
	if r.expired(pausedAt, e.UpdatedAt) {
		// Housekeeping expires paused runs only as new runs begin; an
		// approval does not wait for it. Checked once claimed, on the
		// claim's clock; an expiry that listed the run before the claim
		// cannot end it after this pass paused it again, whatever its
		// clock, since the pause it read has changed (UpdateExecution's
		// since).
		_, out, err := refuse(wrongState("execution %s could not be approved: it expired after %s paused without approval", id, r.opts.PausedTTL))
		if xerr := r.expire(context.WithoutCancel(ctx), e); xerr == nil {
			out.Status = e.Status
		} else if !errors.Is(xerr, codemode.ErrConflict) {
			r.log.WarnContext(ctx, "expiring a paused execution failed", "execution", id, "err", xerr)
		}
		return nil, out, err
	}
	if err := r.opts.Policy.MayApprove(codemode.PrincipalFrom(ctx), e, pending); err != nil {
		return refuse(err)
	}
	if rv.Digest != "" && codemode.PendingDigest(pending) != rv.Digest {
		return refuse(notAsShown(id, "approved"))
	}
	// Every pending action moves to executing in one transaction; a call
	// that awaited a sign-in moves on only once the person has signed in
	// (see afterSignIn). The pass replays the log as it is now, so it is
	// updated in place.
	var approved []codemode.EntryUpdate
	for i, en := range log {
		to, note := codemode.EntryExecuting, ""
		switch en.State {
		case codemode.EntryPending:
		case codemode.EntrySignIn:
			var err error
			if to, note, err = r.afterSignIn(ctx, e.StartedBy.Subject, en); err != nil {
				if codemode.IsRefusal(err) {
					return refuse(err)
				}
				return fail(r.abort(ctx, e, err))
			}
		default:
			continue
		}
		if log[i].State, err = codemode.Transition(en.State, to); err != nil {
			return fail(r.abort(ctx, e, err))
		}
		log[i].UpdatedAt, log[i].Error = r.now(), note
		r.decided(ctx, &log[i])
		approved = append(approved, codemode.EntryUpdate{Entry: log[i], From: en.State})
	}
	emit(ctx, codemode.Event{Kind: codemode.EventApproved, ExecutionID: id})
	if err := r.traceWrite(sctx, "codemode.store.write", id, func() error { return r.store.WriteEntries(context.WithoutCancel(ctx), nil, approved) }); err != nil {
		return fail(r.abort(ctx, e, fmt.Errorf("approve the pending actions of %s: %w", id, err)))
	}
	if r.opts.Metrics != nil {
		r.opts.Metrics.ApprovalDecided(ctx, "approved", e.UpdatedAt.Sub(pausedAt))
	}
	ok = true
	return &claimed{e: e, h: h, log: log, span: span, end: func() { h.release(); done() }}, codemode.Outcome{}, nil
}

// afterSignIn decides where a call that awaited a sign-in goes when its
// run is approved: executing; pending when its method (as listed now,
// after listing a connector that could not list its tools before) needs
// an approval not given yet; rejected, with the reason as note, when the
// connector refuses it. The error wraps ErrNeedsSignIn while the
// connector still needs a sign-in for user, the run's starter, whose
// credentials the call carries (another's sign-in does not count).
func (r *Runtime) afterSignIn(ctx context.Context, user string, en codemode.Entry) (to codemode.EntryState, note string, err error) {
	ctx = forUser(ctx, user)
	s := r.catalog().Connector(en.Connector)
	if s == nil {
		return 0, "", refusal(codemode.ErrConnectorsChanged, "execution %s cannot be approved: its call %d awaits a sign-in to connector %s, which is no longer configured", en.ExecutionID, en.Seq, en.Connector)
	}
	why := s.NeedsSignIn()
	if si := s.Caps.SignIner; si != nil {
		var err error
		if why, err = si.NeedsSignIn(ctx); err != nil {
			return 0, "", fmt.Errorf("ask connector %s whether it needs a sign-in: %w", en.Connector, err)
		}
	}
	if why != nil {
		return 0, "", r.stillNeedsSignIn(en, why)
	}
	if s.NeedsSignIn() != nil {
		if _, err := r.RefreshConnector(ctx, en.Connector); err != nil {
			if sir, ok := connectors.AsSignInRequired(err); ok {
				return 0, "", r.stillNeedsSignIn(en, sir)
			}
			return 0, "", refusal(codemode.ErrNeedsSignIn, "execution %s cannot be approved yet: connector %s could not list its tools after the sign-in: %v", en.ExecutionID, en.Connector, r.scrub.Error(err))
		}
	}
	t, rerr := r.catalog().Resolve(en.Connector, en.Method)
	if rerr != nil || t.SignIn != nil {
		// (A method the connector does not list fails on replay, naming
		// the methods it has.)
		return codemode.EntryExecuting, "", nil
	}
	switch v, aerr := t.Approval(en.Args); {
	case aerr != nil:
		return codemode.EntryRejected, fmt.Sprintf("%s.%s: %s", en.Connector, en.Method, r.connectorRefusal(aerr)), nil
	case v.Why != catalog.NoApproval:
		return codemode.EntryPending, "", nil
	}
	return codemode.EntryExecuting, "", nil
}

// stillNeedsSignIn is the refusal of an approval of a run whose call en
// awaits a sign-in that has not happened. The reason is the connector's
// (it may quote its server) and is scrubbed: a refusal reaches the
// person as it is written.
func (r *Runtime) stillNeedsSignIn(en codemode.Entry, why *connectors.SignInRequired) error {
	return refusal(codemode.ErrNeedsSignIn, "execution %s waits for a sign-in (call %d, %s.%s): %v; sign in first (`codemode-mcp login %s`, or the approval console's Sign in button), then approve it",
		en.ExecutionID, en.Seq, en.Connector, en.Method, r.scrub.Error(why), en.Connector)
}

// Reject rejects a paused run: its pending actions become rejected (with
// seq > 0 that action must be pending; the others are rejected too, since
// the run ends) and the run ends rejected. Applied actions stay applied
// (see Rollback).
func (r *Runtime) Reject(ctx context.Context, id string, seq int) (codemode.Outcome, error) {
	return r.RejectReviewed(ctx, id, seq, codemode.Review{})
}

// RejectReviewed is Reject for a person who was shown the pending
// actions: with rv.Digest set, the actions pending must have that digest
// (else ErrNotAsShown, and nothing changes), and rv.Reason is added to the
// run's error. Under an issuer the person must be the run's starter or
// allowed to decide every pending action (policy.MayReject). The
// decision, or its refusal, is audited.
func (r *Runtime) RejectReviewed(ctx context.Context, id string, seq int, rv codemode.Review) (_ codemode.Outcome, err error) {
	rec := codemode.AuditRecord{Action: codemode.AuditReject, ExecutionID: id, Seq: seq}
	defer func() { r.audit(ctx, rec, err) }()
	e, done, err := r.openExecution(ctx, id, "rejected", pendingOfRun, codemode.StatusPaused)
	if err != nil {
		return wrongOutcome(id, e), err
	}
	defer done()
	msg := "rejected by the user"
	if who := codemode.PrincipalFrom(ctx); who != nil {
		msg = "rejected by " + who.Display()
	}
	pending, err := r.pendingOf(ctx, id)
	if err != nil {
		return codemode.Outcome{}, err
	}
	rec.Target = targets(pending)
	if err := r.opts.Policy.MayReject(codemode.PrincipalFrom(ctx), e, pending); err != nil {
		return wrongOutcome(id, e), err
	}
	if rv.Digest != "" && codemode.PendingDigest(pending) != rv.Digest {
		return wrongOutcome(id, e), notAsShown(id, "rejected")
	}
	if seq != 0 {
		i := slices.IndexFunc(pending, func(a codemode.PendingAction) bool { return a.Seq == seq })
		if i < 0 {
			seqs := make([]string, len(pending))
			for i, a := range pending {
				seqs[i] = fmt.Sprint(a.Seq)
			}
			return wrongOutcome(id, e), wrongState("execution %s has no pending action %d (pending: %s)", id, seq, catalog.ListOrNone(seqs))
		}
		msg = fmt.Sprintf("call %d (%s.%s) was %s", seq, pending[i].Connector, pending[i].Method, msg)
	}
	if reason := reviewReason(rv.Reason); reason != "" {
		msg += ": " + reason
	}
	if err := r.endIdle(ctx, e, codemode.StatusRejected, msg, codemode.PersonFrom(ctx)); err != nil {
		return r.lostRace(ctx, id, "rejected", err)
	}
	out, err := r.outcome(ctx, e)
	return r.shown(ctx, e, out), err
}

// endIdle ends run e, which no pass holds (paused, or waiting for its
// calls' tasks), in status to with msg: the status first (the conditional
// update decides races), then its pending entries (decided by by; zero:
// by nobody, an expiry) and the calls still waiting for their downstream
// tasks; then the run is disposed.
func (r *Runtime) endIdle(ctx context.Context, e *codemode.Execution, to codemode.ExecStatus, msg string, by codemode.Person) error {
	e.Error = msg
	if err := r.setStatus(ctx, e, e.Status, to); err != nil {
		return err
	}
	r.settleEnded(ctx, e.ID, by)
	r.dispose(ctx, e.ID)
	return nil
}

// settleEnded settles what run id, which is ending, left undecided in its
// log as stored (settleEntries); a failure to load it is logged.
func (r *Runtime) settleEnded(ctx context.Context, id string, by codemode.Person) {
	log, err := r.store.Entries(ctx, id)
	if err != nil {
		r.log.WarnContext(ctx, "could not load the log to settle an ending run", "execution", id, "err", err)
		return
	}
	r.settleEntries(ctx, id, log, by)
}

// lostRace turns a failed conditional status update into the right error:
// ErrWrongState when another decider moved the run first, else the
// internal failure.
func (r *Runtime) lostRace(ctx context.Context, id, verb string, err error) (codemode.Outcome, error) {
	if !errors.Is(err, codemode.ErrConflict) {
		return codemode.Outcome{ExecutionID: id}, err
	}
	status := "is no longer paused"
	if cur, gerr := r.store.GetExecution(ctx, id); gerr == nil {
		status = inState(cur.Status) + " meanwhile"
	}
	return codemode.Outcome{ExecutionID: id}, wrongState("execution %s could not be %s: it %s (another request decided it first)", id, verb, status)
}

// housekeepingDue counts an Execute at now and reports whether it does
// the housekeeping: the first Execute does, a later one once the interval
// passed or MaxExecutions runs began since (so at most about twice
// MaxExecutions terminal runs are kept, however fast runs come); when it
// does, the interval starts again.
func (r *Runtime) housekeepingDue(now time.Time) bool {
	if r.opts.MaxExecutions <= 0 && r.opts.PausedTTL <= 0 && r.opts.AuditRetention <= 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hkRuns++
	due := r.hkEvery < 0 || r.hkLast.IsZero() || now.Sub(r.hkLast) >= r.hkEvery || (r.opts.MaxExecutions > 0 && r.hkRuns > r.opts.MaxExecutions)
	if due {
		r.hkLast, r.hkRuns = now, 0
	}
	return due
}

// housekeeping prunes audit records older than AuditRetention and
// terminal runs beyond MaxExecutions, and expires paused runs older than
// PausedTTL. Failures are logged: they must not block a run.
func (r *Runtime) housekeeping(ctx context.Context) {
	pruned := func(what string, n int, err error) {
		if err != nil {
			r.log.WarnContext(ctx, "pruning "+what+" failed", "err", err)
		} else if n > 0 {
			r.log.DebugContext(ctx, "pruned "+what, "count", n)
		}
	}
	if r.opts.AuditRetention > 0 {
		n, err := r.store.PruneAudit(ctx, r.now().Add(-r.opts.AuditRetention))
		pruned("old audit records", n, err)
	}
	if r.opts.MaxExecutions > 0 {
		n, err := r.store.PruneExecutions(ctx, r.opts.MaxExecutions)
		pruned("old executions", n, err)
	}
	if r.opts.PausedTTL <= 0 {
		return
	}
	// Brief: when each was last updated is what its expiry needs; a run that
	// expires is read whole, which its end writes back (endIdle).
	paused, err := r.store.ListExecutions(ctx, codemode.ExecutionFilter{Status: codemode.StatusPaused, Brief: true})
	if err != nil {
		r.log.WarnContext(ctx, "listing paused executions for expiry failed", "err", err)
		return
	}
	now := r.now()
	for _, b := range paused {
		if !r.expired(b.UpdatedAt, now) {
			continue
		}
		e, err := r.store.GetExecution(ctx, b.ID)
		if err == nil && (e.Status != codemode.StatusPaused || !r.expired(e.UpdatedAt, now)) {
			continue // decided meanwhile
		}
		if err == nil {
			err = r.expire(ctx, e)
		}
		switch {
		case errors.Is(err, codemode.ErrConflict), errors.Is(err, codemode.ErrNotFound): // decided or deleted meanwhile
		case err != nil:
			r.log.WarnContext(ctx, "expiring a paused execution failed", "execution", b.ID, "err", err)
		default:
			r.log.InfoContext(ctx, "paused execution expired", "execution", b.ID)
		}
	}
}

// expired reports whether a run paused since pausedAt has expired at now
// (Options.PausedTTL).
func (r *Runtime) expired(pausedAt, now time.Time) bool {
	return r.opts.PausedTTL > 0 && now.Sub(pausedAt) > r.opts.PausedTTL
}

// expire ends paused run e, expired, rejected by nobody (endIdle).
func (r *Runtime) expire(ctx context.Context, e *codemode.Execution) error {
	return r.endIdle(ctx, e, codemode.StatusRejected, fmt.Sprintf("expired after %s paused without approval", r.opts.PausedTTL), codemode.Person{})
}

// openExecution begins a request (begin) on run id, which the person ctx
// carries must reach as a says and which must be in one of the allowed
// statuses. On error, the run is returned when it was found and visible.
func (r *Runtime) openExecution(ctx context.Context, id, action string, a access, allowed ...codemode.ExecStatus) (*codemode.Execution, func(), error) {
	done, err := r.begin()
	if err != nil {
		return nil, nil, err
	}
	e, err := r.getExecution(ctx, id)
	if err == nil {
		err = r.visible(ctx, e, a)
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	if !slices.Contains(allowed, e.Status) {
		done()
		names := make([]string, len(allowed))
		for i, st := range allowed {
			names[i] = st.String()
			if st == codemode.StatusError {
				names[i] = "failed" // "a failed execution", not "an error execution"
			}
		}
		return e, nil, wrongState("execution %s %s; only a %s execution can be %s", id, inState(e.Status), short.OrList(names), action)
	}
	return e, done, nil
}

// wrongOutcome is the outcome returned with a refused request: the
// execution's id and, when it was found, its status.
func wrongOutcome(id string, e *codemode.Execution) codemode.Outcome {
	if e == nil {
		return codemode.Outcome{}
	}
	return codemode.Outcome{ExecutionID: id, Status: e.Status}
}

// typeCheckProgram runs the type checker over a new program; refused is
// true with the outcome to return when it has type errors or the checker
// fails (the program does not run and nothing is stored).
func (r *Runtime) typeCheckProgram(ctx context.Context, code string) (o codemode.Outcome, refused bool) {
	decls, _ := r.Declarations("") // every connector's: never an error
	problems, err := r.opts.TypeCheck.Check(ctx, code, decls)
	switch {
	case err != nil:
		r.log.WarnContext(ctx, "type check failed", "err", err)
		return codemode.Outcome{Status: codemode.StatusError, Error: "the type check (sandbox.typecheck) failed; nothing was run: " + r.scrub.String(err.Error())}, true
	case len(problems) > 0:
		return codemode.Outcome{Status: codemode.StatusError, Error: fmt.Sprintf("the program has %d type error%s (sandbox.typecheck); nothing was run:\n- %s",
			len(problems), short.Plural(len(problems), "", "s"), strings.Join(problems, "\n- "))}, true
	}
	return codemode.Outcome{}, false
}
