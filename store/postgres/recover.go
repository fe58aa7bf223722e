package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	codemode "github.com/codemode-mcp/codemode-mcp"
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"
)

// RecoverExecution ends an execution whose owner is gone, in one
// transaction: if its status is still from and its owner is owner (read
// with SELECT … FOR UPDATE, so a second replica recovering at once waits
// and then sees the run ended), every entry still executing or waiting
// for its downstream task becomes unknown with note as its error, every pending entry rejected, and the
// execution takes e's status, error and UpdatedAt (zero: now, written
// back), and no owner. Else ErrConflict (ErrNotFound if there is no such
// execution). This store has no journal: what was logged was committed.
func (s *Store) RecoverExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, owner, note string) (err error) {
	if err := sc.CheckStatus(e.Status); err != nil {
		return fmt.Errorf("recover execution %s: %w", e.ID, err)
	}
	t := sc.Nanos(sc.Stamp(e.UpdatedAt))
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("recover execution %s: begin: %w", e.ID, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreClosed(tx.Rollback(context.WithoutCancel(ctx))))
		}
	}()
	var status, curOwner string
	err = tx.QueryRow(ctx, `SELECT status, owner FROM executions WHERE id = $1 FOR UPDATE`, e.ID).Scan(&status, &curOwner)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("recover execution %s: %w", e.ID, codemode.ErrNotFound)
	case err != nil:
		return fmt.Errorf("recover execution %s: %w", e.ID, err)
	case status != from.String() || curOwner != owner:
		return fmt.Errorf("recover execution %s: it is %s owned by %q, not %s owned by %q: %w", e.ID, status, curOwner, from, owner, codemode.ErrConflict)
	}
	b := &pgx.Batch{}
	b.Queue(`UPDATE entries SET state = $1, error = $2, updated_at = $3 WHERE execution_id = $4 AND state IN ($5, $6)`,
		codemode.EntryUnknown.String(), note, t, e.ID, codemode.EntryExecuting.String(), codemode.EntryWaiting.String())
	b.Queue(`UPDATE entries SET state = $1, updated_at = $2 WHERE execution_id = $3 AND state IN ($4, $5)`,
		codemode.EntryRejected.String(), t, e.ID, codemode.EntryPending.String(), codemode.EntrySignIn.String())
	b.Queue(`UPDATE executions SET status = $1, error = $2, owner = '', updated_at = $3 WHERE id = $4`,
		e.Status.String(), e.Error, t, e.ID)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("recover execution %s: %w", e.ID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("recover execution %s: commit: %w", e.ID, err)
	}
	e.Owner, e.UpdatedAt = "", sc.FromNanos(t)
	return nil
}
