package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"
)

// RecoverExecution ends an execution whose owner is gone, in one
// IMMEDIATE transaction: if its status is still from and its owner is
// owner, the entries its journal holds are applied (journal.go), every
// entry still executing or waiting for its downstream task becomes
// unknown with note as its error, every
// pending entry rejected, and the execution takes e's status, error and
// UpdatedAt (zero: now, written back), and no owner. Else ErrConflict
// (ErrNotFound if there is no such execution). The journal is removed
// once that is committed.
func (s *Store) RecoverExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, owner, note string) (err error) {
	if err := sc.CheckStatus(e.Status); err != nil {
		return fmt.Errorf("recover execution %s: %w", e.ID, err)
	}
	journaled, err := s.journals.read(e.ID)
	if err != nil {
		return fmt.Errorf("recover execution %s: %w", e.ID, err)
	}
	t := sc.Stamp(e.UpdatedAt)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recover execution %s: begin: %w", e.ID, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	var status, curOwner string
	err = tx.QueryRowContext(ctx, `SELECT status, owner FROM executions WHERE id = ?`, e.ID).Scan(&status, &curOwner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("recover execution %s: %w", e.ID, codemode.ErrNotFound)
	case err != nil:
		return fmt.Errorf("recover execution %s: %w", e.ID, err)
	case status != from.String() || curOwner != owner:
		return fmt.Errorf("recover execution %s: it is %s owned by %q, not %s owned by %q: %w", e.ID, status, curOwner, from, owner, codemode.ErrConflict)
	}
	if err := s.applyJournal(ctx, tx, journaled, t); err != nil {
		return fmt.Errorf("recover execution %s: apply its journal: %w", e.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE entries SET state = ?, error = ?, updated_at = ? WHERE execution_id = ? AND state IN (?, ?)`,
		codemode.EntryUnknown.String(), note, sc.Nanos(t), e.ID, codemode.EntryExecuting.String(), codemode.EntryWaiting.String()); err != nil {
		return fmt.Errorf("recover execution %s: mark executing entries unknown: %w", e.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE entries SET state = ?, updated_at = ? WHERE execution_id = ? AND state IN (?, ?)`,
		codemode.EntryRejected.String(), sc.Nanos(t), e.ID, codemode.EntryPending.String(), codemode.EntrySignIn.String()); err != nil {
		return fmt.Errorf("recover execution %s: reject pending entries: %w", e.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE executions SET status = ?, error = ?, owner = '', updated_at = ? WHERE id = ?`,
		e.Status.String(), e.Error, sc.Nanos(t), e.ID); err != nil {
		return fmt.Errorf("recover execution %s: %w", e.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recover execution %s: commit: %w", e.ID, err)
	}
	e.Owner, e.UpdatedAt = "", t
	if err := s.journals.drop(e.ID); err != nil {
		s.logger.WarnContext(ctx, "recovered execution's journal not removed", "execution", e.ID, "err", err)
	}
	return nil
}

// applyJournal applies journaled entries in order: an entry the table
// lacks is inserted; an entry it holds executing takes the journaled
// state, result and error; any other is left as it is.
func (s *Store) applyJournal(ctx context.Context, tx *sql.Tx, entries []codemode.Entry, t time.Time) error {
	if len(entries) == 0 {
		return nil
	}
	insert := tx.StmtContext(ctx, s.stmts.insertEntry)
	update := tx.StmtContext(ctx, s.stmts.updateEntry)
	state := func() *sql.Stmt { return tx.StmtContext(ctx, s.stmts.entryState) }
	for _, en := range entries {
		if err := sc.CheckInsert(en); err != nil {
			return err
		}
		err := insertEntry(ctx, insert, en, t)
		if !errors.Is(err, codemode.ErrConflict) {
			if err != nil {
				return err
			}
			continue
		}
		if en.State == codemode.EntryExecuting {
			continue
		}
		err = updateEntry(ctx, update, state, en, codemode.EntryExecuting, t)
		if err != nil && !errors.Is(err, codemode.ErrConflict) {
			return err
		}
	}
	return nil
}
