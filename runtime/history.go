package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// Pending lists the actions awaiting approval, their arguments whole,
// each with its run's starter: of one run (empty unless paused), or with
// id "" of every paused run, oldest first. Under an issuer only what the
// policy shows the person is listed; a run it shows none of is unknown.
func (r *Runtime) Pending(ctx context.Context, id string) ([]codemode.PendingAction, error) {
	if id != "" {
		e, err := r.seen(ctx, id, pendingOfRun)
		if err != nil {
			return nil, err
		}
		if e.Status != codemode.StatusPaused {
			return nil, nil
		}
		return r.shownPending(ctx, e)
	}
	// Brief: the ids and starters are what shownPending reads of them.
	paused, err := r.store.ListExecutions(ctx, codemode.ExecutionFilter{Status: codemode.StatusPaused, Brief: true})
	if err != nil {
		return nil, fmt.Errorf("list paused executions: %w", err)
	}
	// The store lists newest first; the oldest waiting run comes first here.
	slices.Reverse(paused)
	var out []codemode.PendingAction
	for _, e := range paused {
		p, err := r.shownPending(ctx, e)
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
	}
	return out, nil
}

// shownPending lists paused run e's pending actions that the person ctx
// carries is shown (policy.Shown), each with the run's starter.
func (r *Runtime) shownPending(ctx context.Context, e *codemode.Execution) ([]codemode.PendingAction, error) {
	p, err := r.pendingOf(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	who := codemode.PrincipalFrom(ctx)
	out := p[:0]
	for _, a := range p {
		if r.opts.Policy.Shown(who, e, a) {
			a.StartedBy = e.StartedBy
			out = append(out, a)
		}
	}
	return out, nil
}

// Executions lists executions newest first; under an issuer, only the
// person's own (policy.Sees).
func (r *Runtime) Executions(ctx context.Context, f codemode.ExecutionFilter) ([]*codemode.Execution, error) {
	if who := codemode.PrincipalFrom(ctx); who != nil {
		f.StartedBy = who.Subject
	}
	list, err := r.store.ListExecutions(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("list executions: %w", err)
	}
	return list, nil
}

// ExecutionLog returns one execution and the part of its log q selects,
// values longer than q.Preview cut (codemode.ClippedEntry): a surface
// reads a long log a page at a time, and a value whole only when asked.
// With q.NoOutput the execution is read without its result and console
// output.
func (r *Runtime) ExecutionLog(ctx context.Context, id string, q codemode.LogQuery) (*codemode.Execution, []codemode.ClippedEntry, error) {
	get := r.getExecution
	if q.NoOutput {
		get = r.getWithoutOutput
	}
	e, err := r.seenBy(ctx, id, ownRun, get)
	if err != nil {
		return nil, nil, err
	}
	log, err := r.store.ClippedEntries(ctx, id, q)
	if errors.Is(err, codemode.ErrNotFound) {
		return nil, nil, unknownExecution(id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load log of %s: %w", id, err)
	}
	return e, log, nil
}

// DeleteExecution removes an execution and its log. A running or
// rolling_back one is refused (ErrWrongState); a paused one is rejected
// first, and that rejection is audited as Reject's is (the record outlives
// the run). Applied actions are not reverted: roll back first for that.
// A run the store cannot read (codemode.ErrUnreadable) the local operator
// (no principal) may delete whatever its status says, since it can be
// neither recovered nor decided; that deletion is audited (AuditDelete).
func (r *Runtime) DeleteExecution(ctx context.Context, id string) error {
	done, err := r.begin()
	if err != nil {
		return err
	}
	defer done()
	e, err := r.seen(ctx, id, ownRun)
	if errors.Is(err, codemode.ErrUnreadable) && codemode.PrincipalFrom(ctx) == nil {
		err = r.store.DeleteExecution(ctx, id)
		r.audit(ctx, codemode.AuditRecord{Action: codemode.AuditDelete, ExecutionID: id}, err)
		if err != nil {
			return fmt.Errorf("delete execution %s: %w", id, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case e.Status.Claimed():
		return wrongState("execution %s %s; it can be deleted once it pauses or ends", id, inState(e.Status))
	case e.Status == codemode.StatusPaused:
		rec := codemode.AuditRecord{Action: codemode.AuditReject, ExecutionID: id}
		if pending, err := r.pendingOf(ctx, id); err == nil {
			rec.Target = targets(pending)
		}
		err := r.endIdle(ctx, e, codemode.StatusRejected, "rejected: deleted while paused", codemode.PersonFrom(ctx))
		if err != nil {
			_, err = r.lostRace(ctx, id, "deleted", err)
		}
		r.audit(ctx, rec, err)
		if err != nil {
			return err
		}
	}
	if err := r.store.DeleteExecution(ctx, id); err != nil {
		if errors.Is(err, codemode.ErrNotFound) {
			return unknownExecution(id)
		}
		return fmt.Errorf("delete execution %s: %w", id, err)
	}
	return nil
}
