package runtime

import (
	"context"
	"fmt"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"go.opentelemetry.io/otel/trace"
)

// Grouped log writes, and write-ahead for side effects.
//
// A pass writes its log in groups rather than a commit per call. A new
// entry that needs no approval (a call made at once, a step, a service
// call) is queued in memory as executing, and so is every outcome: a
// queued entry takes its final state, a written one gets its update
// queued. Everything queued is written in one transaction:
//
//   - before a call not known to be read-only is sent
//     (connectors.Tool.KnownReadOnly): on a store without a journal
//     (PostgreSQL) its entry is queued and the group committed at once
//     (write-ahead), with the results of the calls before it; on one with
//     a journal (SQLite, codemode.Journaler) the entry is journaled
//     instead, and so is its result before the program sees it;
//   - with any write that must reach the store before the pass goes on: a
//     call logged pending or sign_in, an approver's answer, a task's id;
//   - when the group is due (groupAge, groupEntries or groupBytes), checked
//     once a call is sent (its connector reports it through the call's
//     connectors.CallHook, so the write overlaps the downstream's work) or
//     has returned, and when a step or service call is queued;
//   - at the end of the pass (finish), before the run's status is recorded.
//
// So a paused or finished run never shows less than this process knew,
// and every call that can have a side effect is in the store, executing,
// before it is made. A crash loses the record of read-only calls and
// steps queued since the last write and the results since then: their
// entries stay executing, and recovery marks them unknown.
//
// A rollback's revert pass has no journal: each of its calls that may
// have a side effect is committed before it is sent, and its final write
// marks the call it undid reverted with its last results (finish), so
// only a revert in flight at a crash may run twice.
//
// Why: a commit per call cost a third of a call's time with process
// isolation (each SQLite system call wakes the Go runtime's monitor
// thread, which then polls every 20 µs for a while); on SQLite a commit
// per side effect took the side-effecting call from 1.01x to 1.43x a
// direct call in process (target 1.3x) and added 7-17 % to a call of a
// downstream answering in 1 ms (BENCHMARKS.md, "Fast paths that pay for
// themselves").
//
// If a write fails, the pass ends with an internal failure and nothing of
// that group is written (a call whose write-ahead failed is not made).

// Bounds of a group of queued log writes (see above).
const (
	groupAge     = 50 * time.Millisecond
	groupEntries = 1024
	groupBytes   = 4 << 20
)

// failLocked stops the pass with an internal failure (the store failed,
// or a move its state machine refuses) and returns the error that stops
// the program.
func (p *pass) failLocked(err error) error {
	return p.stopLocked(stopInternal, "internal failure: "+err.Error(), err)
}

// stampLocked moves e to state to (from 0: a new entry) through
// Transition, stamped now; an illegal move stops the pass.
func (p *pass) stampLocked(e *codemode.Entry, from, to codemode.EntryState) error {
	st, err := codemode.Transition(from, to)
	if err != nil {
		return p.failLocked(err)
	}
	e.State, e.UpdatedAt = st, p.r.now()
	if from == 0 {
		e.CreatedAt = e.UpdatedAt
	}
	return nil
}

// commitLocked moves e to state to (from 0: a new entry) and writes it at
// once with everything queued (an entry still queued takes its new state
// in the queue); a failure stops the pass.
func (p *pass) commitLocked(ctx context.Context, e *codemode.Entry, from, to codemode.EntryState) error {
	if err := p.stampLocked(e, from, to); err != nil {
		return err
	}
	var err error
	switch {
	case from == 0:
		err = p.writeLocked(ctx, nil, e)
	case p.requeueLocked(*e):
		err = p.writeLocked(ctx, nil, nil)
	default:
		err = p.writeLocked(ctx, []codemode.EntryUpdate{{Entry: *e, From: from}}, nil)
	}
	if err != nil {
		return p.failLocked(fmt.Errorf("log call %d of %s as %s: %w", e.Seq, e.ExecutionID, to, err))
	}
	return nil
}

// queueLocked queues a new entry, executing.
func (p *pass) queueLocked(e *codemode.Entry) error {
	if err := p.stampLocked(e, 0, codemode.EntryExecuting); err != nil {
		return err
	}
	p.startGroupLocked(len(e.Args))
	p.queuedAt[e.Seq] = len(p.queued)
	p.queued = append(p.queued, *e)
	p.open[e.Seq] = *e
	return nil
}

// requeueLocked gives e, if it is still queued, its new state in the
// queue, and reports whether it was.
func (p *pass) requeueLocked(e codemode.Entry) bool {
	i, queued := p.queuedAt[e.Seq]
	if queued {
		e.CreatedAt, e.Reverts = p.queued[i].CreatedAt, p.queued[i].Reverts
		p.groupBytes += len(e.Result) + len(e.Error)
		p.queued[i] = e
	}
	return queued
}

// startGroupLocked accounts for n more bytes queued.
func (p *pass) startGroupLocked(n int) {
	if len(p.queued) == 0 && len(p.deferred) == 0 {
		p.groupStart = time.Now()
		p.groupBytes = 0
	}
	p.groupBytes += n
}

// writeGroupLocked writes what is queued when it is due (or, with now,
// at once); a failure stops the pass.
func (p *pass) writeGroupLocked(ctx context.Context, now bool) error {
	n := len(p.queued) + len(p.deferred)
	due := n >= groupEntries || p.groupBytes >= groupBytes || (n > 0 && time.Since(p.groupStart) >= p.r.groupAge)
	if !now && !due {
		return nil
	}
	if err := p.flushLocked(ctx); err != nil {
		return p.failLocked(err)
	}
	return nil
}

// queueBeforeLocked queues a new entry before what it stands for runs,
// and writes the group if it is due. An entry of a call that may have a
// side effect (ahead) must survive a crash before the call is made: it is
// journaled when the store has a journal (the group is then written when
// due, after the call is sent: see pass.execute), else committed at once
// with the group; a pass whose claim on the run lapsed (claims.mayAct)
// makes no such call. If that write fails, the entry is taken back (it
// will not run) and the pass stops.
func (p *pass) queueBeforeLocked(ctx context.Context, e *codemode.Entry, ahead bool) error {
	if ahead {
		if err := p.r.own.claims.mayAct(p.run.ID); err != nil {
			return p.failLocked(err)
		}
	}
	if err := p.queueLocked(e); err != nil {
		return err
	}
	var err error
	if ahead && p.useJournal() {
		if err = p.journalLocked(ctx, *e); err == nil {
			p.ahead[e.Seq] = true
		}
	} else {
		err = p.writeGroupLocked(ctx, ahead)
	}
	if err != nil {
		p.queued = p.queued[:len(p.queued)-1] // taken back: it will not run
		delete(p.queuedAt, e.Seq)
		delete(p.open, e.Seq)
		delete(p.ahead, e.Seq)
		return err
	}
	return nil
}

// useJournal reports whether the pass writes ahead to the store's journal
// (a revert pass commits every entry at once).
func (p *pass) useJournal() bool { return p.r.journal != nil && p.reverts == 0 }

// journalLocked journals e (see codemode.Journaler); a failure stops the
// pass.
func (p *pass) journalLocked(ctx context.Context, e codemode.Entry) error {
	if err := p.r.journal.Journal(context.WithoutCancel(ctx), p.run.ID, []codemode.Entry{e}); err != nil {
		return p.failLocked(fmt.Errorf("journal call %d of %s: %w", e.Seq, p.run.ID, err))
	}
	p.journaled = true
	return nil
}

// record takes the outcome of an entry that was executing (a call that
// returned, a step that ran) or waiting (a task that ended): e, moved to
// to, is queued (queueOutcomeLocked), but a task's result is committed at
// once, as its id was, and so is an outcome that comes after finish's
// final write. Values over the run's quota are dropped, e recorded as
// failed, and the error returned stops the program (quota.go).
func (p *pass) record(ctx context.Context, e codemode.Entry, to codemode.EntryState) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	to, quotaErr := p.chargeOutcomeLocked(&e, to)
	from := codemode.EntryExecuting
	if e.State == codemode.EntryWaiting {
		from = codemode.EntryWaiting
	}
	_, queued := p.queuedAt[e.Seq]
	var err error
	switch {
	case from == codemode.EntryWaiting || (p.flushed && !queued):
		if err = p.commitLocked(ctx, &e, from, to); err == nil {
			delete(p.open, e.Seq)
		}
	default:
		err = p.queueOutcomeLocked(ctx, e, to, queued)
	}
	if err != nil {
		return err
	}
	return quotaErr
}

// queueOutcomeLocked moves e, executing, to state to in the queue (its
// queued entry, else a queued update); a journaled or written entry's
// outcome is journaled first, so it survives a crash before the program
// sees it.
func (p *pass) queueOutcomeLocked(ctx context.Context, e codemode.Entry, to codemode.EntryState, queued bool) error {
	if err := p.stampLocked(&e, codemode.EntryExecuting, to); err != nil {
		return err
	}
	if p.useJournal() && !p.flushed && (p.ahead[e.Seq] || !queued) {
		if err := p.journalLocked(ctx, e); err != nil {
			return err
		}
	}
	if !p.requeueLocked(e) {
		p.startGroupLocked(len(e.Result) + len(e.Error))
		p.deferred = append(p.deferred, codemode.EntryUpdate{Entry: e, From: codemode.EntryExecuting})
		return nil
	}
	delete(p.open, e.Seq)
	return nil
}

// writeLocked writes, in one transaction, the queued entries and insert
// (if not nil), then the queued updates and updates. On failure nothing is
// written and the queue stays (finish tries it again).
func (p *pass) writeLocked(ctx context.Context, updates []codemode.EntryUpdate, insert *codemode.Entry) error {
	inserts := p.queued
	if insert != nil {
		inserts = append(p.queued[:len(p.queued):len(p.queued)], *insert)
	}
	batch := p.deferred
	if len(updates) > 0 {
		batch = append(p.deferred[:len(p.deferred):len(p.deferred)], updates...)
	}
	var span trace.Span
	if p.r.tracer != nil {
		_, span = p.r.tracer.Start(ctx, "codemode.store.write", trace.WithAttributes(
			attrExecution.String(p.run.ID), attrInserts.Int(len(inserts)), attrUpdates.Int(len(batch))))
	}
	err := p.r.store.WriteEntries(context.WithoutCancel(ctx), inserts, batch)
	p.r.endSpan(span, err)
	if err != nil {
		return err
	}
	// Written: entries whose queued update was written are no longer
	// executing; those written executing stay open.
	for _, u := range p.deferred {
		if p.open[u.Entry.Seq].State == codemode.EntryExecuting {
			delete(p.open, u.Entry.Seq)
		}
	}
	clear(p.deferred)
	p.deferred = p.deferred[:0]
	clear(p.queued)
	p.queued = p.queued[:0]
	clear(p.queuedAt)
	return nil
}

// flushLocked writes what is queued, if anything.
func (p *pass) flushLocked(ctx context.Context) error {
	n := len(p.queued) + len(p.deferred)
	if n == 0 {
		return nil
	}
	if err := p.writeLocked(ctx, nil, nil); err != nil {
		return fmt.Errorf("record %d log entries of %s: %w", n, p.run.ID, err)
	}
	return nil
}
