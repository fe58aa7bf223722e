package runtime

import (
	"context"
	"fmt"
)

// Deferred results: one commit per logged call.
//
// A call is logged executing (committed) before the connector is called, as
// design.md §7 requires. Its result, the move executing -> applied or error
// (and likewise a step's value), is not committed on its own: the pass keeps
// it in memory (pass.deferred, under mu), hands the value to the program at
// once, and writes it in the same transaction as the pass's next log write
// (the next entry inserted executing or pending, or an entry moved by an
// approver's answer). Whatever is still deferred when the pass ends is
// written by finish, before the run's status is recorded, so a paused or
// finished run never shows a call as executing whose result this process
// knew, and Approve and Rollback replay from a complete log.
//
// The price is a wider at-least-once window. A crash between deciding and
// recording leaves the entry executing, and replay executes that call again
// (design.md §7); that window used to end when the call returned, and now
// ends at the pass's next log write or at the end of the pass. Nothing else
// changes: if a write of deferred results fails, the pass ends with an
// internal failure and those entries are settled as not completed, never
// silently dropped.

// record takes the outcome of an entry that was executing (a call that
// returned, a step that ran): e, moved to to, is deferred. After finish's
// final write nothing of the pass should come, but if it does, it is
// written at once.
func (p *pass) record(ctx context.Context, e Entry, to EntryState) error {
	st, err := Transition(EntryExecuting, to)
	if err != nil {
		return p.internal(err)
	}
	e.State = st
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.flushed {
		p.deferred = append(p.deferred, EntryUpdate{Entry: e, From: EntryExecuting})
		return nil
	}
	if err := p.r.store.UpdateEntry(context.WithoutCancel(ctx), e, EntryExecuting); err != nil {
		err = fmt.Errorf("set call %d of %s executing -> %s: %w", e.Seq, e.ExecutionID, to, err)
		return p.stopLocked(stopInternal, "internal failure: "+err.Error(), err)
	}
	delete(p.executing, e.Seq)
	return nil
}

// writeLocked writes, in one transaction, the deferred results, then
// updates, then insert (if not nil). On failure nothing is written and the
// results stay deferred (finish tries them again).
func (p *pass) writeLocked(ctx context.Context, updates []EntryUpdate, insert *Entry) error {
	batch := updates
	if n := len(p.deferred); n > 0 {
		batch = append(p.deferred[:n:n], updates...)
	}
	if err := p.r.store.WriteEntries(context.WithoutCancel(ctx), batch, insert); err != nil {
		return err
	}
	p.writtenLocked()
	return nil
}

// flushLocked writes the deferred results, if any.
func (p *pass) flushLocked(ctx context.Context) error {
	if len(p.deferred) == 0 {
		return nil
	}
	if err := p.r.store.WriteEntries(context.WithoutCancel(ctx), p.deferred, nil); err != nil {
		return fmt.Errorf("record the results of %d calls of %s: %w", len(p.deferred), p.execID, err)
	}
	p.writtenLocked()
	return nil
}

// writtenLocked forgets the deferred results once they are written: their
// entries are no longer executing.
func (p *pass) writtenLocked() {
	for _, u := range p.deferred {
		delete(p.executing, u.Entry.Seq)
	}
	clear(p.deferred)
	p.deferred = p.deferred[:0]
}
