package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// errNotRevertible marks an applied call nothing can undo; it stays applied.
var errNotRevertible = errors.New("not revertible")

// Rollback undoes the applied, revertible calls of a run, newest first, and
// ends it rolled_back. It is allowed on completed, error, rejected and paused
// runs (a paused run's pending actions are rejected first). A call is
// revertible when its connector implements connectors.Reverter for it, or
// the configuration gives a revert function for its method; that function
// runs in the sandbox as its own pass, its calls executed without approval
// (asking for the rollback was the human's decision) and logged after the
// run's last entry. Every revert is attempted even when one fails; the
// outcome lists the reverted seqs and the failures. Calls nothing can revert
// stay applied and are not failures.
func (r *Runtime) Rollback(ctx context.Context, id string) (codemode.Outcome, error) {
	e, done, err := r.openExecution(ctx, id, "rolled back", codemode.StatusCompleted, codemode.StatusError, codemode.StatusRejected, codemode.StatusPaused)
	if err != nil {
		return wrongOutcome(id, e), err
	}
	defer done()
	from := e.Status
	// Claim the rollback first: of two racing rollbacks only one reverts.
	if err := r.setStatus(ctx, e, from, codemode.StatusRolledBack); err != nil {
		return r.lostRace(ctx, id, "rolled back", err)
	}
	ctx = context.WithoutCancel(ctx) // the claim is made; finish the job
	if from == codemode.StatusPaused {
		r.rejectPending(ctx, id)
	}
	log, err := r.store.Entries(ctx, id)
	if err != nil {
		r.dispose(ctx, id)
		return codemode.Outcome{ExecutionID: id, Status: codemode.StatusRolledBack}, fmt.Errorf("load log of %s: %w", id, err)
	}
	maxSeq := 0
	var applied []codemode.Entry
	for _, en := range log {
		maxSeq = max(maxSeq, en.Seq)
		if en.Kind == codemode.KindCall && en.State == codemode.EntryApplied {
			applied = append(applied, en)
		}
	}
	sort.Slice(applied, func(i, j int) bool { return applied[i].Seq > applied[j].Seq })

	out := codemode.Outcome{Status: codemode.StatusRolledBack, ExecutionID: id, Logs: e.Logs}
	for _, en := range applied {
		err := r.revert(ctx, en, &maxSeq)
		switch {
		case errors.Is(err, errNotRevertible):
		case err != nil:
			out.Failures = append(out.Failures, codemode.RevertFailure{Seq: en.Seq, Connector: en.Connector, Method: en.Method, Error: err.Error()})
		default:
			out.Reverted = append(out.Reverted, en.Seq)
		}
	}
	r.dispose(ctx, id)
	return r.visible(out), nil
}

// revert undoes one applied call and marks it reverted.
func (r *Runtime) revert(ctx context.Context, en codemode.Entry, maxSeq *int) error {
	s := r.catalog().byName[en.Connector]
	if s == nil || !s.available() {
		return fmt.Errorf("connector %s is not available", en.Connector)
	}
	t := s.byName[en.Method]
	if t == nil {
		return fmt.Errorf("connector %s no longer has the method %s", en.Connector, en.Method)
	}
	var err error
	if rv, ok := s.src.Connector.(connectors.Reverter); ok && rv.Revertible(t.def.SourceName) {
		err = rv.Revert(ctx, t.def.SourceName, en.Args, rawOrNull(en.Result))
	} else if t.revertJS != "" {
		err = r.revertJS(ctx, en, t.revertJS, maxSeq)
	} else {
		return errNotRevertible
	}
	if err != nil {
		return err
	}
	return r.moveEntry(ctx, &en, codemode.EntryApplied, codemode.EntryReverted)
}

// revertJS runs a configured "(args, result) => …" function as its own
// pass; its calls are logged after *maxSeq, which it advances.
func (r *Runtime) revertJS(ctx context.Context, en codemode.Entry, fn string, maxSeq *int) error {
	code := fmt.Sprintf("async () => {\nconst revert = (%s\n);\nreturn await revert(%s, %s);\n}", fn, rawOrNull(en.Args), rawOrNull(en.Result))
	p := newPass(r, en.ExecutionID, nil, modeRevert, *maxSeq, nil)
	out, runErr := r.exec.Run(ctx, sandbox.Program{
		Code:    code,
		Globals: p.cat.globals,
		Limits:  r.limits,
		Clock:   sandbox.Clock{Seed: newSeed()},
	}, p)
	stop, flushErr := p.finish(ctx)
	p.mu.Lock()
	*maxSeq = max(*maxSeq, p.maxSeq)
	leftover := p.leftoverLocked()
	p.mu.Unlock()
	r.settleLeftovers(ctx, &codemode.Execution{ID: en.ExecutionID}, leftover)
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
