package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/procid"
)

// Ownership and recovery: docs/ARCHITECTURE.md, "Recovery and ownership".
// Only a run this process works on (running, rolling_back) carries its
// owner's id; a paused or finished run carries none, so anyone may decide
// it.

// DefaultLease is the default of Options.Lease.
const DefaultLease = 15 * time.Second

// MaxLease bounds Options.Lease and the lease an owner record is trusted
// with: the record is another process's (or anything that wrote to the
// store), and a huge lease would keep its runs from recovery forever.
const MaxLease = 24 * time.Hour

// unknownNote is the error of an entry recovery marks unknown.
const unknownNote = "the run was interrupted while this call was in flight: it may or may not have taken effect"

// owner is this process as the owner of the runs it works on.
type owner struct {
	// fixed at creation
	r      *Runtime
	id     string
	self   procid.Identity
	lease  time.Duration
	claims *claims // the runs this process works on (hold.go)

	// serving: the process joined (Join) to serve; it takes over the
	// waiting runs of owners that are gone (waiting.go).
	serving atomic.Bool

	mu     sync.Mutex
	cancel context.CancelFunc // stops the heartbeat, once registered (nil: not); guarded by mu
	done   chan struct{}      // closed when the heartbeat goroutine ends; guarded by mu
	closed bool               // close began: nothing registers the owner again; guarded by mu
}

// claim registers the owner if it is not yet (starting its heartbeat) and
// returns its id. Once close began it only returns the id: what close
// writes then (a stranded run's end) may claim a run, whose owner record
// close then removes.
func (o *owner) claim(ctx context.Context) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cancel != nil || o.closed {
		return o.id, nil
	}
	if err := o.register(ctx); err != nil {
		return "", err
	}
	hbCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o.cancel, o.done = cancel, make(chan struct{})
	go o.heartbeat(hbCtx, o.done)
	return o.id, nil
}

// register writes the owner record.
func (o *owner) register(ctx context.Context) error {
	began := time.Now()
	now := o.r.now()
	err := o.r.store.RegisterOwner(ctx, codemode.Owner{
		ID: o.id, Host: o.self.Host, PID: o.self.PID, Boot: o.self.Boot, ProcessStart: o.self.Start,
		StartedAt: now, Heartbeat: now, Lease: o.lease,
	})
	if err != nil {
		return fmt.Errorf("register this process as an owner: %w", err)
	}
	o.renewed(began)
	return nil
}

// renewed records a renewal of the lease begun at began (see
// claims.renew).
func (o *owner) renewed(began time.Time) {
	if gap := o.claims.renew(began); gap > 0 {
		o.r.log.Warn("this process could not renew its lease for longer than the lease (the store was unreachable); the runs it was working on make no further call with a side effect and end, and other processes may have recovered them",
			"owner", o.id, "unrenewed", gap.Round(time.Millisecond), "lease", o.lease)
	}
}

// heartbeat runs tick every lease/3, until ctx ends.
func (o *owner) heartbeat(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(o.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		o.tick(ctx)
	}
}

// tick renews the lease, settles the runs the store failed to record if
// it answered (hold.go), and recovers the runs of owners that are gone and
// this process's own runs that no request holds.
func (o *owner) tick(ctx context.Context) {
	if o.beat(ctx) {
		o.r.settleStranded(ctx)
	}
	o.r.recoverOrphans(ctx)
}

// beat renews the lease and reports whether the store took it. An owner
// record another process removed (taking this one for dead, which it does
// once it has recovered the runs this one claimed) is written again: runs
// recovered meanwhile stay recovered, and the passes of the runs held now
// make no further call with a side effect (claims.takenOver).
func (o *owner) beat(ctx context.Context) bool {
	began := time.Now()
	err := o.r.store.Heartbeat(ctx, o.id, o.r.now())
	switch {
	case errors.Is(err, codemode.ErrNotFound):
		o.claims.takenOver()
		o.r.log.WarnContext(ctx, "this process's owner record was removed: another process took it for gone (are the servers' clocks apart by more than the lease?) and may have recovered its runs, which make no further call with a side effect here; registering again", "owner", o.id)
		err = o.register(ctx)
	case err == nil:
		o.renewed(began)
	}
	if err != nil && ctx.Err() == nil {
		o.r.log.WarnContext(ctx, "owner heartbeat failed", "owner", o.id, "err", err)
	}
	return err == nil
}

// Join registers this process as an owner now rather than at its first
// run (what serve does), so that from the start it recovers, at every
// heartbeat, the runs of owners that are gone, and takes over the runs
// they left waiting for downstream tasks, even if it has run nothing.
func (r *Runtime) Join(ctx context.Context) error {
	r.own.serving.Store(true)
	_, err := r.own.claim(ctx)
	return err
}

// close stops the heartbeat and removes the owner record. It does not
// hold mu while it writes: a stranded run's end may claim the run.
func (o *owner) close(ctx context.Context) error {
	o.mu.Lock()
	cancel, done := o.cancel, o.done
	o.cancel, o.closed = nil, true
	o.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-done
	// What the store failed to record is written now if it can be;
	// otherwise, once this record is gone, another process recovers those
	// runs after the lease.
	o.r.settleStranded(ctx)
	o.r.recoverOrphans(ctx)
	if err := o.r.store.RemoveOwner(ctx, o.id); err != nil && !errors.Is(err, codemode.ErrNotFound) {
		return fmt.Errorf("remove owner %s: %w", o.id, err)
	}
	return nil
}

// gone reports whether the owner of a claimed run is gone, and why.
// rec is its owner record (nil: none).
func (o *owner) gone(e *codemode.Execution, rec *codemode.Owner, now time.Time) (string, bool) {
	if e.Owner == o.id {
		return "", false // this process
	}
	if rec == nil {
		idle := now.Sub(e.UpdatedAt)
		if idle <= o.lease {
			return "", false
		}
		who := "its process left no owner record (a run of an older release)"
		if e.Owner != "" {
			who = fmt.Sprintf("its owner %s is no longer registered", e.Owner)
		}
		return fmt.Sprintf("%s and it has not changed for %s", who, idle.Round(time.Second)), true
	}
	proc := fmt.Sprintf("pid %d on %s", rec.PID, rec.Host)
	alive, known := procid.Alive(procid.Identity{Host: rec.Host, Boot: rec.Boot, PID: rec.PID, Start: rec.ProcessStart})
	if known {
		if alive {
			return "", false
		}
		return fmt.Sprintf("the process that ran it (%s, started %s) is gone", proc, rec.StartedAt.Format(time.RFC3339)), true
	}
	// The record's lease is bounded as read: none (zero or negative) is
	// this process's, more than MaxLease is MaxLease.
	lease := min(positiveOr(rec.Lease, o.lease), MaxLease)
	since := now.Sub(rec.Heartbeat)
	if since <= lease {
		return "", false
	}
	return fmt.Sprintf("the process that ran it (%s) stopped renewing its %s lease %s ago", proc, lease, since.Round(time.Second)), true
}

// owners returns the owner records by id; a failure is logged (nil).
func (r *Runtime) owners(ctx context.Context) map[string]*codemode.Owner {
	list, err := r.store.Owners(ctx)
	if err != nil {
		r.log.WarnContext(ctx, "listing owners failed", "err", err)
		return nil
	}
	byID := make(map[string]*codemode.Owner, len(list))
	for i := range list {
		byID[list[i].ID] = &list[i]
	}
	return byID
}

// ownerGone reports whether the owner of claimed run e is gone (see
// owner.gone), and why; not when the owners cannot be listed.
func (r *Runtime) ownerGone(ctx context.Context, e *codemode.Execution) (string, bool) {
	if byID := r.owners(ctx); byID != nil {
		return r.own.gone(e, byID[e.Owner], r.now())
	}
	return "", false
}

// recoverOrphans recovers every running or rolling_back run whose owner
// is gone (see above), and this process's own that none of its requests
// holds (hold.go); starts this process's waiter (waiting.go) of each run
// waiting for downstream tasks that it owns, and, in a serving process
// (Join), of each whose owner is gone, which the waiter takes over; and
// removes the records of owners that are gone and claim nothing (a gone
// owner's record stays until its waiting runs are taken over, so that
// whoever takes them over sees it gone). Failures are logged: recovery
// is tried again later.
func (r *Runtime) recoverOrphans(ctx context.Context) {
	byID := r.owners(ctx)
	if byID == nil {
		return
	}
	now := r.now()
	claimed := map[string]bool{}
	for _, st := range []codemode.ExecStatus{codemode.StatusRunning, codemode.StatusRollingBack, codemode.StatusWaiting} {
		// Without their output (up to a megabyte each, at every
		// heartbeat): recovery decides on the owner and when each run
		// last changed, and ends one without writing it back
		// (endRecovered). (Not Brief: a run whose values cannot be
		// decoded stays left out, as every list leaves it.)
		runs, err := r.store.ListExecutions(ctx, codemode.ExecutionFilter{Status: st, NoOutput: true})
		if err != nil {
			r.log.WarnContext(ctx, "recovery: listing runs failed", "status", st, "err", err)
			continue
		}
		for _, e := range runs {
			why, gone := r.own.gone(e, byID[e.Owner], now) // (false for this process)
			switch {
			case st == codemode.StatusWaiting:
				claimed[e.Owner] = true
				if e.Owner == r.own.id || gone && r.own.serving.Load() {
					r.watchWaiting(e.ID)
				}
			case e.Owner == r.own.id:
				if r.own.claims.recovering(e.ID) {
					r.recoverRun(ctx, e, st, "this process was working on it when the store failed, and could not record how it ended")
					r.own.claims.done(e.ID, nil)
				}
			case gone:
				r.recoverRun(ctx, e, st, why)
			default:
				claimed[e.Owner] = true
			}
		}
	}
	for id, rec := range byID {
		if id == r.own.id || claimed[id] {
			continue
		}
		if _, gone := r.own.gone(&codemode.Execution{Owner: id}, rec, now); !gone {
			continue
		}
		if err := r.store.RemoveOwner(ctx, rec.ID); err != nil && !errors.Is(err, codemode.ErrNotFound) {
			r.log.WarnContext(ctx, "recovery: removing an owner that is gone failed", "owner", rec.ID, "err", err)
		}
	}
}

// recoverRun ends one claimed run whose owner is gone (endRecovered),
// unless another process did first.
func (r *Runtime) recoverRun(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, why string) {
	owner := e.Owner
	msg := "interrupted: " + why + "; calls that were in flight are marked unknown"
	if from == codemode.StatusRollingBack {
		msg = "interrupted during a rollback: " + why + "; roll it back again to finish"
	}
	err := r.endRecovered(ctx, e, from, codemode.StatusError, owner, msg)
	switch {
	case errors.Is(err, codemode.ErrConflict), errors.Is(err, codemode.ErrNotFound):
		// Another process recovered it, or it moved on.
	case err != nil:
		r.log.WarnContext(ctx, "recovery failed", "execution", e.ID, "err", err)
	default:
		r.log.WarnContext(ctx, "recovered an interrupted run", "execution", e.ID, "was", from, "owner", owner, "why", why)
	}
}

// settleStranded writes the end of each run whose pass ended while the
// store failed (hold.strand), if the store still shows it claimed by this
// process; a run whose end cannot be written is left to recoverOrphans. A
// run the store cannot be asked about waits for the next heartbeat.
func (r *Runtime) settleStranded(ctx context.Context) {
	for id, finish := range r.own.claims.settling() {
		e, err := r.store.GetExecution(ctx, id)
		switch {
		case errors.Is(err, codemode.ErrNotFound): // deleted meanwhile
		case err != nil:
			r.log.WarnContext(ctx, "could not read a run whose end the store failed to record; trying again at the next heartbeat", "execution", id, "err", err)
			r.own.claims.done(id, finish)
			continue
		case !e.Status.Claimed() || e.Owner != r.own.id:
			// Its end was written after all, or another process recovered it.
		default:
			if err := finish(ctx); err == nil {
				r.log.InfoContext(ctx, "recorded the end of a run once the store answered again", "execution", id)
			} else if !errors.Is(err, codemode.ErrConflict) && !errors.Is(err, codemode.ErrNotFound) {
				r.log.WarnContext(ctx, "could not record the end of a run once the store answered again; recovering it", "execution", id, "err", err)
			}
		}
		r.own.claims.done(id, nil)
	}
}
