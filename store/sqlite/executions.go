package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	codemode "github.com/codemode-mcp/codemode-mcp"
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"
)

// CreateExecution inserts e; ErrConflict if the id exists. A zero CreatedAt
// is set to now; UpdatedAt is set to CreatedAt. Both are written back to e.
func (s *Store) CreateExecution(ctx context.Context, e *codemode.Execution) error {
	if e.ID == "" {
		return errors.New("create execution: empty id")
	}
	if err := sc.CheckStatus(e.Status); err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, err)
	}
	created := e.CreatedAt
	if created.IsZero() {
		created = sc.Now()
	}
	args, err := sc.ExecutionValues(e)
	if err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, err)
	}
	once, err := sc.CreateValues(e)
	if err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, err)
	}
	vals := append([]any{e.ID, e.Code}, args...)
	vals = append(append(vals, once...), sc.Nanos(created), sc.Nanos(created))
	_, err = s.stmts.createExecution.ExecContext(ctx, vals...)
	if isPrimaryKeyViolation(err) {
		return fmt.Errorf("create execution %s: %w", e.ID, codemode.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, err)
	}
	e.CreatedAt = sc.FromNanos(sc.Nanos(created))
	e.UpdatedAt = e.CreatedAt
	return nil
}

// GetExecution returns ErrNotFound for an unknown id.
func (s *Store) GetExecution(ctx context.Context, id string) (*codemode.Execution, error) {
	row := s.stmts.getExecution.QueryRowContext(ctx, id)
	e, err := sc.ScanExecution(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("execution %s: %w", id, codemode.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get execution %s: %w", id, err)
	}
	return e, nil
}

// UpdateExecution stores e's status, result, error, logs, connectors,
// clock, owner and UpdatedAt (a zero UpdatedAt is set to now and written back) if
// the stored status is still from, else ErrConflict (ErrNotFound if there
// is no such execution). Code and CreatedAt never change. Whether the move is legal is the runtime's business
// (runtime.TransitionExec), not the store's.
func (s *Store) UpdateExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus) error {
	if err := sc.CheckStatus(e.Status); err != nil {
		return fmt.Errorf("update execution %s: %w", e.ID, err)
	}
	args, err := sc.ExecutionValues(e)
	if err != nil {
		return fmt.Errorf("update execution %s: %w", e.ID, err)
	}
	t := sc.Stamp(e.UpdatedAt)
	res, err := s.stmts.updateExecution.ExecContext(ctx, append(args, sc.Nanos(t), e.ID, from.String())...)
	if err != nil {
		return fmt.Errorf("update execution %s: %w", e.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("update execution %s: %w", e.ID, err)
	} else if n == 0 {
		return s.executionMiss(ctx, e.ID, from)
	}
	e.UpdatedAt = t
	return nil
}

// executionMiss explains why a conditional update touched no row.
func (s *Store) executionMiss(ctx context.Context, id string, from codemode.ExecStatus) error {
	var cur string
	err := s.stmts.executionStatus.QueryRowContext(ctx, id).Scan(&cur)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("update execution %s: %w", id, codemode.ErrNotFound)
	case err != nil:
		return fmt.Errorf("update execution %s: %w", id, err)
	}
	return fmt.Errorf("update execution %s: status is %s, not %s: %w", id, cur, from, codemode.ErrConflict)
}

// ListExecutions returns executions newest first (by CreatedAt, then by
// insertion order).
func (s *Store) ListExecutions(ctx context.Context, f codemode.ExecutionFilter) ([]*codemode.Execution, error) {
	var (
		args                     []any
		tasks, byStatus, limited int
	)
	if f.Tasks {
		tasks = 1
	}
	if f.Status != 0 {
		if err := sc.CheckStatus(f.Status); err != nil {
			return nil, fmt.Errorf("list executions: %w", err)
		}
		byStatus = 1
		args = append(args, f.Status.String())
	}
	if f.Limit > 0 {
		limited = 1
		args = append(args, f.Limit)
	}
	rows, err := s.stmts.listExecutions[tasks][byStatus][limited].QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("list executions: %w", err)
	}
	defer rows.Close()
	out, err := sc.Collect(rows, sc.ScanExecution)
	if err != nil {
		return nil, fmt.Errorf("list executions: %w", err)
	}
	return out, nil
}

// DeleteExecution removes an execution and (by cascade) its log;
// ErrNotFound if absent.
func (s *Store) DeleteExecution(ctx context.Context, id string) error {
	res, err := s.stmts.deleteExecution.ExecContext(ctx, id)
	if err != nil {
		return fmt.Errorf("delete execution %s: %w", id, err)
	}
	return oneRow(res, "delete execution "+id)
}

// PruneExecutions deletes the oldest terminal executions beyond the keep
// newest terminal ones, with their logs; running and paused executions are
// never deleted. It returns how many went. Then it gives some of the space
// of deleted runs back to the file system (reclaim.go).
//
// It runs on every Execute, and usually finds nothing to do: it first
// counts the terminal runs (a read on the (status, created_at) index, no
// write lock) and only deletes when there are more than keep. The count is
// a shortcut, not a guard: the DELETE selects its victims itself, so a run
// finished by another process in between is merely left for the next call.
func (s *Store) PruneExecutions(ctx context.Context, keep int) (int, error) {
	n, err := s.prune(ctx, keep)
	if err == nil {
		s.reclaim(ctx)
	}
	return n, err
}

// prune is PruneExecutions without the reclaiming.
func (s *Store) prune(ctx context.Context, keep int) (int, error) {
	if keep < 0 {
		return 0, fmt.Errorf("prune executions: keep is %d, want >= 0", keep)
	}
	var terminal int
	if err := s.stmts.countTerminal.QueryRowContext(ctx).Scan(&terminal); err != nil {
		return 0, fmt.Errorf("prune executions: count terminal: %w", err)
	}
	if terminal <= keep {
		return 0, nil
	}
	res, err := s.stmts.pruneTerminal.ExecContext(ctx, keep)
	if err != nil {
		return 0, fmt.Errorf("prune executions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("prune executions: %w", err)
	}
	if n > 0 {
		s.logger.DebugContext(ctx, "pruned executions", "deleted", n, "kept", keep)
	}
	return int(n), nil
}
