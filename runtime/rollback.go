package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// errNotRevertible marks a call nothing can undo; it stays as it is.
var errNotRevertible = errors.New("not revertible")

// Rollback undoes the calls of a completed, error, rejected, cancelled or
// paused run (its pending actions rejected and its waiting calls settled
// first: settleEnded), newest first, and ends it rolled_back. It reverts
// the program's applied calls, and those whose outcome is unknown (in
// flight when the run was interrupted) when they have a revert, reported
// apart. A call is revertible when its connector reverts it
// (connectors.Capabilities.Reverter) or the configuration gives its method
// a revert function, which runs as its own pass: its calls are made
// without approval (the rollback was the person's decision) and logged
// after the run's last entry (Entry.Reverts). Every revert is attempted;
// the outcome reports each call: reverted, unknownReverted, failures and
// notReverted.
//
// While it reverts, the run is rolling_back and this process its owner;
// a run whose process died meanwhile is recovered and can be rolled back
// again. A call is marked reverted in the same write as its revert's last
// result, so only a revert in flight at a crash may run twice.
//
// Under an issuer only the run's starter rolls it back (policy.Sees). The
// rollback, or its refusal, is audited.
func (r *Runtime) Rollback(ctx context.Context, id string) (_ codemode.Outcome, err error) {
	rec := codemode.AuditRecord{Action: codemode.AuditRollback, ExecutionID: id}
	defer func() { r.audit(ctx, rec, err) }()
	e, done, err := r.openExecution(ctx, id, "rolled back", ownRun, codemode.StatusCompleted, codemode.StatusError, codemode.StatusRejected, codemode.StatusCancelled, codemode.StatusPaused)
	if err != nil {
		return wrongOutcome(id, e), err
	}
	defer done()
	ctx, span := r.startPass(ctx, e, passRollback)
	defer func() { r.endPass(span, e, err) }()
	from := e.Status
	// Claim the rollback first: of two racing rollbacks only one reverts.
	h, err := r.own.claims.take(ctx, id)
	if err != nil {
		return codemode.Outcome{ExecutionID: id, Status: from}, err
	}
	defer h.release()
	if err := r.setStatus(ctx, e, from, codemode.StatusRollingBack); err != nil {
		return r.lostRace(ctx, id, "rolled back", err)
	}
	ctx = context.WithoutCancel(ctx) // the claim is made; finish the job
	if from == codemode.StatusPaused {
		r.settleEnded(ctx, id, codemode.PersonFrom(ctx))
	}
	log, err := r.store.Entries(ctx, id)
	if err != nil {
		err = fmt.Errorf("load log of %s: %w", id, err)
		e.Error = "internal failure during the rollback: " + err.Error() + "; roll it back again"
		if serr := r.setStatus(ctx, e, codemode.StatusRollingBack, codemode.StatusError); serr != nil {
			err = errors.Join(err, serr)
		}
		return codemode.Outcome{ExecutionID: id, Status: e.Status}, err
	}
	maxSeq := 0
	var calls []codemode.Entry // the program's calls that may be in effect
	for _, en := range log {
		maxSeq = max(maxSeq, en.Seq)
		if en.Kind != codemode.KindCall || en.Reverts != 0 || (en.State != codemode.EntryApplied && en.State != codemode.EntryUnknown) {
			continue
		}
		calls = append(calls, en)
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].Seq > calls[j].Seq })

	out := codemode.Outcome{ExecutionID: id, Logs: e.Logs}
	for _, en := range calls {
		err := r.revert(ctx, en, e.StartedBy, &maxSeq)
		switch {
		case errors.Is(err, errNotRevertible) && r.readOnly(en):
			// A read-only call without a revert: nothing to undo or report.
		case errors.Is(err, errNotRevertible):
			reason := "nothing can revert it: it stays applied"
			if en.State == codemode.EntryUnknown {
				reason = "its outcome is unknown and nothing can revert it"
			}
			out.NotReverted = append(out.NotReverted, codemode.KeptCall{Seq: en.Seq, Connector: en.Connector, Method: en.Method, State: en.State, Reason: reason})
		case err != nil:
			msg := err.Error()
			if en.State == codemode.EntryUnknown {
				msg = "its outcome is unknown (no result was recorded), and its revert failed: " + msg
			}
			out.Failures = append(out.Failures, codemode.RevertFailure{Seq: en.Seq, Connector: en.Connector, Method: en.Method, Error: msg})
		case en.State == codemode.EntryUnknown:
			out.UnknownReverted = append(out.UnknownReverted, en.Seq)
		default:
			out.Reverted = append(out.Reverted, en.Seq)
		}
	}
	if note := rollbackNote(out); note != "" {
		if e.Error != "" {
			note += " (the run had ended: " + e.Error + ")"
		}
		e.Error = note
	}
	if err := r.setStatus(ctx, e, codemode.StatusRollingBack, codemode.StatusRolledBack); err != nil {
		return codemode.Outcome{ExecutionID: id, Status: codemode.StatusRollingBack}, err
	}
	out.Status, out.Error = e.Status, e.Error
	rec.Outcome = e.Status.String()
	r.dispose(ctx, id)
	return r.scrubOutcome(out), nil
}

// revert undoes one applied or unknown call and marks it reverted. A call
// whose outcome is unknown has no result: a revert gets null for it.
// A configured revert's calls carry the credentials of the run's starter.
func (r *Runtime) revert(ctx context.Context, en codemode.Entry, starter codemode.Person, maxSeq *int) error {
	s := r.catalog().Connector(en.Connector)
	if s == nil || !s.Available() {
		return fmt.Errorf("connector %s is not available", en.Connector)
	}
	t := s.Method(en.Method)
	if t == nil {
		return fmt.Errorf("connector %s no longer has the method %s", en.Connector, en.Method)
	}
	if rv := s.Caps.Reverter; rv != nil && rv.Revertible(t.Def.SourceName) {
		if err := rv.Revert(ctx, t.Def.SourceName, en.Args, rawOrNull(en.Result)); err != nil {
			return err
		}
		return r.moveEntry(ctx, &en, en.State, codemode.EntryReverted)
	}
	if t.RevertJS != "" {
		return r.revertJS(ctx, en, t.RevertJS, starter, maxSeq)
	}
	return errNotRevertible
}

// revertJS runs a configured "(args, result) => …" function as its own
// pass; its calls are logged after *maxSeq, which it advances. When the
// function completes, the pass's last write marks en reverted.
func (r *Runtime) revertJS(ctx context.Context, en codemode.Entry, fn string, starter codemode.Person, maxSeq *int) error {
	undone := en
	st, err := codemode.Transition(en.State, codemode.EntryReverted)
	if err != nil {
		return err
	}
	undone.State, undone.UpdatedAt = st, r.now()
	code := fmt.Sprintf("async () => {\nconst revert = (%s\n);\nreturn await revert(%s, %s);\n}", fn, rawOrNull(en.Args), rawOrNull(en.Result))
	p := newPass(r, &codemode.Execution{ID: en.ExecutionID, StartedBy: starter}, nil, en.Seq, *maxSeq, nil)
	out, runErr := p.runProgram(ctx, code, r.opts.Limits, sandbox.Clock{Seed: rand.Int64()})
	var also []codemode.EntryUpdate
	if runErr == nil && out.Status == sandbox.Completed {
		also = append(also, codemode.EntryUpdate{Entry: undone, From: en.State})
	}
	stop, flushErr := p.finish(ctx, also...)
	p.mu.Lock()
	*maxSeq = max(*maxSeq, p.maxSeq)
	leftover := p.leftoverLocked()
	p.mu.Unlock()
	r.settleEntries(ctx, en.ExecutionID, leftover, codemode.Person{})
	switch {
	case runErr != nil:
		return errors.Join(fmt.Errorf("revert function: %w", runErr), flushErr)
	case flushErr != nil:
		return fmt.Errorf("revert function: %w", flushErr)
	case stop != nil:
		return fmt.Errorf("revert function: %s", stop.msg)
	case out.Status == sandbox.Completed:
		return nil
	case out.Status == sandbox.Failed:
		return fmt.Errorf("revert function failed: %s", out.Error)
	default:
		return fmt.Errorf("revert function was stopped: %v", out.Stop)
	}
}

// readOnly reports whether en is a call of a tool known to be read-only.
func (r *Runtime) readOnly(en codemode.Entry) bool {
	t, err := r.catalog().Resolve(en.Connector, en.Method)
	return err == nil && t.Def.KnownReadOnly()
}

// rollbackNote says, for a rollback that left calls in effect, what it
// reverted and what stays: the run's message once rolled_back, so that
// every surface says it ("" when everything in effect was reverted).
func rollbackNote(o codemode.Outcome) string {
	if len(o.Failures) == 0 && len(o.NotReverted) == 0 {
		return ""
	}
	var b strings.Builder
	switch n := len(o.Reverted) + len(o.UnknownReverted); n {
	case 0:
		b.WriteString("rolled back, but nothing was reverted")
	case 1:
		b.WriteString("rolled back partly: 1 call reverted")
	default:
		fmt.Fprintf(&b, "rolled back partly: %d calls reverted", n)
	}
	for _, f := range o.Failures {
		fmt.Fprintf(&b, "; call %d (%s.%s) stays as it was: its revert failed: %s", f.Seq, f.Connector, f.Method, short.Clip(f.Error, 200))
	}
	for _, k := range o.NotReverted {
		fmt.Fprintf(&b, "; call %d (%s.%s): %s", k.Seq, k.Connector, k.Method, k.Reason)
	}
	return b.String()
}
